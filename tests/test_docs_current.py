"""The repository speaks of the product as it is: no development diary in the manual, the docs,
the code, the tests or the benchmarks (that history is in git log), a README short enough to be
read as a manual, and local links that lead somewhere.

The forbidden phrases are assembled from pieces so that this file does not match them itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 420

# word boundaries, any case: the diary's words
FORBIDDEN = [
    ("a work period", re.compile(r"\b" + "ses" + r"sions?\b", re.IGNORECASE)),
    ("a discarded attempt", re.compile(r"\b" + "tried" + r"\s+and\s+" + "not" + r"\s+kept\b",
                                       re.IGNORECASE)),
    ("an issue number", re.compile(r"\b" + "iss" + r"ue\s*#?\s*[1-9][0-9]?\b", re.IGNORECASE)),
]


def _files():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for folder in ("spca_cli", "tests", "bench"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return [f for f in files if f.is_file()]


def test_the_scanned_files_are_there():
    names = {f.relative_to(ROOT).as_posix() for f in _files()}
    assert "README.md" in names and "spca_cli/cli.py" in names and "bench/run.py" in names
    assert any(n.startswith("docs/") for n in names)
    assert "tests/test_docs_current.py" in names  # this file is scanned too


def test_no_development_history_in_docs_code_tests_and_benchmarks():
    found = []
    for path in _files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for what, pattern in FORBIDDEN:
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {what}: {line.strip()}")
    assert not found, "\n".join(found)


_ISSUE = "iss" + "ue"  # (built from pieces: this file is checked too)


@pytest.mark.parametrize("text, hits", [
    ("the first " + "ses" + "sion", True), ("Ses" + "sions 4-6", True),
    ("a " + "ses" + "sional musician", False),
    ("Tried " + "and not kept: x", True), ("tried, and kept", False),
    (_ISSUE + " 19", True), (_ISSUE.title() + " #7", True), (_ISSUE + "19", True),
    (_ISSUE + " " + str(10 ** 2), False), ("an " + _ISSUE + " of memory", False),
    ("t" + _ISSUE + " 12", False),
])
def test_the_patterns_catch_what_they_should(text, hits):
    assert any(p.search(text) for _, p in FORBIDDEN) is hits


def test_readme_is_a_manual_not_a_diary():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", ["README.md", *sorted(p.name for p in (ROOT / "docs")
                                                       .glob("*.md"))])
def test_local_links_lead_to_files(page):
    path = ROOT / page if page == "README.md" else ROOT / "docs" / page
    missing = []
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))  # examples of output are not links
    for target in _LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        if not (path.parent / target).exists():
            missing.append(target)
    assert not missing, f"{page} links to missing files: {missing}"
