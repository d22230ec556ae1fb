"""Saving and loading a :class:`Corpus` as ``.npz`` (what ``spca ingest -o`` writes).

The file holds the CSR arrays of S, the vocabulary, the times (when there are any), the kind,
the input path and the ingest options as JSON, and the documents' texts and ids when the input
had them (:mod:`spca_cli.corpus.texts`: a UTF-8 byte array and offsets each, ``texts_blob``,
``texts_offsets``, ``ids_blob``, ``ids_offsets``); no pickles, so loading a file never runs code.
"""

from __future__ import annotations

import json
import os

import numpy as np
import scipy.sparse as sp

from spca_cli.corpus._io import check_file
from spca_cli.corpus.core import Corpus
from spca_cli.corpus.texts import Strings
from spca_cli.errors import SpcaInputError
from spca_cli.files import atomic_output

__all__ = ["save_corpus", "load_corpus", "FORMAT_VERSION"]

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
    with atomic_output(path) as f:
        np.savez(f, **arrays)


def load_corpus(path):
    """Read a corpus written by :func:`save_corpus`.

    Raises
    ------
    SpcaInputError
        When the file is not such a corpus.
    """
    check_file(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in _REQUIRED if k not in z.files]
            if missing:
                raise SpcaInputError(path, "not a corpus written by spca ingest (missing "
                                           f"{', '.join(missing)})")
            S = sp.csr_array((z["data"], z["indices"], z["indptr"]),
                             shape=tuple(int(x) for x in z["shape"]))
            times = z["times"] if "times" in z.files else None
            offsets = z["tz_offsets"] if "tz_offsets" in z.files else None
            options = json.loads(str(z["options"]))
            # the loaded corpus is of kind 'corpus' at this path; where it came from stays known
            options.setdefault("source_kind", str(z["kind"]))
            options.setdefault("source_path", str(z["path"]))
            corpus = Corpus(S=S, vocabulary=z["vocabulary"].astype(str), times=times,
                            tz_offsets=offsets, kind="corpus", path=str(path), options=options,
                            texts=Strings.from_arrays(z, "texts", S.shape[0]),
                            ids=Strings.from_arrays(z, "ids", S.shape[0]))
    except (ValueError, OSError, EOFError, KeyError) as exc:
        raise SpcaInputError(path, f"not a corpus written by spca ingest ({exc})") from None
    if corpus.S.shape[1] != len(corpus.vocabulary):
        raise SpcaInputError(path, f"S has {corpus.S.shape[1]} columns but the vocabulary "
                                   f"{len(corpus.vocabulary)} words")
    return corpus
