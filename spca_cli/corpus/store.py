"""Saving and loading a :class:`Corpus` as ``.npz`` (what ``spca ingest -o`` writes).

The file holds the CSR arrays of S, the vocabulary, the times (when there are any), the kind,
the input path and the ingest options as JSON, and the documents' texts and ids when the input
had them (:mod:`spca_cli.corpus.texts`: a UTF-8 byte array and offsets each, ``texts_blob``,
``texts_offsets``, ``ids_blob``, ``ids_offsets``), and ``rows`` (each document's position among
those read) when duplicates were set aside; no pickles, so loading a file never runs code.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
import zlib

import numpy as np
import scipy.sparse as sp

from spca_cli.corpus._io import check_file
from spca_cli.corpus.core import Corpus
from spca_cli.corpus.kinds import WEIGHTINGS
from spca_cli.corpus.matrix_files import check_gram_range
from spca_cli.corpus.texts import Strings
from spca_cli.corpus.times import storable_times
from spca_cli.errors import SpcaInputError
from spca_cli.files import atomic_output
from spca_cli.limits import check_memory

__all__ = ["save_corpus", "load_corpus", "read_npz", "corpus_from_arrays", "FORMAT_VERSION"]

FORMAT_VERSION = 1
_REQUIRED = ("data", "indices", "indptr", "shape", "vocabulary", "kind", "path", "options")


def save_corpus(corpus, path):
    """Write ``corpus`` to ``path`` (.npz) atomically: a temporary file in the same folder,
    then ``os.replace``, so a reader never sees half a file and a failure leaves none."""
    path = os.fspath(path)
    S = corpus.S
    arrays = {
        "format_version": np.array(FORMAT_VERSION),
        "data": S.data, "indices": S.indices, "indptr": S.indptr,
        "shape": np.array(S.shape, dtype=np.int64),
        "vocabulary": np.asarray(corpus.vocabulary, dtype=str),
        "kind": np.array(corpus.kind), "path": np.array(str(corpus.path)),
        "options": np.array(json.dumps(corpus.options, sort_keys=True)),
    }
    if corpus.times is not None:
        arrays["times"] = np.asarray(corpus.times, dtype=np.int64)
        arrays["tz_offsets"] = np.asarray(corpus.tz_offsets, dtype=np.int32)
    for name in ("texts", "ids"):
        if getattr(corpus, name, None) is not None:
            arrays.update(getattr(corpus, name).to_arrays(name))
    if getattr(corpus, "rows", None) is not None:
        arrays["rows"] = np.asarray(corpus.rows, dtype=np.int64)
    with atomic_output(path) as f:
        np.savez(f, **arrays)


def load_corpus(path):
    """Read a corpus written by :func:`save_corpus`, checking everything before use.

    The file is read member by member (:func:`read_npz`), each array's size checked against its
    header first; then every array is validated (:func:`corpus_from_arrays`): format version,
    dtypes, shapes, column indices in range, monotone row pointers, finite nonnegative data
    small enough for A = S^T S in float64,
    vocabulary and times of the right length, the option types. Nothing reaches a compiled
    kernel before that, so a damaged or foreign file is one error line, never a crash.

    Raises
    ------
    SpcaInputError
        When the file is not such a corpus (the message says what is wrong).
    """
    check_file(path)
    return corpus_from_arrays(path, read_npz(path))


def _not_ours(path, what):
    return SpcaInputError(path, f"not a corpus written by spca ingest ({what})")


def read_npz(path):
    """{name: ndarray} of the ``.npy`` members of the zip file ``path``, read without pickles.

    Each member's header is read first and the array's byte size compared with the member's
    size, so a truncated or lying file is refused before any memory is allocated for it; the
    zip's CRC is checked as the data is read.
    """
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise _not_ours(path, f"not a readable .npz zip file: {exc}") from None
    arrays = {}
    with archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                continue
            name = info.filename[:-4]
            try:
                arrays[name] = _read_member(archive, info)
            except _Damaged as exc:
                raise SpcaInputError(path, f"array '{name}' {exc}") from None
            except MemoryError:
                raise SpcaInputError(path, f"array '{name}' is too large for this machine's "
                                           "memory") from None
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error) as exc:
                raise SpcaInputError(path, f"array '{name}' is damaged ({exc})") from None
    return arrays


class _Damaged(Exception):
    """A member of the .npz that cannot be an array we wrote."""


def _read_member(archive, info):
    with archive.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise _Damaged(f"has .npy format version {version}, which spca does not read")
        if dtype.hasobject:
            raise _Damaged("holds Python objects, which spca never loads")
        need = math.prod(shape) * dtype.itemsize
        header = f.tell()
        if info.file_size - header != need:
            raise _Damaged(f"is truncated or damaged: its header needs {need:,} bytes of data, "
                           f"the file holds {max(info.file_size - header, 0):,}")
        check_memory(need, f"array of shape {shape}")
        buffer = bytearray(need)
        view, got = memoryview(buffer), 0
        while got < need:
            n = f.readinto(view[got:])
            if not n:
                raise _Damaged("is truncated")
            got += n
        f.read(1)  # reaching the end makes zipfile check the CRC
    array = np.frombuffer(buffer, dtype=dtype)
    return array.reshape(shape, order="F" if fortran else "C")


#: Types of the ingest options a corpus records (anything else there is kept, unchecked).
_OPTION_TYPES = {
    "format": (str,), "inputs": (list,), "vocab": (str, type(None)),
    "text_column": (str, type(None)), "time_column": (str, type(None)),
    "since": (str, type(None)), "until": (str, type(None)), "contains": (list,),
    "min_count": (int,), "min_length": (int,), "stopwords": (str,), "weighting": (str,),
    "labels": (str, type(None)), "source_kind": (str,), "source_path": (str,),
    "lang": (list,), "titles": (str, type(None)),
    "keep_duplicates": (bool,), "near_duplicates": (float, int, type(None)),
    "duplicates_set_aside": (dict, type(None)),
}


def _scalar_text(path, z, name):
    value = z[name]
    if value.ndim != 0 or value.dtype.kind != "U":
        raise SpcaInputError(path, f"damaged corpus: '{name}' must be one string, got "
                                   f"{value.dtype} of shape {value.shape}")
    return str(value)


def _integer_array(path, z, name, length=None):
    value = z[name]
    if value.ndim != 1 or value.dtype.kind not in "iu":
        raise SpcaInputError(path, f"damaged corpus: '{name}' must be a 1-d integer array, got "
                                   f"{value.dtype} of shape {value.shape}")
    if length is not None and len(value) != length:
        raise SpcaInputError(path, f"damaged corpus: '{name}' has {len(value):,} entries, "
                                   f"expected {length:,}")
    return value.astype(np.int64)


def _check_options(path, text):
    try:
        options = json.loads(text)
    except (ValueError, RecursionError):
        raise SpcaInputError(path, "damaged corpus: 'options' is not JSON") from None
    if not isinstance(options, dict):
        raise SpcaInputError(path, "damaged corpus: 'options' must be a JSON object")
    for key, types in _OPTION_TYPES.items():
        value = options.get(key)
        if key in options and (not isinstance(value, types)
                               or (isinstance(value, bool) and bool not in types)):
            raise SpcaInputError(path, f"damaged corpus: option '{key}' has the wrong type "
                                       f"({type(value).__name__})")
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise SpcaInputError(path, f"damaged corpus: option '{key}' must list strings")
    counts = options.get("duplicates_set_aside")
    if counts is not None and not (set(counts) <= {"exact", "near"} and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts.values())):
        raise SpcaInputError(path, "damaged corpus: option 'duplicates_set_aside' must map "
                                   "'exact' and 'near' to counts")
    if "weighting" in options and options["weighting"] not in WEIGHTINGS:
        raise SpcaInputError(path, f"damaged corpus: option 'weighting' is "
                                   f"{options['weighting']!r}, not one of {', '.join(WEIGHTINGS)}")
    return options


def corpus_from_arrays(path, z):
    """A :class:`Corpus` from the arrays of a saved corpus, after checking every one of them."""
    missing = [k for k in ("format_version", *_REQUIRED) if k not in z]
    if missing:
        raise _not_ours(path, f"missing {', '.join(missing)}")
    version = z["format_version"]
    if version.ndim != 0 or version.dtype.kind not in "iu" or int(version) != FORMAT_VERSION:
        raise SpcaInputError(path, f"corpus format version {version.tolist()!r}; this spca "
                                   f"reads version {FORMAT_VERSION} (re-run spca ingest)")
    shape = _integer_array(path, z, "shape", 2)
    if (shape < 0).any() or (shape >= 2 ** 62).any():
        raise SpcaInputError(path, f"damaged corpus: shape {shape.tolist()} is impossible")
    n_docs, n_words = (int(x) for x in shape)
    data = z["data"]
    if data.ndim != 1 or data.dtype.kind not in "iuf":
        raise SpcaInputError(path, f"damaged corpus: 'data' must be a 1-d array of real numbers, "
                                   f"got {data.dtype} of shape {data.shape}")
    data = data.astype(np.float64)
    nnz = len(data)
    if not np.isfinite(data).all():
        raise SpcaInputError(path, "damaged corpus: 'data' holds NaN or infinity")
    if (data < 0).any():
        raise SpcaInputError(path, "damaged corpus: 'data' holds negative entries")
    check_gram_range(path, data)
    indices = _integer_array(path, z, "indices", nnz)
    if nnz and (indices.min() < 0 or indices.max() >= n_words):
        raise SpcaInputError(path, f"damaged corpus: 'indices' holds a word index outside "
                                   f"[0, {n_words})")
    indptr = _integer_array(path, z, "indptr", n_docs + 1)
    if indptr[0] != 0 or indptr[-1] != nnz or (np.diff(indptr) < 0).any():
        raise SpcaInputError(path, f"damaged corpus: 'indptr' must rise from 0 to {nnz:,} "
                                   "without going down")
    vocabulary = z["vocabulary"]
    if vocabulary.ndim != 1 or vocabulary.dtype.kind != "U":
        raise SpcaInputError(path, "damaged corpus: 'vocabulary' must be a 1-d array of strings")
    if len(vocabulary) != n_words:
        raise SpcaInputError(path, f"S has {n_words} columns but the vocabulary "
                                   f"{len(vocabulary)} words")
    kind = _scalar_text(path, z, "kind")
    source = _scalar_text(path, z, "path")
    options = _check_options(path, _scalar_text(path, z, "options"))
    times = offsets = None
    if ("times" in z) != ("tz_offsets" in z):
        raise SpcaInputError(path, "damaged corpus: 'times' and 'tz_offsets' come together")
    if "times" in z:
        times = _integer_array(path, z, "times", n_docs)
        offsets = _integer_array(path, z, "tz_offsets", n_docs)
        if n_docs and np.abs(offsets).max() >= 86400:
            raise SpcaInputError(path, "damaged corpus: 'tz_offsets' holds an offset of a "
                                       "day or more")
        if n_docs and not storable_times(times, offsets).all():
            raise SpcaInputError(path, "damaged corpus: 'times' holds a time outside the "
                                       "years 1-9999")
        offsets = offsets.astype(np.int32)
    index_type = np.int32 if max(n_words, nnz) < 2 ** 31 else np.int64
    S = sp.csr_array((data, indices.astype(index_type), indptr.astype(index_type)),
                     shape=(n_docs, n_words))
    _canonical(path, S)
    # the loaded corpus is of kind 'corpus' at this path; where it came from stays known
    options.setdefault("source_kind", kind)
    options.setdefault("source_path", source)
    try:
        texts = Strings.from_arrays(z, "texts", n_docs)
        ids = Strings.from_arrays(z, "ids", n_docs)
    except ValueError as exc:
        raise SpcaInputError(path, f"damaged corpus: {exc}") from None
    rows = None
    if "rows" in z:
        rows = _integer_array(path, z, "rows", n_docs)
        if n_docs and (rows[0] < 0 or (np.diff(rows) <= 0).any()):
            raise SpcaInputError(path, "damaged corpus: 'rows' must rise from 0 or more")
    return Corpus(S=S, vocabulary=vocabulary.astype(str), times=times, tz_offsets=offsets,
                  kind="corpus", path=str(path), options=options, texts=texts, ids=ids,
                  rows=rows)


def _canonical(path, S):
    """Sort the column indices of each row (in place) and refuse a word twice in one row."""
    if S.nnz < 2:
        S.has_canonical_format = True
        return
    row_start = np.zeros(S.nnz, dtype=bool)
    row_start[S.indptr[:-1][np.diff(S.indptr) > 0]] = True
    step = np.diff(S.indices.astype(np.int64))
    if not (step[~row_start[1:]] > 0).all():
        S.has_sorted_indices = False
        S.sort_indices()
        step = np.diff(S.indices.astype(np.int64))
        if (step[~row_start[1:]] == 0).any():
            raise SpcaInputError(path, "damaged corpus: a word appears twice in one document")
    S.has_sorted_indices = True
    S.has_canonical_format = True
