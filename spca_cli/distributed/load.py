"""What the commands call with ``--scheduler``: any input they take, as a
:class:`~spca_cli.distributed.corpus.DistributedCorpus`, and the few answers that differ from
the single-process path (a ``Gram`` on the cluster, ``spca info``'s summary)."""

from __future__ import annotations

import numpy as np

from spca_cli.errors import SpcaParameterError

__all__ = ["load_distributed", "gram_of", "summarize_distributed"]

_FILTERS = ("since", "until", "contains", "min_count", "min_length", "stopwords", "weighting",
            "lang", "ngrams", "vocab", "text_column", "time_column", "titles")


def load_distributed(client, inputs, *, labels=None, input_format="auto", **ingest_kwargs):
    """Raw corpora read on the workers, or a saved folder of row blocks loaded by them."""
    from spca_cli.distributed.corpus import is_corpus_folder, load_corpus_folder
    from spca_cli.distributed.ingest import read_distributed

    inputs = list(inputs)
    if labels:
        raise SpcaParameterError("--labels applies to .npy and .mtx inputs, which are read "
                                 "without --scheduler")
    if len(inputs) == 1 and is_corpus_folder(inputs[0]):
        given = [k for k in _FILTERS if ingest_kwargs.get(k) not in (None, (), [])]
        if given:
            flags = ", ".join("--" + k.replace("_", "-") for k in given)
            raise SpcaParameterError(f"{flags} cannot apply to a saved corpus folder with "
                                     "--scheduler; give them to spca ingest")
        return load_corpus_folder(client, inputs[0])
    return read_distributed(client, inputs, format=input_format, **ingest_kwargs)


def gram_of(data):
    """The ``Gram`` of a distributed corpus: its products run on the workers."""
    from spca_cli.matrix import Gram

    return Gram.from_backend(data.backend)


def summarize_distributed(data, *, top=10, n_eigenvalues=5):
    """:func:`spca_cli.corpus.summary.summarize` for a distributed corpus (same keys)."""
    from spca_cli.spectrum import single_call_method, top_eigenpairs

    df = data.document_frequency()
    order = np.argsort(-df, kind="stable")[:top]
    first, last = data.time_span()
    out = {"path": data.path, "kind": data.kind, "documents": data.n_documents,
           "words": data.n_words, "nonzeros": data.nnz, "first_time": first,
           "last_time": last,
           "top_words": [{"word": str(data.vocabulary[i]), "documents": int(df[i])}
                         for i in order]}
    gram = gram_of(data)
    values = []
    if n_eigenvalues > 0 and gram.n > 0:
        eigen = top_eigenpairs(gram, n_eigenvalues, method=single_call_method(gram))
        values = [float(v) for v in eigen.values]
    out["eigenvalues"] = values
    out["paths"] = list(data.paths) or [str(data.path)]
    return out
