"""The pages as a browser shows them: headless Chromium renders ``spca topics --format html``
(the bundled KOS sample; the airline tweets ``--by airline``) and ``spca daily``'s index.html
(days of the airline tweets) at a desktop's width (1280 px) and a phone's (390 px).

For each: a screenshot of the asked size that is not blank, and the DOM after layout, read back
through a copy of the page with a small probe script at its end (the pages themselves have no
script): the charts and tables are there and take room, and the page is no wider than the
window, so nothing scrolls sideways. Chromium is Debian's package; without it these tests skip.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from _cli import spca
from _html_pages import unresolved_anchors
from conftest import REPO

KOS = REPO / "data_samples" / "docword.kos-sample.txt.gz"
TITLES = REPO / "data_samples" / "titles.kos-sample.txt"
WIDTHS = (1280, 390)
HEIGHT = 2000
BROWSER_SECONDS = 120
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def _chromium():
    found = shutil.which("chromium")
    if found is None and os.access("/usr/bin/chromium", os.X_OK):
        found = "/usr/bin/chromium"
    return found


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed: apt-get "
                                "install chromium (Debian) to run the page screenshot tests")


def _browse(page, width, *extra):
    """Run headless Chromium on ``page`` in a window ``width`` x HEIGHT with a profile of its
    own; its standard output."""
    with tempfile.TemporaryDirectory(prefix="spca-chromium-") as profile:
        done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}",
                               f"--window-size={width},{HEIGHT}", *extra, page.as_uri()],
                              capture_output=True, text=True, timeout=BROWSER_SECONDS,
                              stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


_PROBE = """<script>
(function () {
  var root = document.documentElement, seen = {};
  SELECTORS.forEach(function (selector) {
    var all = document.querySelectorAll(selector), shown = 0;
    all.forEach(function (el) {
      var box = el.getBoundingClientRect();
      if (box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== "hidden") shown++;
    });
    seen[selector] = [all.length, shown];
  });
  var wide = [];
  document.querySelectorAll("body *").forEach(function (el) {
    if (el.getBoundingClientRect().right > root.clientWidth + 0.5 && !el.closest(".scroll"))
      wide.push(el.tagName.toLowerCase() + "." + el.className);
  });
  var wrapped = [];  // a date laid out on more than one line: taller than 1.5 lines
  document.querySelectorAll(".date").forEach(function (el) {
    var style = getComputedStyle(el), line = parseFloat(style.lineHeight);
    if (!(line > 0)) line = 1.2 * parseFloat(style.fontSize);
    if (el.getBoundingClientRect().height > 1.5 * line) wrapped.push(el.textContent);
  });
  parent.postMessage(JSON.stringify({scrollWidth: root.scrollWidth,
                                     clientWidth: root.clientWidth, seen: seen,
                                     wide: wide.slice(0, 10), wrapped: wrapped}), "*");
})();
</script>
"""

# A browser window is at least 500 px wide, so the phone's width is a frame of that width in
# a wrapper page; the probe in the frame posts what it measured to the wrapper, which writes it
# where --dump-dom shows it (the virtual time budget lets that message arrive first).
_WRAPPER = """<!DOCTYPE html><html><body style="margin:0">
<iframe src="PAGE" style="width:WIDTHpx;height:HEIGHTpx;border:0"></iframe>
<pre id="layout-probe">no message</pre>
<script>addEventListener("message", function (e) {
  document.getElementById("layout-probe").textContent = e.data; });</script>
</body></html>
"""


def _layout(page, width, selectors):
    """What the probe measured on a copy of ``page`` laid out ``width`` px wide."""
    probe = _PROBE.replace("SELECTORS", json.dumps(selectors))
    copy = page.with_name(f"probe-{page.name}")
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", probe + "</body>"),
                    encoding="utf-8")
    wrapper = page.with_name(f"probe-{width}-wrapper.html")
    wrapper.write_text(_WRAPPER.replace("PAGE", copy.name).replace("WIDTH", str(width))
                       .replace("HEIGHT", str(HEIGHT)), encoding="utf-8")
    dom = _browse(wrapper, max(WIDTHS), "--virtual-time-budget=10000", "--dump-dom")
    found = re.search(r'<pre id="layout-probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    return json.loads(html.unescape(found.group(1)))


def _check_screenshot(page, width, tmp_path):
    from PIL import Image  # matplotlib's dependency: the plot extra that make test installs

    shot = tmp_path / f"{page.stem}-{width}.png"
    _browse(page, width, f"--screenshot={shot}")
    with Image.open(shot) as image:
        assert image.size == (width, HEIGHT)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    # text, bars and charts: many colours (None: more than the count asked for)
    assert colours is None or len(colours) > 20


def _check_page(page, selectors, tmp_path):
    assert unresolved_anchors(page.read_text(encoding="utf-8")) == []
    for width in WIDTHS:
        _check_screenshot(page, width, tmp_path)
        layout = _layout(page, width, selectors)
        assert layout["clientWidth"] == width
        # no sideways scroll of the page: wide tables scroll inside their own box
        assert layout["scrollWidth"] <= layout["clientWidth"], layout["wide"]
        for selector, (count, shown) in layout["seen"].items():
            assert count > 0 and shown == count, (width, selector, count, shown)
        assert layout["wrapped"] == [], (width, layout["wrapped"])


@pytest.fixture(scope="module")
def topics_page(tmp_path_factory):
    path = tmp_path_factory.mktemp("topics") / "topics.html"
    result = spca("topics", KOS, "--titles", TITLES, "-k", "8", "-c", "3", "--solver", "tpower",
                  "-o", path, "-q")
    assert result.exit_code == 0, result.output
    return path


def test_the_topics_page_in_a_browser(topics_page, tmp_path):
    _check_page(topics_page, ["header dl.facts", "nav a", "section.topic", "table.bars",
                              "svg.bar", ".certificate", ".coherence", ".coverage", "ol.docs li",
                              "#legend"], tmp_path)


@pytest.fixture(scope="module")
def groups_page(airline_csv_path, tmp_path_factory):
    path = tmp_path_factory.mktemp("groups") / "groups.html"
    result = spca("topics", airline_csv_path, "--by", "airline", "-k", "6", "-c", "2",
                  "--budget", "0", "-o", path, "-q")
    assert result.exit_code == 0, result.output
    return path


def test_the_groups_page_in_a_browser(groups_page, tmp_path):
    """Six airlines: each a section with its topics and its distinctive words."""
    page = groups_page.read_text(encoding="utf-8")
    assert len(re.findall(r'<section class="group" id="group-\d+">', page)) == 6
    _check_page(groups_page, ["header dl.facts", "nav a", "section.group", "section.topic",
                              "table.bars", "svg.bar", ".certificate", ".coherence",
                              "table.distinctive", "ol.docs li", "#legend"], tmp_path)


@pytest.fixture(scope="module")
def daily_index(airline_csv_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("daily")
    result = spca("daily", airline_csv_path, "--out", out, "--from", "2015-02-17", "--to",
                  "2015-02-24", "--timezone", "America/Los_Angeles", "-k", "6", "-c", "4",
                  "--budget", "0", "-q")
    assert result.exit_code == 0, result.output
    return out / "index.html"


@pytest.fixture(scope="module")
def airline_csv_path():
    from conftest import dataset_paths

    return Path(dataset_paths("airline")[0])


def test_the_daily_index_in_a_browser(daily_index, tmp_path):
    """Eight days of airline tweets: every topic followed has its row (and its anchor), the
    chart sums the rest as "other", no date wraps at 1280 px or on a phone."""
    from spca_cli.trends import follow_topics

    page = daily_index.read_text(encoding="utf-8")
    reports = [json.loads(p.read_text(encoding="utf-8"))
               for p in sorted(daily_index.parent.glob("2015-02-*.json"))]
    assert len(reports) == 8
    tracks, _ = follow_topics(reports)
    rows = re.findall(r'<tr id="t(\d+)"', page)
    assert sorted(map(int, rows)) == list(range(1, len(tracks) + 1))
    assert "other" in page  # more topics than the chart draws: the rest summed
    folder = daily_index.parent
    assert all((folder / name).is_file()
               for name in re.findall(r'href="([^"#][^"]*)"', page))
    _check_page(daily_index, ["#chart img", "table.tracks tr[id]", "svg.spark", "table.days",
                              "section.day", "table.bars", "ol.docs li"], tmp_path)
