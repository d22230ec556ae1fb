"""One BLAS thread for the small dense steps (spca_cli.threads)."""

import threadpoolctl

from spca_cli.threads import one_blas_thread


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
