"""Shared fixtures: where the real corpora live, and how to skip cleanly when they do not.

The real corpora are the registered data sets of :mod:`spca_cli.datasets`, found the way the
tool finds them: in ``$SPCA_DATA`` when set (``make test`` sets it to ../shared/data when that
folder exists), else in the cache (``$XDG_CACHE_HOME/spca`` or ``~/.cache/spca``). Nothing is
downloaded or built here; a test whose data set is absent is skipped with a message naming it
and the command that gets it.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from spca_cli import datasets

REPO = Path(__file__).resolve().parent.parent
TEST_DATA = Path(__file__).resolve().parent / "data"


def dataset_paths(name):
    """The files of data set ``name`` (present and checked), or skip naming what is missing
    and how to get it."""
    try:
        return datasets.local(name)
    except datasets.DatasetError as exc:
        pytest.skip(f"data set {name}: {exc.reason}; get it with `spca datasets fetch {name}` "
                    "or SPCA_DATA=/path/to/folder")


def shared_file(name):
    """Path of a data set's file by its usual name (``docword.kos.txt.gz``,
    ``matrices/kos.mtx``), or skip naming the data set and how to get it."""
    for ds in datasets.REGISTRY.values():
        for i, datafile in enumerate(ds.files):
            if datafile.name == name:
                return dataset_paths(ds.name)[i]
    raise LookupError(f"{name} is no registered data set's file (spca datasets list)")


@pytest.fixture
def airline_csv():
    return dataset_paths("airline")[0]


@pytest.fixture
def kos_docword():
    return dataset_paths("kos")[0]


@pytest.fixture
def airline_mtx():
    return dataset_paths("airline-matrix")[0]


@pytest.fixture
def kos_mtx():
    return dataset_paths("kos-matrix")[0]


@pytest.fixture
def rows_formed_on(monkeypatch):
    """The names of the threads on which :class:`~spca_cli.bounds.SharedRows` forms A's
    models with more exact rows, in order (a list the test reads as the run goes)."""
    from spca_cli import bounds

    formed = []
    original = bounds.SharedRows._formed

    def recorded(self, size):
        formed.append(threading.current_thread().name)
        return original(self, size)

    monkeypatch.setattr(bounds.SharedRows, "_formed", recorded)
    return formed
