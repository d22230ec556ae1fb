"""Shared fixtures: where the real corpora live, and how to skip cleanly when they do not."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
TEST_DATA = Path(__file__).resolve().parent / "data"


def shared_file(name):
    """Path of a file in ../shared/data, or skip the test when that folder is absent."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} not present (the real corpora live in ../shared/data)")
    return path


@pytest.fixture
def airline_csv():
    return shared_file("twitter_us_airline_sentiment.csv")


@pytest.fixture
def kos_docword():
    shared_file("vocab.kos.txt")
    return shared_file("docword.kos.txt.gz")


@pytest.fixture
def airline_mtx():
    shared_file("matrices/airline.vocab.txt")
    return shared_file("matrices/airline.mtx")


@pytest.fixture
def kos_mtx():
    shared_file("matrices/kos.vocab.txt")
    return shared_file("matrices/kos.mtx")
