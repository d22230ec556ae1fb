"""Topic coherence (NPMI over documents): the formula on hand-made documents, against a direct
count on the bundled real sample, and in the JSON and CSV of spca topics."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math

import numpy as np
import pytest
import scipy.sparse as sp

from spca_cli.coherence import npmi, topic_coherence
from _cli import spca
from conftest import REPO

SAMPLE = REPO / "data_samples" / "docword.kos-sample.txt.gz"


def test_npmi_is_one_for_words_always_together_and_minus_one_for_never():
    assert npmi((3, 3), 3, 10) == pytest.approx(1.0)
    assert npmi((3, 4), 0, 10) == -1.0
    # independent words: P(i, j) = P(i) P(j)
    assert npmi((5, 4), 2, 10) == pytest.approx(0.0, abs=1e-12)


def test_topic_coherence_is_the_mean_npmi_of_its_pairs():
    S = sp.csr_array(np.array([[2, 1, 0, 0], [1, 1, 0, 1], [0, 0, 3, 1], [1, 0, 1, 1],
                               [0, 1, 0, 0]], dtype=float))
    present = S.toarray() != 0
    expected = []
    for a, b in itertools.combinations([0, 1, 3], 2):
        p_a, p_b = present[:, a].mean(), present[:, b].mean()
        p_ab = (present[:, a] & present[:, b]).mean()
        expected.append(math.log(p_ab / (p_a * p_b)) / -math.log(p_ab) if p_ab else -1.0)
    assert topic_coherence(S, [0, 1, 3]) == pytest.approx(np.mean(expected))
    assert topic_coherence(S, [2]) is None


@pytest.mark.parametrize("binary", [True, False])
def test_coherence_from_the_backends_columns_equals_the_direct_count(binary):
    """The pipeline reads each topic's documents from the backend's column form of S (made
    once); an explicit zero is no document."""
    from spca_cli.backend import LocalBackend
    from spca_cli.coherence import coherence_from_documents

    rng = np.random.default_rng(4)
    dense = (rng.random((60, 9)) < 0.4) * (1.0 if binary else rng.integers(1, 4, (60, 9)))
    S = sp.csr_array(dense)
    if not binary:
        S.data[::7] = 0.0  # explicit zeros
    backend = LocalBackend(S)
    for words in ([0, 1, 2], [8, 3, 5, 1], [4, 6]):
        indptr, rows = backend.documents_of(np.array(words))
        assert coherence_from_documents(indptr, rows, 60) == pytest.approx(
            topic_coherence(S, words), rel=1e-12)


def test_topics_json_and_csv_carry_each_topics_coherence_on_the_real_sample():
    from spca_cli.corpus import load_input

    result = spca("topics", SAMPLE, "-k", "6", "-c", "2", "--format", "json")
    doc = json.loads(result.stdout)
    S = load_input(str(SAMPLE)).S
    present = (S != 0).toarray()
    for topic in doc["components"]:
        pairs = []
        for a, b in itertools.combinations(topic["indices"], 2):
            both = (present[:, a] & present[:, b]).mean()
            pairs.append(math.log(both / (present[:, a].mean() * present[:, b].mean()))
                         / -math.log(both) if both else -1.0)
        assert topic["coherence"] == pytest.approx(np.mean(pairs), rel=1e-9)
    assert doc["mean_coherence"] == pytest.approx(
        np.mean([t["coherence"] for t in doc["components"]]), rel=1e-9)
    rows = list(csv.DictReader(io.StringIO(spca("topics", SAMPLE, "-k", "6", "-c", "2",
                                                "--format", "csv").stdout)))
    assert float(rows[0]["coherence"]) == pytest.approx(doc["components"][0]["coherence"])


def test_a_matrix_given_as_a_has_no_coherence(tmp_path):
    path = tmp_path / "a.npy"
    B = np.random.default_rng(0).random((8, 8))
    np.save(path, B @ B.T)
    doc = json.loads(spca("topics", path, "-k", "3", "-c", "1", "--format", "json").stdout)
    assert "coherence" not in doc["components"][0] and "mean_coherence" not in doc
