"""Through the CLI, the inputs that once made a printed bound lie or a run crash: a top eigenvalue
repeated across many blocks of words, a matrix PSD only up to rounding, nonneg on a mixed-sign
matrix, and matrices or views that are zero."""

from __future__ import annotations

import itertools
import json

import numpy as np
import scipy.io
import pytest
import scipy.sparse as sp

from _cli import spca

BLOCK = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 1.0],
                  [1.0, 0.0, 0.0]])  # 5 documents over 3 words: A's block is BLOCK^T BLOCK


def _best_pair_of_block():
    G = BLOCK.T @ BLOCK
    return max(float(np.linalg.eigvalsh(G[np.ix_(I, I)])[-1])
               for I in itertools.combinations(range(3), 2))


def _repeated_blocks_mtx(tmp_path, copies=15, background=320, seed=0):
    """``copies`` identical 3-word blocks (the top eigenvalue repeated ``copies`` times) and
    background words each alone in a few documents, shuffled: a .mtx of S and its vocabulary."""
    rng = np.random.default_rng(seed)
    parts = [BLOCK] * copies + [np.ones((int(c), 1)) for c in rng.integers(1, 4, background)]
    S = sp.block_diag(parts, format="csr")
    S = S[:, rng.permutation(S.shape[1])]
    path = tmp_path / "blocks.mtx"
    scipy.io.mmwrite(str(path), sp.coo_matrix(S))
    (tmp_path / "blocks.vocab.txt").write_text("".join(f"w{i}\n" for i in range(S.shape[1])))
    return path


def _topics_json(*args):
    result = spca("topics", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # (notes also go to stderr as warnings)


def _best_pairs_of_views(path, topics):
    """The best 2-word value of each view remove deflation leaves (the words of the topics
    before it removed), by brute force over the pairs."""
    S = scipy.io.mmread(str(path)).tocsc()
    A = (S.T @ S).toarray()
    names = [f"w{i}" for i in range(A.shape[0])]
    removed, best = set(), []
    for topic in topics:
        alive = [i for i in range(A.shape[0]) if i not in removed]
        # (two words that never meet explain the larger of their diagonal entries)
        best.append(max([max(A[i, i] for i in alive)]
                        + [float(np.linalg.eigvalsh(A[np.ix_(I, I)])[-1])
                           for I in itertools.combinations(alive, 2) if A[I[0], I[1]] != 0]))
        removed |= {names.index(w) for w in topic["words"]}
    return best


def test_twelve_topics_on_a_repeated_top_eigenvalue_total_bound_covers_the_twelve_blocks(tmp_path):
    path = _repeated_blocks_mtx(tmp_path)
    doc = _topics_json(path, "--solver", "spannogram", "--rank", "1", "-k", "2", "-c", "12")
    attainable = 12 * _best_pair_of_block()  # one 2-word topic in each of 12 blocks
    assert doc["total_explained_variance"] <= attainable * (1 + 1e-9)
    assert doc["total_upper_bound"] >= attainable * (1 - 1e-9)
    # each topic's bound covers the best pair of its view: the first a whole block's, the
    # later ones as the topics before them leave the blocks (rank 1 of a top eigenvalue
    # repeated 15 times may pair words of two blocks, which leaves none of them whole)
    best = _best_pairs_of_views(path, doc["components"])
    assert best[0] == pytest.approx(_best_pair_of_block())
    for topic, value in zip(doc["components"], best):
        assert topic["upper_bound"] >= value * (1 - 1e-9)


def test_arpack_on_a_repeated_top_eigenvalue_total_bound_covers_the_best_disjoint_total(tmp_path):
    path = _repeated_blocks_mtx(tmp_path)
    doc = _topics_json(path, "--solver", "spannogram", "--rank", "1", "-k", "2", "-c", "12",
                       "--eigensolver", "arpack")
    assert doc["total_upper_bound"] >= 12 * _best_pair_of_block() * (1 - 1e-9)


def test_info_and_spectrum_print_every_copy_of_a_repeated_leading_eigenvalue(tmp_path):
    path = _repeated_blocks_mtx(tmp_path)
    top = float(np.linalg.eigvalsh(BLOCK.T @ BLOCK)[-1])
    result = spca("spectrum", path, "--top", "16", "--format", "json")
    assert result.exit_code == 0, result.output
    values = json.loads(result.stdout)["eigenvalues"]
    np.testing.assert_allclose(values[:15], top, rtol=1e-8)
    assert values[15] < top * 0.9
    result = spca("info", path, "--eigenvalues", "15", "--format", "json")
    assert result.exit_code == 0, result.output
    np.testing.assert_allclose(json.loads(result.stdout)["eigenvalues"][:15], top, rtol=1e-8)


def _near_psd_npy(tmp_path):
    """Two 5-word PSD blocks and a 5-word block c (J - I), c = 5e-10 lambda_max: eigenvalues 4c
    and -c, within the PSD tolerance; its zero diagonal says nothing of the 4c it explains."""
    rng = np.random.default_rng(3)
    parts = [G.T @ G for G in (rng.random((6, 5)), rng.random((6, 5)))]
    c = 5e-10 * max(np.linalg.eigvalsh(P)[-1] for P in parts)
    parts.append(c * (np.ones((5, 5)) - np.eye(5)))
    path = tmp_path / "near.npy"
    np.save(path, sp.block_diag(parts).toarray())
    return path, 4 * c


def test_nearly_psd_matrix_bound_of_the_zero_diagonal_block_covers_its_value(tmp_path):
    path, value = _near_psd_npy(tmp_path)
    for solver in ("threshold", "auto"):
        doc = _topics_json(path, "--solver", solver, "-k", "5", "-c", "3")
        last = doc["components"][2]
        assert last["upper_bound"] >= value * (1 - 1e-9), solver
        for topic in doc["components"]:
            assert topic["upper_bound"] >= topic["explained_variance"] * (1 - 1e-6)


def test_nonneg_on_a_mixed_sign_matrix_certifies_against_signed_topics(tmp_path):
    rng = np.random.default_rng(18)  # a matrix whose best signed topic beats every nonnegative
    B = rng.standard_normal((8, 8))
    path = tmp_path / "mixed.npy"
    np.save(path, B @ B.T)
    best = _topics_json(path, "--solver", "exact", "-k", "3", "-c", "1")["components"][0]
    doc = _topics_json(path, "--solver", "nonneg", "-k", "3", "-c", "1")
    topic = doc["components"][0]
    assert topic["upper_bound"] >= best["explained_variance"] * (1 - 1e-9)
    nonnegative = topic["solver_info"]["nonnegative_upper_bound"]
    assert nonnegative < best["explained_variance"]  # below a signed topic: not a certificate
    assert any("nonnegative topics only" in note for note in doc["notes"])


def test_zero_matrix_gives_zero_topics_certified(tmp_path):
    path = tmp_path / "zero.npy"
    np.save(path, np.zeros((6, 6)))
    for extra in ([], ["--eigensolver", "arpack"], ["--eigensolver", "krylov"]):
        doc = _topics_json(path, "-k", "2", "-c", "2", *extra)
        assert [t["explained_variance"] for t in doc["components"]] == [0, 0]
        assert [t["certified_ratio"] for t in doc["components"]] == [1, 1]


def test_block_leaving_a_zero_view_gives_a_zero_topic(tmp_path):
    A = np.zeros((8, 8))
    A[:2, :2] = [[2.0, 1.0], [1.0, 2.0]]
    path = tmp_path / "block.npy"
    np.save(path, A)
    for extra in ([], ["--eigensolver", "arpack"], ["--eigensolver", "krylov"]):
        doc = _topics_json(path, "-k", "2", "-c", "3", "--deflation", "remove", *extra)
        values = [t["explained_variance"] for t in doc["components"]]
        np.testing.assert_allclose(values, [3, 0, 0], atol=1e-12, err_msg=str(extra))
        assert doc["total_upper_bound"] >= 3
        # the joint set splits the block: two topics of 2 each (a zero word beside each word)
        doc = _topics_json(path, "-k", "2", "-c", "3", *extra)
        values = [t["explained_variance"] for t in doc["components"]]
        np.testing.assert_allclose(values, [2, 2, 0], atol=1e-12, err_msg=str(extra))
        assert doc["total_upper_bound"] >= 4


def test_uci_words_without_entries_and_identical_tweets_projected_out(tmp_path):
    (tmp_path / "docword.t.txt").write_text("3\n10\n4\n1 1 2\n2 1 1\n3 2 1\n3 1 1\n")
    (tmp_path / "vocab.t.txt").write_text("".join(f"w{i}\n" for i in range(1, 11)))
    doc = _topics_json(tmp_path / "docword.t.txt", "-k", "2", "-c", "3", "--deflation", "remove")
    assert [t["explained_variance"] for t in doc["components"]][1:] == [0, 0]
    # the joint set keeps the two words apart: A_11 = 6 and A_22 = 1 (7 > 6.19 together)
    doc = _topics_json(tmp_path / "docword.t.txt", "-k", "2", "-c", "3")
    assert [t["explained_variance"] for t in doc["components"]] == [6, 1, 0]
    same = tmp_path / "same.txt"
    same.write_text("hello world\nhello world\nhello world\n")
    doc = _topics_json(same, "-k", "2", "-c", "2", "--deflation", "projection")
    assert doc["components"][0]["explained_variance"] == pytest.approx(6)
    assert doc["components"][1]["explained_variance"] == 0
    assert doc["components"][1]["certified_ratio"] == 1
