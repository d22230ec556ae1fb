"""Stop lists (``--stopwords english,spanish,extra.txt``) and the English apostrophe rules.

A specification is a comma-separated list of names and files whose words are united:

- ``english``: scikit-learn's English list (the 2013 paper's), with the apostrophe rules of
  :func:`english_form` (contractions of stop words dropped, possessive 's stripped);
- ``english-2013``: the same list with tokens exactly as the paper's recipe made them (no
  apostrophe rules, and the typographic apostrophe ’ not read as '), which reproduces the
  published airline matrix entry for entry;
- any other language the ``stop-words`` package ships (``spanish``, ``french``, ``german``,
  ``hindi``, ``arabic``, ``chinese``, ``japanese``, ... or their ISO 639-1 codes ``es``,
  ``fr``, ...);
- ``thai`` (``th``), which that package lacks: stopwords-iso's list
  (:mod:`spca_cli.corpus.thai_stopwords`). Of the scripts the tokenizer cuts into words
  (:mod:`spca_cli.corpus.scripts`: Thai, Chinese, Japanese), every one has a list;
- a UTF-8 file with one word per line;
- ``none`` (alone): no stop words.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from spca_cli.corpus._io import read_all
from spca_cli.errors import Name, SpcaInputError, SpcaParameterError

__all__ = ["StopList", "resolve_stopwords", "english_form", "language_names", "english_stop_words"]

_ENGLISH = ("english", "en")
_ENGLISH_2013 = "english-2013"
# The clitic of a contraction and the word it stands for. A contraction whose other part is a
# stop word is dropped: "i'm", "you're", "we've", "they'll", "i'd", "it's", "that's".
_CLITICS = ("'re", "'ve", "'ll", "'d", "'m")


@dataclass(frozen=True)
class StopList:
    """The resolved ``--stopwords``: its words and which token rules it switches on.

    Attributes
    ----------
    words : frozenset of str
    english_rules : bool
        Apply :func:`english_form` to every token (an ``english`` list was named).
    unify_apostrophes : bool
        Read ’ as ' before tokenising (off only with ``english-2013``).
    spec : str
        As given.
    """

    words: frozenset
    english_rules: bool = False
    unify_apostrophes: bool = True
    spec: str = "none"


def english_form(token, stopwords):
    """The token the English rules make of ``token`` ('' = drop it).

    - ``X's``: dropped when X is a stop word ("it's", "that's", "what's": X is / X has), else the
      possessive is stripped ("fleet's" -> "fleet").
    - ``Xn't``: always dropped: X is an auxiliary verb ("don't", "didn't", "can't", "won't"),
      and the pair means "X not", two function words.
    - ``X're``, ``X've``, ``X'll``, ``X'd``, ``X'm``: dropped when X is a stop word
      ("you're", "i've", "we'll", "i'd", "i'm"), else kept as written.

    Examples
    --------
    >>> [english_form(t, english_stop_words()) for t in ["i'm", "didn't", "fleet's", "flight"]]
    ['', '', 'fleet', 'flight']
    """
    if "'" not in token:
        return token
    if token.endswith("'s"):
        base = token[:-2]
        return "" if base in stopwords else base
    if token.endswith("n't"):
        return ""
    for clitic in _CLITICS:
        if token.endswith(clitic):
            return "" if token[:-len(clitic)] in stopwords else token
    return token


#: the lists spca ships for languages the stop-words package lacks, by name and ISO code
_OWN_LISTS = {"thai": "th"}


def language_names():
    """The language names ``--stopwords`` knows, sorted."""
    from stop_words import AVAILABLE_LANGUAGES

    return sorted({*AVAILABLE_LANGUAGES, *_OWN_LISTS, _ENGLISH_2013})


def _own_words(name):
    """The words of a list spca ships (:data:`_OWN_LISTS`), or None."""
    if name in _OWN_LISTS or name in _OWN_LISTS.values():
        from spca_cli.corpus.thai_stopwords import THAI_STOP_WORDS

        return set(THAI_STOP_WORDS)
    return None


@functools.lru_cache(maxsize=1)
def english_stop_words():
    """scikit-learn's English stop list (``ENGLISH_STOP_WORDS``), read from the module that holds
    it without importing the scikit-learn package: that import (scipy.stats, and pandas when
    installed) took 1.2-1.6 s, more than half of every CLI start and more than a small daily run.
    The module is a frozenset literal with no imports; if it ever moves, the package import is
    the fallback, so the list is always scikit-learn's own."""
    try:
        spec = importlib.util.find_spec("sklearn")  # a top-level spec: nothing is imported
        path = Path(spec.submodule_search_locations[0]) / "feature_extraction" / "_stop_words.py"
        module_spec = importlib.util.spec_from_file_location("_spca_sklearn_stop_words", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        words = module.ENGLISH_STOP_WORDS
        if isinstance(words, frozenset) and len(words) > 100:
            return words
    except (ImportError, OSError, AttributeError, TypeError, IndexError, SyntaxError):
        pass
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return ENGLISH_STOP_WORDS


def _language_words(name):
    """The stop words of language ``name`` (or ISO code) from the stop-words package, or None."""
    from stop_words import AVAILABLE_LANGUAGES, LANGUAGE_MAPPING, get_stop_words

    language = LANGUAGE_MAPPING.get(name, name)
    if language not in AVAILABLE_LANGUAGES:
        return _own_words(name)
    return {w.lower().replace("’", "'") for w in get_stop_words(language)}


def _file_words(item):
    try:
        text = read_all(item).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpcaInputError(item, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise SpcaInputError(item, f"cannot read the stop word file ({exc.strerror})") from None
    return {w.strip().lower().replace("’", "'") for w in text.splitlines() if w.strip()}


def resolve_stopwords(spec):
    """The :class:`StopList` of a ``--stopwords`` specification (None means ``none``).

    Raises
    ------
    SpcaInputError
        A named file cannot be read, or an item is neither a known name nor a file.
    SpcaParameterError
        ``none`` together with other lists, or an empty item.
    """
    if spec is None:
        return StopList(frozenset())
    items = [item.strip() for item in str(spec).split(",")]
    if any(not item for item in items):
        raise SpcaParameterError([Name("stopwords"), f" {spec!r}: an empty item between commas"])
    if items == ["none"]:
        return StopList(frozenset(), spec="none")
    if "none" in items:
        raise SpcaParameterError([Name("stopwords"), f" {spec!r}: 'none' cannot be combined "
                                                 "with lists"])
    words, english, legacy = set(), False, False
    for item in items:
        name = item.lower()
        if name in _ENGLISH or name == _ENGLISH_2013:
            words |= english_stop_words()
            english |= name != _ENGLISH_2013
            legacy |= name == _ENGLISH_2013
            continue
        # a list name wins over a file of the same name (write ./spanish for the file)
        language = _language_words(name)
        if language is not None:
            words |= language
            continue
        if os.path.isfile(item):
            words |= _file_words(item)
            continue
        if os.sep in item or "." in item or os.path.exists(item):
            raise SpcaInputError(item, "stop word file not found (use english, none, a "
                                       "language name or a FILE)")
        raise SpcaInputError(item, "neither a stop list nor a file; the lists are none, "
                                   + ", ".join(language_names()))
    return StopList(frozenset(words), english_rules=english, unify_apostrophes=not legacy,
                    spec=str(spec))
