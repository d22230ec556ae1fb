"""Where the benchmarks find the real corpora: the data set registry (``SPCA_DATA``, else the
cache; docs/datasets.md), as the tool and the tests do."""

from __future__ import annotations

from pathlib import Path


def matrices_folder():
    """The folder of the published matrices (``kos.mtx``, ``airline.mtx`` and their vocabularies),
    or where they would be when absent (the benchmarks then say so and skip)."""
    from spca_cli import datasets

    try:
        return Path(datasets.local("kos-matrix")[0]).parent
    except datasets.DatasetError:
        return Path(datasets.data_folder()) / "matrices"


def dataset_file(name):
    """The main file of data set ``name``, or None when absent."""
    from spca_cli import datasets

    try:
        return Path(datasets.local(name)[0])
    except datasets.DatasetError:
        return None
