"""``spca spectrum`` asked for many eigenvalues (more than a quarter of the words, or of a small
problem) takes all of them from one LAPACK call, on S S^T when there are fewer documents than
words; ``--top`` beyond the words gives every eigenvalue with a note. Fewer eigenvalues of a
large problem still come from the iterative eigen step the topics solvers share.

Corpora: the bundled real KOS sample (300 blog posts x 6,906 words), and the whole of KOS (the
kos data set; skipped when absent), all of whose 6,906 eigenvalues one LAPACK call on the
3,430 x 3,430 S S^T gives in seconds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import spca_cli.spectrum as spectrum
from spca_cli.corpus import load_input
from spca_cli.matrix import Gram

from _cli import spca

REPO = Path(__file__).resolve().parent.parent
KOS_SAMPLE = REPO / "data_samples" / "docword.kos-sample.txt.gz"
#: the iterative eigen step, as the topics solvers call it (the fixture below blocks the name)
ITERATIVE = spectrum.top_eigenpairs


def eigenvalues(*args):
    result = spca("spectrum", *args, "--format", "json", "-q")
    assert result.exit_code == 0, result.output
    return np.array(json.loads(result.stdout)["eigenvalues"]), result.stderr


@pytest.fixture
def no_iterative_step(monkeypatch):
    """The iterative eigen step fails the test if it is called."""
    def refuse(*_args, **_kwargs):
        pytest.fail("the iterative eigen step ran")
    monkeypatch.setattr(spectrum, "top_eigenpairs", refuse)


@pytest.fixture(scope="module")
def sample_values():
    """The eigenvalues of A = S^T S, from the singular values of S, every one of the words."""
    S = load_input(str(KOS_SAMPLE)).S
    sigma = np.linalg.svd(S.toarray(), compute_uv=False)
    return np.concatenate([sigma ** 2, np.zeros(S.shape[1] - len(sigma))])


def test_top_beyond_the_words_gives_every_eigenvalue_with_a_note(sample_values,
                                                                 no_iterative_step):
    n = len(sample_values)
    values, notes = eigenvalues(KOS_SAMPLE, "--top", n + 100)
    assert notes == (f"Note: --top {n + 100:,} is more than the {n:,} words; showing all "
                     f"{n:,} eigenvalues\n")
    assert len(values) == n
    # 300 documents: S S^T gives the 300 nonzero eigenvalues, the other words' are 0
    np.testing.assert_allclose(values, sample_values, rtol=0, atol=1e-9 * sample_values[0])
    assert np.all(values[300:] == 0)


def test_a_quarter_of_the_words_comes_from_one_lapack_call(sample_values, no_iterative_step):
    top = 6906 // 4 + 1
    values, notes = eigenvalues(KOS_SAMPLE, "--top", top)
    assert notes == ""
    np.testing.assert_allclose(values, sample_values[:top], rtol=0,
                               atol=1e-9 * sample_values[0])


def test_a_matrix_given_as_a_is_decomposed_whole(tmp_path, no_iterative_step):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 12))
    path = tmp_path / "a.npy"
    np.save(path, X @ X.T)  # rank 12 of 40
    values, _ = eigenvalues(path, "--top", 11)
    np.testing.assert_allclose(values, np.linalg.eigvalsh(X @ X.T)[::-1][:11], rtol=1e-10)


def test_few_eigenvalues_of_a_large_problem_stay_iterative(monkeypatch, sample_values):
    monkeypatch.setattr(spectrum, "ALL_EIGENVALUES_WORDS", 100)  # the sample is then large
    calls = []

    def counted(*args, **kwargs):
        calls.append(args[1])
        return ITERATIVE(*args, **kwargs)

    monkeypatch.setattr(spectrum, "top_eigenpairs", counted)
    values, _ = eigenvalues(KOS_SAMPLE, "--top", 10)
    assert calls == [10]
    np.testing.assert_allclose(values, sample_values[:10], rtol=1e-7)


def test_every_eigenvalue_of_kos_without_the_iterative_step(kos_docword, no_iterative_step):
    path = kos_docword
    values, notes = eigenvalues(path, "--top", 7000)
    assert notes == ("Note: --top 7,000 is more than the 6,906 words; showing all 6,906 "
                     "eigenvalues\n")
    assert len(values) == 6906 and np.all(np.diff(values) <= 0)
    assert np.all(values[3430:] == 0)  # the rank of S^T S is at most KOS's 3,430 documents
    gram = Gram.from_documents(load_input(str(path)).S)
    leading = ITERATIVE(gram, 5, method=spectrum.single_call_method(gram)).values
    np.testing.assert_allclose(values[:5], leading, rtol=1e-8)
