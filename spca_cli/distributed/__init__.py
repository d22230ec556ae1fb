"""spca past one machine: the same topics with the rows of S on a Dask cluster.

Optional (``pip install 'spca-cli[dask]'``). :func:`connect` turns ``--scheduler`` into a
``distributed.Client``; :func:`~spca_cli.distributed.ingest.read_distributed` reads raw corpora
on the workers; :class:`~spca_cli.distributed.corpus.DistributedCorpus` keeps the row blocks
there, with :class:`~spca_cli.distributed.backend.DaskBackend` behind ``Gram``. The solvers and
the certificate run on the client, unchanged.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re

from spca_cli.errors import Name, SpcaError, SpcaParameterError

__all__ = ["connect", "scheduler_address", "gather", "INSTALL_HINT"]

INSTALL_HINT = [Name("scheduler"), " needs Dask distributed, which is not installed: "
                "pip install 'spca-cli[dask]'"]

_LOCAL = re.compile(r"local:(\d+)")


def scheduler_address(option):
    """``--scheduler`` as given, else the ``DASK_SCHEDULER_ADDRESS`` environment variable, else
    None (the single-process path)."""
    if option:
        return option
    return os.environ.get("DASK_SCHEDULER_ADDRESS") or None


def _require_dask():
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise SpcaParameterError(INSTALL_HINT) from None


@contextlib.contextmanager
def connect(address):
    """A ``distributed.Client`` for ``address``, closed (and a local cluster stopped) at exit.

    ``local:N`` starts a LocalCluster of N worker processes with one thread each (numba and
    BLAS get the whole core); anything else is a scheduler address such as
    ``tcp://HOST:8786``.
    """
    _require_dask()
    from distributed import Client, LocalCluster

    local = _LOCAL.fullmatch(address.strip())
    if local:
        n = int(local.group(1))
        if n < 1:
            raise SpcaParameterError([Name("scheduler"), f" local:N needs N >= 1, got {address}"])
        # silence_logs: the cluster's own notices (a worker slow to stop at the end, say)
        # are not the user's business; its errors still surface through the futures
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                          dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
                Client(cluster) as client:
            yield client
        return
    if address.startswith("local"):
        raise SpcaParameterError([Name("scheduler"), " must be local:N (N workers) or a "
                                  "scheduler address such as tcp://HOST:8786, got "
                                  f"{address!r}"])
    try:
        client = Client(address, timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise SpcaParameterError([Name("scheduler"), f" {address}: cannot reach the scheduler "
                                  f"({_one_line(exc)})"]) from None
    with client:
        yield client


def gather(client, futures):
    """``client.gather(futures)``, with the cluster's own failures (a worker killed, e.g. out of
    memory, or a task cancelled) as one-line errors; errors of spca's code on a worker arrive as
    they were raised there."""
    from concurrent.futures import CancelledError

    from distributed.scheduler import KilledWorker

    try:
        return client.gather(futures)
    except KilledWorker as exc:
        raise SpcaError(f"the cluster lost the workers running a task, too often to retry "
                        f"(out of memory?): {_one_line(exc)}") from None
    except CancelledError as exc:
        raise SpcaError(f"a task on the cluster was cancelled (the scheduler went away?): "
                        f"{_one_line(exc)}") from None


def _one_line(exc):
    return " ".join(str(exc).split()) or type(exc).__name__
