"""The threads of a run beside numba's (spca_cli.threads): one BLAS thread for the small dense
steps, and a step run on a second thread beside the run (the set's disjoint stars)."""

import threading
from pathlib import Path

import numba
import numpy as np
import pytest
import threadpoolctl

import spca_cli.threads as threads
from spca_cli.threads import beside, kernels_run_beside, one_blas_thread

SAMPLE = Path(__file__).resolve().parents[1] / "data_samples" / "docword.kos-sample.txt.gz"


def _blas_threads():
    return [lib["num_threads"] for lib in threadpoolctl.threadpool_info()
            if lib["user_api"] == "blas"]


def test_blas_runs_on_one_thread_inside_nested_blocks_and_is_restored_after(monkeypatch):
    import numpy  # noqa: F401 (its BLAS)

    before = _blas_threads()
    assert before  # (numpy brings a BLAS)
    calls = []
    original = threadpoolctl.threadpool_limits

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(threadpoolctl, "threadpool_limits", counted)
    with one_blas_thread():
        assert set(_blas_threads()) <= {1}
        with one_blas_thread():  # (a --by group's eigen step inside the group's own limit)
            assert set(_blas_threads()) <= {1}
        assert set(_blas_threads()) <= {1}
    assert len(calls) == 1  # the nested block asked threadpoolctl nothing
    assert _blas_threads() == before


@numba.njit(parallel=True)
def _parallel_sum(x):
    total = 0.0
    for i in numba.prange(x.size):
        total += x[i]
    return total


def _where_and_threads():
    return threading.current_thread().name, numba.get_num_threads()


@pytest.mark.parametrize("allowed", [True, False])
def test_a_step_beside_the_run_gives_its_value_on_a_second_thread_where_kernels_allow(
        monkeypatch, allowed):
    monkeypatch.setattr(threads, "kernels_run_beside", lambda: allowed)
    where, count = beside(_where_and_threads).result()
    assert where == ("spca-beside" if allowed else threading.current_thread().name)
    assert count == numba.get_num_threads()  # the caller's kernel threads, on either thread
    assert beside(_parallel_sum, np.arange(1000.0)).result() == 499500.0


def test_a_step_beside_the_run_raises_its_error_where_its_result_is_asked_for(monkeypatch):
    monkeypatch.setattr(threads, "kernels_run_beside", lambda: True)

    def fails():
        raise ValueError("from the second thread")

    pending = beside(fails)
    with pytest.raises(ValueError, match="from the second thread"):
        pending.result()


def test_kernels_run_beside_in_a_process_that_has_run_no_parallel_kernel_yet():
    """The first step beside the run may come before any parallel kernel (A's certificate
    beside the first eigen step of a small corpus): numba's threads and layer are started
    then, and the answer is the one a process that ran a kernel gets."""
    import subprocess
    import sys

    code = ("import numba\n"
            "from spca_cli.threads import kernels_run_beside\n"
            "answer = kernels_run_beside()\n"
            "print(answer, numba.threading_layer(), numba.get_num_threads())\n")
    answer, layer, count = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                          text=True, check=True).stdout.split()
    assert answer == str(layer in ("omp", "tbb") and int(count) > 1)


def test_kernels_run_beside_only_on_a_threadsafe_layer_with_more_than_one_thread():
    _parallel_sum(np.ones(10))
    layer = numba.threading_layer()
    expected = layer in ("omp", "tbb") and numba.get_num_threads() > 1
    assert kernels_run_beside() == expected
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        assert not kernels_run_beside()  # (one kernel thread asked for: one core)
    finally:
        numba.set_num_threads(previous)


def _outcome(result):
    return ([(c.words, c.explained_variance, c.upper_bound, c.certified_ratio)
             for c in result.components], result.total_bound)


def test_the_set_is_the_same_with_its_steps_beside_the_run_or_in_turn(monkeypatch):
    """A's certificate (beside the sketch and the first set search) and the set's disjoint
    stars (beside its last steps): the same topics, bounds and total bound either way."""
    from spca_cli.corpus.read import read_corpus
    from spca_cli.topics import run_topics

    data = read_corpus(str(SAMPLE))
    made = {}
    for allowed in (True, False):
        monkeypatch.setattr(threads, "kernels_run_beside", lambda: allowed)
        made[allowed] = _outcome(run_topics(data, k=6, n_components=3))
    assert made[True] == made[False]
    assert made[True][1].source == "weighted row sums of disjoint supports"


def test_short_texts_views_take_the_exact_rows_formed_beside_the_run(monkeypatch,
                                                                       rows_formed_on):
    """The fortunes' set views take more exact rows at once (a flat diagonal): A's model with
    them is formed on the second thread while the set is searched, and the run's outcome is
    the one made with everything in turn."""
    from spca_cli.corpus.read import read_corpus
    from spca_cli.topics import run_topics
    from test_groups import fortunes_csv

    data = read_corpus(str(fortunes_csv()))
    formed = rows_formed_on
    made = {}
    for allowed in (True, False):
        monkeypatch.setattr(threads, "kernels_run_beside", lambda: allowed)
        formed.clear()
        made[allowed] = _outcome(run_topics(data))
        assert formed == ["spca-beside" if allowed else "MainThread"]
    assert made[True] == made[False]
    assert min(c[3] for c in made[True][0]) >= 0.99
