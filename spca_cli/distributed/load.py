"""What the commands call with ``--scheduler``: any input they take, as a
:class:`~spca_cli.distributed.corpus.DistributedCorpus` (``input_gram`` and ``summarize`` take it
like a Corpus)."""

from __future__ import annotations

from spca_cli.corpus.read import _names
from spca_cli.errors import Name, SpcaParameterError

__all__ = ["load_distributed"]

_FILTERS = ("since", "until", "contains", "min_count", "min_length", "stopwords", "weighting",
            "lang", "ngrams", "vocab", "text_column", "time_column", "titles", "keep_duplicates",
            "near_duplicates")


def load_distributed(client, inputs, *, labels=None, input_format="auto", **ingest_kwargs):
    """Raw corpora read on the workers, or a saved folder of row blocks loaded by them."""
    from spca_cli.distributed.corpus import is_corpus_folder, load_corpus_folder
    from spca_cli.distributed.ingest import read_distributed

    inputs = list(inputs)
    if labels:
        raise SpcaParameterError([Name("labels"), " applies to .npy and .mtx inputs, which are "
                                  "read without ", Name("scheduler")])
    if len(inputs) == 1 and is_corpus_folder(inputs[0]):
        given = [k for k in _FILTERS if ingest_kwargs.get(k) not in (None, (), [])]
        if given:
            raise SpcaParameterError([*_names(given), " cannot apply to a saved corpus folder "
                                      "with ", Name("scheduler"), "; give them to spca ingest"])
        return load_corpus_folder(client, inputs[0])
    return read_distributed(client, inputs, format=input_format, **ingest_kwargs)
