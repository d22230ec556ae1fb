"""The 2013 paper's tokenising recipe, in scikit-learn's ``CountVectorizer`` conventions run by
Python's ``re``, and the streaming vocabulary that turns token lists into a sparse document-word matrix chunk by chunk.

The recipe (SPEC, "Inputs"): lower-case, drop URLs and @mentions, keep hashtag words without
'#' (all three inside the token pattern, see :class:`Tokenizer`), keep tokens of at least
``min_length`` characters that start with a letter (apostrophes and combining marks inside a
word are kept, so "don't" and "a320's" are one token each), drop stop words, drop words found
in fewer than ``min_count`` documents, then weight (binary by default). With
``--stopwords english-2013`` this gives exactly the published ``matrices/airline.mtx`` on the
airline tweets (less the word 'amp', as we unescape ``&amp;``); the default ``english`` also
applies the apostrophe rules of :mod:`spca_cli.corpus.stopwords`.

Counting a chunk of unigrams takes its ASCII pieces through a numba kernel that emulates the
pattern over the chunk's bytes (:mod:`spca_cli.kernels.tokens`, :class:`_ByteTokens`); the
other pieces, and chunks of a script written without spaces, through Python's ``re`` (tests
compare the two on arbitrary text). Stop words (and the apostrophe rules) are applied to
tokens as they are read, through a cached map (:class:`_Forms`), because n-grams must be
formed after they are gone; ``min_count`` is applied to whole columns as the parts of a
read are merged (:func:`merge_parts`), or once the corpus is read (:func:`filter_words`,
after a ``contains`` filter, and where the stop words of an already tokenised input, UCI
or a saved corpus, are removed).
"""

from __future__ import annotations

import functools
import logging
import re
from itertools import chain

import numpy as np
import scipy.sparse as sp

from spca_cli.corpus.kinds import WEIGHTINGS
from spca_cli.corpus.scripts import (MIN_PIECE, Segmenter, mark_class, no_space_runs,
                                     no_space_search)
from spca_cli.corpus.stopwords import StopList, english_form, resolve_stopwords
from spca_cli.errors import Name, SpcaParameterError
from spca_cli.kernels import unsigned_positions
from spca_cli.kernels.counts import count_rows, kept_lengths, merge_rows, word_documents
from spca_cli.kernels.tokens import new_table, scan_chunk

__all__ = [
    "Tokenizer",
    "make_analyzer",
    "VocabularyBuilder",
    "merge_parts",
    "read_stopwords",
    "parse_ngram_range",
    "filter_words",
    "apply_weighting",
    "WEIGHTINGS",
]

logger = logging.getLogger(__name__)

# Documents of a chunk are joined with this character and tokenised as one string; the token
# pattern matches it as a token of its own, so each document's tokens stay apart.
SEPARATOR = "\x1e"
# URLs (with or without a scheme) and @mentions are matched by the token pattern *without* a
# capturing group, so they come out as the empty token '' and are dropped; they are consumed
# whole, so no word inside them survives. '#' is not a word character, so the word of a hashtag
# is a token by itself.
_DROPPED = r"(?:https?://|www\.)\S*|@\w+"
# The piece path (:meth:`Tokenizer.tokenize_chunk`) joins documents with this marker between
# two spaces: ``str.split`` treats SEPARATOR (an ASCII record separator) as whitespace, so the
# boundary needs a character it keeps as a piece of its own.
_MARK = "\x00"
# Distinct pieces one tokenizer remembers before it starts again: URLs and numbers are mostly
# unique, so an unbounded cache would grow with the corpus (see :class:`_Pieces`).
PIECE_CACHE_MAX = 100_000
# Pieces longer than this are tokenised but not remembered: they hardly repeat (blobs, minified
# text, long URLs), and remembering them would keep up to PIECE_CACHE_MAX of them whole (4,000
# documents of one 5,000-character piece held 20 MB of text, about 80 MB of memory).
PIECE_CACHE_LENGTH = 64


def token_pattern(min_length=3):
    """The regular expression of one token: a letter, then letters, combining marks, digits,
    '_' or "'".

    Combining marks (Thai vowel signs, Devanagari matras, Arabic harakat) are part of a word:
    Python's ``\\w`` leaves them out, so they are added from :func:`mark_class`. The trailing
    ``(?<!')`` makes the regex give back a trailing apostrophe ("flights'" -> "flights").
    """
    if min_length < 1:
        raise SpcaParameterError([Name("min_length"), f" must be at least 1, got {min_length}"])
    return r"(?u)\b[^\W\d_][\w'%s]{%d,}(?<!')" % (mark_class(), min_length - 1)


def _chunk_pattern(min_length, no_space=False):
    """The chunk pattern; with ``no_space`` a run of a script without spaces (Thai, Chinese,
    Japanese, ...) is one match of its own, and a word may start right after one."""
    word = token_pattern(min_length)[len("(?u)"):]
    if not no_space:
        return r"(?u)%s|(%s|%s)" % (_DROPPED, SEPARATOR, word)
    # \b would not see a word start after a Han or Thai letter (both are \w)
    word = r"(?<![^\W%s])" % no_space_search().pattern[1:-1] + word[len(r"\b"):]
    return r"(?u)%s|(%s|%s|%s)" % (_DROPPED, SEPARATOR, no_space_runs(), word)


def parse_ngram_range(value):
    """``"1-2"`` / ``"2"`` / ``(1, 2)`` -> (1, 2), checked: 1 <= low <= high."""
    if isinstance(value, str):
        parts = value.strip().split("-")
        try:
            numbers = [int(p) for p in parts]
        except ValueError:
            numbers = []
        if len(numbers) not in (1, 2):
            raise SpcaParameterError([Name("ngrams"), " must be N or MIN-MAX (e.g. 1-2), got "
                                      f"{value!r}"])
        value = (numbers[0], numbers[-1])
    low, high = (int(v) for v in value)
    if not 1 <= low <= high:
        raise SpcaParameterError([Name("ngrams"), f" must satisfy 1 <= MIN <= MAX, got {low}-{high}"])
    return low, high


class _Forms(dict):
    """token -> the token kept ('' = dropped): stop words out, English apostrophe rules.

    Each distinct token is worked out once (``__missing__``); mapping a chunk is then one
    C-level ``map`` over a dict, as cheap as the vocabulary lookup itself.
    """

    def __init__(self, stoplist, min_length):
        super().__init__({SEPARATOR: SEPARATOR, "": ""})
        self.words = stoplist.words
        self.english = stoplist.english_rules
        self.min_length = min_length

    def __missing__(self, token):
        form = token
        if self.english:
            form = english_form(token, self.words)
            if form != token and len(form) < self.min_length:
                form = ""  # "ab's" -> "ab", shorter than any token
        if form in self.words:
            form = ""
        self[token] = form
        return form


class _PieceCache(dict):
    """A whitespace-separated piece -> what it stands for, bounded: at ``limit`` entries the
    cache starts again, which bounds its memory whatever the corpus size (the frequent pieces
    are back after a few thousand documents), and a piece over :data:`PIECE_CACHE_LENGTH`
    characters is worked out but not kept. The piece :data:`_MARK` stands for a document
    boundary and is always there."""

    def __init__(self, boundary, limit):
        super().__init__()
        self.boundary = boundary
        self.limit = limit
        self._start()

    def _start(self):
        """Empty but for the document boundary."""
        self.clear()
        self[_MARK] = self.boundary

    def _kept(self, piece, value):
        if len(piece) <= PIECE_CACHE_LENGTH:
            if len(self) >= self.limit:
                self._start()
            self[piece] = value
        return value


class _Pieces(_PieceCache):
    """A piece of lower-cased text -> the tuple of its kept tokens.

    The chunk pattern's matches never hold whitespace (a URL is ``\\S*``, a mention ``@\\w+``, a
    word letters, marks, digits and apostrophes) and a ``\\b`` or look-behind at a piece's start
    sees whitespace or the string's start alike, so the tokens of a text are those of its
    pieces in order. Pieces repeat as words do (Zipf), so most cost one C-level dict lookup; a
    new one runs the pattern and :class:`_Forms` (``__missing__``).
    """

    def __init__(self, findall, forms, min_length, limit=PIECE_CACHE_MAX):
        self.findall = findall
        self.forms = forms
        self.min_length = min_length
        super().__init__((SEPARATOR,), limit)

    def __missing__(self, piece):
        if piece.isalpha():
            # letters only (a subset of \w, none a digit): the pattern would match it whole
            tokens = (piece,) if len(piece) >= self.min_length else ()
        else:
            tokens = self.findall(piece)
        if self.forms is not None:
            tokens = map(self.forms.__getitem__, tokens)
        # '' is a dropped URL, mention or stop word
        return self._kept(piece, tuple(filter(None, tokens)))

    def tokens(self, pieces):
        """The kept tokens of ``pieces``, in order, as one list."""
        return list(chain.from_iterable(map(self.__getitem__, pieces)))


class _PieceIds(_PieceCache):
    """A piece -> a code for the vocabulary ids of its kept tokens, for one
    :class:`VocabularyBuilder`: the id itself for a piece of one token (most are), id 1 (the
    empty token, dropped) for a piece of none, and -1 - i for a piece of several, whose ids
    are ``self.several[i]`` (:meth:`expand`). It serves the pieces :class:`_ByteTokens` leaves
    to Python (those with non-ASCII text).

    The pieces' ids are then one C-level pass over them, without a list of token strings and
    without a second lookup of each token (read_corpus of 250,000 generated tweets spent 0.64 s
    in that lookup and 1.15 s building the token list, of 4.0 s, when every piece came this
    way). A new piece takes its tokens from the tokenizer's :class:`_Pieces` and gives each
    new token the next id; bounded like :class:`_Pieces` (ids of the vocabulary never change, so
    an entry dropped and made again comes back equal).
    """

    def __init__(self, vocab, piece_tokens, limit=PIECE_CACHE_MAX):
        self.vocab = vocab
        self.piece_tokens = piece_tokens
        self.several = []
        super().__init__(vocab[SEPARATOR], limit)

    def __missing__(self, piece):
        ids = tuple(map(self.vocab.__getitem__, self.piece_tokens[piece]))
        if len(ids) == 1:
            return self._kept(piece, ids[0])
        if not ids:
            return self._kept(piece, self.vocab[""])
        code = -1 - len(self.several)
        self.several.append(ids)
        return self._kept(piece, code)

    def codes(self, pieces):
        """One code per piece of ``pieces`` (an id, 1, or -1 - i for the ids
        ``self.several[i]``), by a plain C-level map into an int array (a tuple per piece and
        their chain took 0.94 s instead of 0.56 s for the 5.3M pieces of 250,000 generated
        tweets); :meth:`expand` splices in the rare pieces of several tokens."""
        if len(self.several) > self.limit:
            # bounded like the cache, and only here: no code handed out is pending (a restart of
            # the cache during the map below keeps the list, so every code read stays valid)
            self._start()
            self.several = []
        return np.fromiter(map(self.__getitem__, pieces), dtype=np.int64, count=len(pieces))

    def expand(self, codes):
        """``codes`` with each code of several ids (< 0) replaced by those ids (a longer array
        then; ``codes`` itself when there is none)."""
        several = np.flatnonzero(codes < 0)
        if several.size == 0:
            return codes
        tuples = [self.several[-1 - int(code)] for code in codes[several]]
        lengths = np.ones(codes.size, dtype=np.int64)
        lengths[several] = [len(t) for t in tuples]
        ids = np.repeat(codes, lengths)
        starts = np.cumsum(lengths) - lengths
        for start, values in zip(starts[several].tolist(), tuples):
            ids[start:start + len(values)] = values
        return ids


class _ByteTokens:
    """The ids of a lower-cased chunk's kept tokens for one :class:`VocabularyBuilder`, its ASCII
    pieces tokenised by :func:`~spca_cli.kernels.tokens.scan_chunk` over the chunk's UTF-8
    bytes, its other pieces by the builder's :class:`_PieceIds` (Python's pattern).

    The kernel numbers tokens in a hash table of its own; each new number is named here once
    (the token's form under the stop words and English rules, :class:`_Forms`, then its
    vocabulary id), so a chunk's ids are one gather. On a range of 250,000 generated tweets
    (ASCII) splitting and looking up 5.3M pieces in Python took 0.28 + 1.23 s of its 2.35 s
    (the first chunk, all misses, 0.57 s of it); the kernel takes 0.09-0.10 s per chunk of
    50,000 (7.5 MB), 0.04 s of it cutting and hashing, the rest the table's lookups, and the
    range 1.45-1.65 s in all. Documents with non-ASCII text keep their ASCII
    pieces on this path.
    """

    def __init__(self, vocab, forms, min_length, piece_ids):
        self.vocab = vocab
        self.forms = forms
        self.min_length = min_length
        self.piece_ids = piece_ids
        self.table = new_table()
        self.n_tokens = 0
        # code -> vocabulary id: 0 (document boundary) and 1 (dropped) stand for themselves,
        # token number t is code t + 2
        self.id_of = np.arange(1 << 15, dtype=np.int64)

    def ids(self, text):
        """The id stream of ``text`` (a chunk as :meth:`Tokenizer._lowered` makes it): 0
        between documents, 1 where a piece kept no token, as the pattern would give them."""
        # (a lone surrogate, half of an emoji in JSON, survives in a non-ASCII piece)
        data = text.encode("utf-8", "surrogatepass")
        codes, spans, *table, n_tokens = scan_chunk(np.frombuffer(data, dtype=np.uint8),
                                                     self.min_length, *self.table,
                                                     self.n_tokens)
        self.table = tuple(table)
        if n_tokens > self.n_tokens:
            self._name(n_tokens)
        if len(spans) == 0:
            return self.id_of[codes]
        pieces = np.flatnonzero(codes < 0)
        ids = self.id_of[np.maximum(codes, 0)]
        ids[pieces] = self.piece_ids.codes([data[a:b].decode("utf-8", "surrogatepass")
                                            for a, b in spans.tolist()])
        return self.piece_ids.expand(ids)

    def _name(self, n_tokens):
        """Vocabulary ids for the kernel's new token numbers self.n_tokens .. n_tokens - 1."""
        if n_tokens + 2 > len(self.id_of):
            grown = np.arange(2 * (n_tokens + 2), dtype=np.int64)
            grown[:len(self.id_of)] = self.id_of
            self.id_of = grown
        _, _, arena, offsets = self.table
        bounds = offsets[self.n_tokens:n_tokens + 1].tolist()
        blob = arena[bounds[0]:bounds[-1]].tobytes().decode("ascii")
        first = bounds[0]
        tokens = [blob[a - first:b - first] for a, b in zip(bounds[:-1], bounds[1:])]
        if self.forms is not None:
            tokens = map(self.forms.__getitem__, tokens)  # '' for a stop word: id 1
        self.id_of[self.n_tokens + 2:n_tokens + 2] = np.fromiter(
            map(self.vocab.__getitem__, tokens), dtype=np.int64, count=n_tokens - self.n_tokens)
        self.n_tokens = n_tokens


class Tokenizer:
    """The recipe as scikit-learn's ``CountVectorizer`` would run it, a chunk of documents at a
    time.

    Parameters
    ----------
    min_length : int, default=3
        Shortest token kept (characters).
    stopwords : str or StopList, optional
        A ``--stopwords`` specification (:func:`~spca_cli.corpus.stopwords.resolve_stopwords`);
        default none. Stop words are dropped as tokens are read, before n-grams are formed.
    ngram_range : (int, int), default=(1, 1)
        As CountVectorizer's: every run of MIN to MAX consecutive kept tokens of a document is
        a term, its words joined by one space ("customer service").

    Notes
    -----
    The preprocessor lower-cases; the token pattern has one capturing group (the word, or the
    document separator), so URLs and @mentions, matched outside the group, become empty tokens
    that are dropped (``re.findall`` returns the group, as ``CountVectorizer``'s tokenizer does).
    ``CountVectorizer``'s per-document analyzer costs several Python calls per document, most of
    the ingest time at a million tweets, so the preprocessor and tokenizer are applied to a whole
    chunk joined with :data:`SEPARATOR`: one C-level regex pass per chunk. (They are the
    functions ``CountVectorizer.build_preprocessor`` / ``build_tokenizer`` return for these
    settings, built without importing scikit-learn, whose import took 1.2-1.6 s of every CLI
    start.) A chunk with text of a script written without spaces (rare in most
    corpora, so the test is one search) is tokenised by a second pattern that also matches
    runs of that script, and each run is cut into words by
    :class:`~spca_cli.corpus.scripts.Segmenter`. Stop words are dropped token by token through
    a cached map (:class:`_Forms`), then n-grams are formed, as CountVectorizer does.

    Examples
    --------
    >>> Tokenizer(3)("Thanks @united! Don't lose #Bags http://t.co/x")
    ['thanks', "don't", 'lose', 'bags']
    >>> Tokenizer(3, "english", (1, 2))("The customer service didn’t answer my calls")
    ['customer', 'service', 'answer', 'calls', 'customer service', 'service answer', 'answer calls']
    """

    def __init__(self, min_length=3, stopwords=None, ngram_range=(1, 1)):
        self.min_length = min_length
        self.stoplist = (stopwords if isinstance(stopwords, StopList)
                         else resolve_stopwords(stopwords))
        self.ngram_range = parse_ngram_range(ngram_range)
        lower = str.lower
        if self.stoplist.unify_apostrophes:
            def lower(text):
                return text.lower().replace("\u2019", "'")
        # what CountVectorizer's build_preprocessor / build_tokenizer return for these settings
        # (the preprocessor itself; re.compile(token_pattern).findall, one group), built here
        # so that reading text does not import scikit-learn (1.2-1.6 s of every CLI start)
        self._preprocess = lower
        self._tokenize = re.compile(_chunk_pattern(min_length)).findall
        self._has_no_space = no_space_search().search
        self._forms = (_Forms(self.stoplist, min_length)
                       if self.stoplist.words or self.stoplist.english_rules else None)
        self.segmenter = Segmenter()
        self._pieces = _Pieces(self._tokenize, self._forms, min_length)

    @functools.cached_property
    def _tokenize_no_space(self):
        # built on the first chunk with a script written without spaces (its exact classes
        # are a scan of 300,000 code points)
        return re.compile(_chunk_pattern(self.min_length, no_space=True)).findall

    @property
    def settings(self):
        """(min_length, stoplist, ngram_range): what a worker process needs to rebuild it."""
        return self.min_length, self.stoplist, self.ngram_range

    def __call__(self, text):
        """The terms of one document (unigrams first, then each n-gram length)."""
        out = self.tokenize_chunk([text])
        streams = out if isinstance(out, tuple) else (out,)
        return [t for stream in streams for t in stream if t and t != SEPARATOR]

    def tokenize_chunk(self, texts):
        """The tokens of all ``texts`` in one list: :data:`SEPARATOR` between documents, and
        the kept tokens of each document in order ('' may stand where a URL, mention or stop
        word was dropped). With n-grams, a tuple of such lists (one per n-gram length), each
        with the same separators.

        The chunk is lower-cased in one piece, split at whitespace and each piece mapped
        through :class:`_Pieces`; a chunk with text of a script written without spaces, or
        holding :data:`_MARK` itself, takes the pattern over the whole chunk
        (:meth:`_tokens_by_pattern`), which gives the same tokens.
        """
        return self._terms(texts, self._split(texts))

    def count_chunk(self, texts, builder):
        """Add the counts of ``texts`` to ``builder`` (a :class:`VocabularyBuilder`): the
        matrix of ``builder.add(self.tokenize_chunk(texts), len(texts))``, through the
        builder's :class:`_ByteTokens` when the chunk takes the piece path without n-grams."""
        if self.ngram_range != (1, 1):
            builder.add(self.tokenize_chunk(texts), len(texts))
            return
        text = self._lowered(texts)
        if text is None:
            builder.add(self._terms(texts, None), len(texts))
        else:
            builder.add_text(text, self, len(texts))

    def _lowered(self, texts):
        """The lower-cased chunk, :data:`_MARK` between documents (with a space on each side);
        None when the chunk must take the pattern (a script written without spaces, or a
        document holding :data:`_MARK`)."""
        text = self._preprocess((" " + _MARK + " ").join(texts))
        no_space = not text.isascii() and self._has_no_space(text)
        if no_space or text.count(_MARK) != len(texts) - 1:
            return None
        return text

    def _split(self, texts):
        """The lower-cased chunk's whitespace-separated pieces, :data:`_MARK` between
        documents; None when the chunk must take the pattern (:meth:`_lowered`)."""
        text = self._lowered(texts)
        return None if text is None else text.split()

    def _terms(self, texts, pieces):
        """:meth:`tokenize_chunk` given the chunk's :meth:`_split`."""
        tokens = self._tokens_by_pattern(texts) if pieces is None else self._pieces.tokens(pieces)
        if self.ngram_range == (1, 1):
            return tokens
        return self._ngrams(tokens)

    def _tokens_by_pattern(self, texts):
        """The unigram tokens of :meth:`tokenize_chunk`, by the chunk pattern over all
        ``texts`` joined with :data:`SEPARATOR` (which it matches as a token)."""
        joined = SEPARATOR.join(texts)
        if joined.count(SEPARATOR) != len(texts) - 1:
            # a document holds the separator itself (a control character, so almost never)
            joined = SEPARATOR.join(t.replace(SEPARATOR, " ") for t in texts)
        text = self._preprocess(joined)
        # (isascii is a flag of the string, no scan: ASCII text has no such script; the
        # search took 0.05 s per 50,000 generated tweets)
        if not text.isascii() and self._has_no_space(text):
            tokens = self._segment(self._tokenize_no_space(text))
        else:
            tokens = self._tokenize(text)
        if self._forms is not None:
            # the stop words dropped here (two tokens in five of the airline tweets) never
            # reach the vocabulary's lookup: on that file 0.014 s of lookup + 0.007 s of this
            # filter, where looking every token up takes 0.023 s
            tokens = list(filter(None, map(self._forms.__getitem__, tokens)))
        return tokens

    def _segment(self, tokens):
        """Replace each token holding text without spaces by its words."""
        out = []
        has = self._has_no_space
        for token in tokens:
            if not token or token == SEPARATOR or not has(token):
                out.append(token)
                continue
            for piece in self.segmenter.split_token(token):
                if has(piece[:1]):
                    keep = len(piece) >= MIN_PIECE
                else:  # the letters of another script beside the run ("iphone" of "iphone发布")
                    keep = len(piece) >= self.min_length and piece[:1].isalpha()
                if keep:
                    out.append(piece)
        return out

    def _ngrams(self, tokens):
        """One stream per n of the n-gram range, over the kept tokens of each document."""
        # a word over MAX_WORD_LENGTH goes as a stop word does, before the n-grams are formed
        kept = [t for t in tokens if t and len(t) <= MAX_WORD_LENGTH]
        low, high = self.ngram_range
        streams = [kept] if low == 1 else []
        for n in range(max(low, 2), high + 1):
            padded = kept + [SEPARATOR] * (n - 1)
            windows = zip(*(padded[j:] for j in range(n)))
            streams.append([w[0] if w[0] == SEPARATOR else
                            ("" if SEPARATOR in w else " ".join(w)) for w in windows])
        return tuple(streams)


def make_analyzer(min_length=3, stopwords=None, ngram_range=(1, 1)):
    """A function str -> list of terms of one document (the recipe's analyzer)."""
    return Tokenizer(min_length, stopwords, ngram_range)


# Longest word kept, in characters: a longer run of letters is a blob (base64, minified code, a
# stretched "haaaa...a"), not a word. Kept, it would also pad every word of the vocabulary's numpy
# array to its length (4 bytes a character: one 3 MB token beside 40,000 words would ask for
# 469 GiB). No tweet can hold a longer hashtag (280 characters in all).
MAX_WORD_LENGTH = 256


class _Vocabulary(dict):
    """token -> id in order of first appearance: 0 the document separator, 1 a dropped token (the
    empty one, or a word longer than :data:`MAX_WORD_LENGTH`), then each new term at its first
    lookup, so mapping a whole chunk of tokens to ids is one C-level ``map`` (the trick of
    scikit-learn's ``CountVectorizer._count_vocab``). ``words[i]`` is the term of id i + 2.
    A too-long word is not stored: it costs a call each time, and memory never holds it. (An
    n-gram, whose words are joined by spaces, was formed from words that passed the same test
    in :meth:`Tokenizer._ngrams`; a word never holds a space.)"""

    def __init__(self):
        super().__init__({SEPARATOR: 0, "": 1})
        self.words = []

    def __missing__(self, token):
        if len(token) > MAX_WORD_LENGTH and " " not in token:
            return 1
        self.words.append(token)
        self[token] = len(self.words) + 1
        return len(self.words) + 1

    @property
    def n_ids(self):
        """One more than the largest id given."""
        return len(self.words) + 2


class VocabularyBuilder:
    """Accumulate tokenised chunks into one CSR matrix of counts.

    Word ids are given in order of first appearance by a :class:`_Vocabulary`, so mapping a
    whole chunk of tokens to ids is one C-level ``map``. Id 0 is the document separator and id 1
    a dropped token (a URL, a mention, a word over :data:`MAX_WORD_LENGTH`). Each chunk is
    turned into CSR pieces at once, so memory holds the counts, never the text.
    """

    def __init__(self):
        self._vocab = _Vocabulary()
        self._indptr = [np.zeros(1, dtype=np.int64)]
        self._indices = []
        self._data = []
        self._nnz = 0
        self.n_documents = 0
        self._piece_ids = None
        self._byte_tokens = None

    def add(self, tokens, n_documents):
        """Add one chunk: the tokens of ``n_documents`` documents separated by SEPARATOR, or a
        tuple of such lists (the n-gram streams of :meth:`Tokenizer.tokenize_chunk`)."""
        if n_documents == 0:
            return
        self._add_ids([np.fromiter(map(self._vocab.__getitem__, stream), dtype=np.int64,
                                   count=len(stream))
                       for stream in (tokens if isinstance(tokens, tuple) else (tokens,))],
                      n_documents)

    def add_text(self, text, tokenizer, n_documents):
        """Add one chunk given as its lower-cased text (:meth:`Tokenizer._lowered`): the same
        counts as :meth:`add` of its tokens (see :class:`_ByteTokens`)."""
        if n_documents == 0:
            return
        tokens = self._byte_tokens
        if tokens is None or tokens.piece_ids.piece_tokens is not tokenizer._pieces:
            self._piece_ids = _PieceIds(self._vocab, tokenizer._pieces)
            tokens = self._byte_tokens = _ByteTokens(self._vocab, tokenizer._forms,
                                                     tokenizer.min_length, self._piece_ids)
        self._add_ids([tokens.ids(text)], n_documents)

    def _add_ids(self, streams, n_documents):
        """Add one chunk given as id streams (0 between documents, 1 for a dropped token)."""
        n_words = self._vocab.n_ids
        rows = [count_rows(ids, n_words) for ids in streams]
        if len(rows) == 1:
            indptr, indices, counts = rows[0]
        else:
            # n-grams: one stream per length, each over all the documents, their terms distinct
            chunk = sum(sp.csr_array((c, i, p), shape=(n_documents, n_words)) for p, i, c in rows)
            indptr, indices, counts = chunk.indptr, chunk.indices, chunk.data
        # int32 counts while reading (half the memory of float64); float64 once, in finish()
        self._indptr.append(indptr[1:].astype(np.int64) + self._nnz)
        self._indices.append(indices.astype(np.int32, copy=False))
        self._data.append(counts.astype(np.int32, copy=False))
        self._nnz += len(indices)
        self.n_documents += n_documents

    def word_id(self, word):
        """Column of ``word`` in the matrix :meth:`finish` returns before sorting, or -1."""
        return self._vocab.get(word, 1) - 2 if word else -1

    def part(self):
        """This builder's counts as plain arrays (picklable, for the parallel ingest):
        ``(words, indptr, indices, data, n_documents)`` with words in id order (ids 0 and 1,
        the separator and the empty token, left out), int32 ids and counts in the narrowest
        unsigned type that holds them (a tweet repeats a word fewer than 256 times: a quarter
        of the 17.7 MB of int32 counts a worker of the parallel ingest sends per 250,000
        tweets)."""
        words = np.array(self._vocab.words, dtype=str)
        indices = np.concatenate(self._indices) if self._indices else np.zeros(0, np.int32)
        data = np.concatenate(self._data) if self._data else np.zeros(0, np.int32)
        largest = int(data.max(initial=0))
        if largest < 1 << 16:
            data = data.astype(np.uint8 if largest < 1 << 8 else np.uint16)
        return words, np.concatenate(self._indptr), indices, data, self.n_documents

    def finish(self):
        """The counts (csr_array, float64) and the vocabulary, sorted alphabetically.

        Sorting (as CountVectorizer does) makes the column order independent of document order.
        """
        return merge_parts([self.part()])


def merge_parts(parts, min_count=1, binary=False):
    """Stack the counts of several :meth:`VocabularyBuilder.part` results (documents in the
    order given) into one csr_array (float64) over the union of their words, sorted
    alphabetically, as one builder fed all the chunks would give; with ``min_count`` > 1 the
    words found in fewer documents are left out (:func:`filter_words`'s ``min_count``, applied
    here while the rows are copied: on 1M clustered tweets merging then filtering took 0.49 +
    0.54 s, most of it passes over all 17.7M entries that this one pass replaces). With
    ``binary`` every stored count is 1 (the binary weighting, which then needs no copy).

    ``parts`` is emptied as it is consumed, so each part's arrays can be freed early.
    """
    parts = list(parts)
    vocabulary, inverse = np.unique(np.concatenate([p[0] for p in parts]) if parts
                                    else np.zeros(0, dtype=str), return_inverse=True)
    # each part's id -> its word in the union (ids 0 and 1, separator and empty token: -1)
    word_of = []
    documents = np.zeros(len(vocabulary), dtype=np.int64)
    first_word = 0
    for words, _, p_indices, _, _ in parts:
        union_id = np.full(len(words) + 2, -1, dtype=np.int64)
        union_id[2:] = inverse[first_word:first_word + len(words)]
        first_word += len(words)
        word_of.append(union_id)
        # a part holds each word once: its words' documents add up
        documents[union_id[2:]] += word_documents(unsigned_positions(p_indices),
                                                  len(words) + 2)[2:]
    # (a word of no document is one only documents set aside held: keep_part_rows)
    keep = documents >= max(min_count, 1)
    column = np.where(keep, np.cumsum(keep) - 1, -1)
    vocabulary = vocabulary[keep]
    columns = []
    while word_of:
        union_id = word_of.pop(0)
        part_column = np.full(len(union_id), -1, dtype=np.int64)
        part_column[2:] = column[union_id[2:]]
        columns.append(part_column)
    lengths = [kept_lengths(p[1], p[2], c) for p, c in zip(parts, columns)]
    n_documents = sum(p[4] for p in parts)
    nnz = int(sum(int(n.sum()) for n in lengths))
    # int32 index arrays while they fit (as scipy itself picks), half the memory of int64
    index_dtype = np.int32 if nnz < 2 ** 31 - 1 else np.int64
    indptr = np.zeros(n_documents + 1, dtype=index_dtype)
    np.cumsum(np.concatenate(lengths) if lengths else np.zeros(0, np.int64), out=indptr[1:])
    indices = np.empty(nnz, dtype=np.int32)
    data = np.empty(nnz, dtype=np.float64)
    row = 0
    while parts:
        _, p_indptr, p_indices, p_data, n_docs = parts.pop(0)
        merge_rows(p_indptr, p_indices, p_data, columns.pop(0), indptr[row:row + n_docs + 1],
                   indices, data)
        row += n_docs
    if binary:
        data.fill(1.0)
    S = sp.csr_array((data, indices, indptr), shape=(n_documents, len(vocabulary)))
    S.has_sorted_indices = True
    return S, vocabulary


def keep_part_rows(parts, keep):
    """The :meth:`VocabularyBuilder.part` results ``parts`` (documents in order) with only the
    documents where ``keep`` (a boolean mask over all of them) is True; a part's words stay,
    and those left in no document are dropped by :func:`merge_parts`."""
    out, first = [], 0
    for words, indptr, indices, data, n_documents in parts:
        mask = keep[first:first + n_documents]
        first += n_documents
        if mask.all():
            out.append((words, indptr, indices, data, n_documents))
            continue
        lengths = np.diff(indptr)
        entries = np.repeat(mask, lengths)
        new_indptr = np.zeros(int(mask.sum()) + 1, dtype=np.int64)
        np.cumsum(lengths[mask], out=new_indptr[1:])
        out.append((words, new_indptr, indices[indptr[0]:indptr[-1]][entries],
                    data[indptr[0]:indptr[-1]][entries], int(mask.sum())))
    return out


def read_stopwords(stopwords):
    """The stop word set of a ``--stopwords`` specification (see
    :func:`~spca_cli.corpus.stopwords.resolve_stopwords`)."""
    return resolve_stopwords(stopwords).words


def keep_columns(S, keep):
    """The columns ``keep`` (boolean mask) of the CSR matrix S, without scipy's fancy indexing."""
    keep = np.asarray(keep, dtype=bool)
    if keep.all():
        return S
    new_id = np.cumsum(keep, dtype=np.int64) - 1
    m = keep[S.indices]
    counts = np.concatenate([[0], np.cumsum(m, dtype=np.int64)])
    out = sp.csr_array((S.data[m], new_id[S.indices[m]].astype(np.int32), counts[S.indptr]),
                       shape=(S.shape[0], int(keep.sum())))
    out.has_sorted_indices = True  # order within rows is preserved
    return out


def document_frequency(S):
    """Number of documents (rows) each word (column) occurs in."""
    return np.bincount(S.indices[S.data != 0], minlength=S.shape[1]).astype(np.int64)


def filter_words(S, vocabulary, *, stopwords=frozenset(), min_count=1, min_length=1):
    """Drop stop words, words shorter than ``min_length`` and words in fewer than ``min_count``
    documents; return the smaller (S, vocabulary)."""
    keep = np.ones(len(vocabulary), dtype=bool)
    if stopwords:
        keep &= ~np.isin(vocabulary, np.array(sorted(stopwords), dtype=str))
    if min_length > 1:
        keep &= np.char.str_len(vocabulary) >= min_length if len(vocabulary) else keep
    if min_count > 1:
        keep &= document_frequency(S) >= min_count
    logger.info("keeping %d of %d words", keep.sum(), len(keep))
    return keep_columns(S, keep), vocabulary[keep]


def apply_weighting(S, weighting):
    """Counts -> ``binary`` (1 where a word occurs), ``count`` (as is) or ``tfidf``
    (scikit-learn's TfidfTransformer: smooth idf, rows of unit l2 norm)."""
    if weighting == "count":
        return S
    if weighting == "binary":
        if S.data.size == 0 or (S.data.min() == 1.0 and S.data.max() == 1.0):
            return S  # binary already (merged so): no copy of its 17.7M values
        # a new matrix sharing S's index arrays: only the data is new (S is not modified)
        out = sp.csr_array(((S.data != 0).astype(np.float64), S.indices, S.indptr),
                           shape=S.shape, copy=False)
        out.has_sorted_indices = S.has_sorted_indices
        return out
    if weighting == "tfidf":
        from sklearn.feature_extraction.text import TfidfTransformer  # only for tf-idf

        return sp.csr_array(TfidfTransformer().fit_transform(S), dtype=np.float64)
    raise SpcaParameterError([Name("weighting"), f" must be one of {', '.join(WEIGHTINGS)}, "
                                                 f"got {weighting!r}"])
