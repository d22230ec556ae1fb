"""Writing systems the word pattern alone gets wrong: combining marks, and scripts written
without spaces between words.

Python's ``re`` counts only letters, digits and '_' as word characters (``\\w``), so the vowel
signs and tone marks of Thai, Devanagari or Arabic (Unicode categories Mn/Mc/Me) would split a
word in two. :func:`mark_class` lists the combining marks of the Basic Multilingual Plane (those
of every widely written script), from :mod:`unicodedata`, for the token pattern's character
class. Marks beyond it (historic scripts, Adlam, variation selectors) are left out on purpose:
a class with code points above U+FFFF is matched by a range scan instead of a bitmap, which
made the whole tokenizer 40% slower on the airline tweets; with BMP marks only it runs at the
speed of the 2013 pattern.

Thai, Lao, Khmer, Myanmar, Chinese and Japanese are written without spaces, so a run of them is
a phrase or a sentence, not a word. :class:`Segmenter` cuts Thai, Chinese and Japanese runs
into words with Google's BudouX models (its Thai, Simplified Chinese and Japanese parsers ship
inside the package). BudouX has no model for Lao, Khmer or Myanmar: their runs are kept as one
word up to :data:`UNSEGMENTED_MAX` characters (a word or two) and dropped beyond, counted so the
reader can say so in one line.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["mark_class", "no_space_search", "no_space_runs", "Segmenter", "UNSEGMENTED_MAX",
           "MIN_PIECE"]

# Longest run of Lao, Khmer or Myanmar (no segmenter) kept as one word.
UNSEGMENTED_MAX = 12
# Segmented Thai/Chinese/Japanese words are kept from this many characters: most Chinese words
# are two characters, which --min-length 3 (a rule for space-separated words) would drop.
MIN_PIECE = 2

# Unicode blocks of the scripts written without spaces (only their letters and marks are used).
_BLOCKS = {
    "thai": [(0x0E00, 0x0E7F)],
    "cjk": [(0x3005, 0x3007), (0x3040, 0x30FF), (0x31F0, 0x31FF), (0x3400, 0x4DBF),
            (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x20000, 0x3134F)],
    "other": [(0x0E80, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF)],  # Lao, Myanmar, Khmer
}
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")


def _ranges(codepoints):
    """[(first, last)] of consecutive runs in a sorted list of code points."""
    out = []
    for c in codepoints:
        if out and c == out[-1][1] + 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def _as_class(ranges):
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
                   for a, b in ranges)


@functools.lru_cache(maxsize=None)
def mark_class():
    """The combining marks (categories Mn, Mc, Me) of the Basic Multilingual Plane, as the body
    of a regex character class (a scan of 65,536 code points, about 0.02 s once a process)."""
    marks = (c for c in range(0x10000) if unicodedata.category(chr(c))[0] == "M")
    return _as_class(_ranges(marks))


@functools.lru_cache(maxsize=None)
def _script_class(name):
    """The letters and marks of one group of :data:`_BLOCKS` as a class body (the CJK blocks
    are 250,000 code points: scanned once a process, not for every pattern built from them)."""
    keep = (c for lo, hi in _BLOCKS[name] for c in range(lo, hi + 1)
            if unicodedata.category(chr(c))[0] in "LM")
    return _as_class(_ranges(keep))


@functools.lru_cache(maxsize=None)
def no_space_search():
    """The compiled search for a character of the blocks of the scripts written without spaces,
    in the Basic Multilingual Plane.

    It is what every chunk pays, so it is kept to a few block ranges (a bitmap to ``re``) and
    built without scanning code points; a hit only selects the slower pattern of
    :func:`no_space_runs`, which then matches letters and marks exactly. Han characters beyond
    U+FFFF (rare) alone in a chunk are not looked for.
    """
    blocks = [span for spans in _BLOCKS.values() for span in spans if span[1] < 0x10000]
    return re.compile("[" + _as_class(sorted(blocks)) + "]")


@functools.lru_cache(maxsize=None)
def no_space_runs():
    """Regex alternatives matching one run of each script without spaces (its letters and
    marks exactly). Built on the first chunk that holds such a script: the scan of their
    300,000 code points costs about 0.08 s, which text without them does not pay."""
    return "|".join(f"[{_script_class(name)}]+" for name in ("thai", "cjk", "other"))


class Segmenter:
    """Cut a run of one script without spaces into words.

    BudouX's parsers are loaded on first use (only corpora with such text pay for them).
    ``dropped`` counts the Lao/Khmer/Myanmar runs longer than :data:`UNSEGMENTED_MAX`.

    Examples
    --------
    >>> Segmenter()("航班延误了三个小时")
    ['航班', '延误', '了', '三', '个', '小时']
    """

    def __init__(self):
        self._parsers = {}
        self.dropped = 0

    # the script classes are built on first use: most corpora never need them
    @functools.cached_property
    def _thai(self):
        return re.compile(f"[{_script_class('thai')}]")

    @functools.cached_property
    def _cjk(self):
        return re.compile(f"[{_script_class('cjk')}]")

    @functools.cached_property
    def _parts(self):
        others = "".join(_script_class(name) for name in _BLOCKS)
        return re.compile(f"({no_space_runs()})|[^{others}]+")

    def _parser(self, name):
        if name not in self._parsers:
            import budoux

            load = {"th": budoux.load_default_thai_parser,
                    "ja": budoux.load_default_japanese_parser,
                    "zh": budoux.load_default_simplified_chinese_parser}[name]
            self._parsers[name] = load()
        return self._parsers[name]

    def __call__(self, run):
        """The words of ``run`` (one script, as :func:`no_space_runs` matched it)."""
        first = run[:1]
        if self._thai.match(first):
            return self._parser("th").parse(run)
        if self._cjk.match(first):
            return self._parser("ja" if _KANA.search(run) else "zh").parse(run)
        if len(run) <= UNSEGMENTED_MAX:
            return [run]
        self.dropped += 1
        return []

    def split_token(self, token):
        """A word-pattern token with no-space script inside ("iphone发布会") as its parts:
        the other letters stay one word, each run of the script is segmented."""
        out = []
        for match in self._parts.finditer(token):
            out.extend(self(match.group()) if match.group(1) else [match.group()])
        return out
