"""Reading an HTML page in tests: its ids, links, resources, exact figures and visible text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class PageParts:
    ids: list = field(default_factory=list)
    hrefs: list = field(default_factory=list)
    srcs: list = field(default_factory=list)
    tags: list = field(default_factory=list)
    #: class of a ``<data>`` element -> the exact values it carries, in page order
    data: dict = field(default_factory=dict)
    text: str = ""


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts = PageParts()
        self._texts = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.parts.tags.append(tag)
        if "id" in attrs:
            self.parts.ids.append(attrs["id"])
        if "href" in attrs:
            self.parts.hrefs.append(attrs["href"])
        if "src" in attrs:
            self.parts.srcs.append(attrs["src"])
        if tag == "data":
            self.parts.data.setdefault(attrs.get("class"), []).append(float(attrs["value"]))
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False
        if tag in ("p", "li", "tr", "td", "th", "dd", "dt", "div", "h1", "h2", "h3", "br"):
            self._texts.append(" ")

    def handle_data(self, data):
        if not self._in_style:
            self._texts.append(data)


def page_parts(page):
    """The parts of ``page`` tests look at; its text with runs of spaces made one."""
    collector = _Collector()
    collector.feed(page)
    collector.close()
    collector.parts.text = " ".join("".join(collector._texts).split())
    return collector.parts


def network_loads(page):
    """Every place ``page`` would fetch something from the network: a src or href to an http(s)
    or protocol-relative address, a stylesheet link, a CSS import or url()."""
    parts = page_parts(page)
    found = [a for a in parts.srcs + parts.hrefs if re.match(r"\s*(https?:)?//", a, re.I)]
    found += [m.group(0) for m in re.finditer(r"<link\b[^>]*>|@import|url\(", page, re.I)]
    return found


def unresolved_anchors(page):
    """The ``href="#x"`` of ``page`` that no element's id ``x`` answers."""
    parts = page_parts(page)
    ids = set(parts.ids)
    return [h for h in parts.hrefs if h.startswith("#") and h[1:] not in ids]
