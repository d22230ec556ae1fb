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

__all__ = ["connect", "scheduler_address", "gather", "INSTALL_HINT", "CONNECT_TIMEOUT"]

logger = logging.getLogger(__name__)

#: seconds a scheduler address has to answer Dask's handshake (the client itself waits for
#: nothing longer): an address that accepts and never answers is an error, not a hang
CONNECT_TIMEOUT = 10.0

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
    BLAS get the whole core), N at most the cores this process may use: more workers than
    cores only share them, so a larger N is lowered to the cores with a warning. Anything
    else is a scheduler address such as ``tcp://HOST:8786``, which must answer Dask's
    handshake within :data:`CONNECT_TIMEOUT` seconds (:func:`_check_scheduler`).
    """
    _require_dask()
    from distributed import Client, LocalCluster

    local = _LOCAL.fullmatch(address.strip())
    if local:
        n = int(local.group(1))
        if n < 1:
            raise SpcaParameterError([Name("scheduler"), f" local:N needs N >= 1, got {address}"])
        from spca_cli.processes import usable_cores

        cores = usable_cores()
        if n > cores:
            logger.warning("%s asks for %d workers but this machine has %d core%s: starting "
                           "%d, one single-threaded worker per core", address, n, cores,
                           "" if cores == 1 else "s", cores)
            n = cores
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
    _check_scheduler(address)
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise _unreachable(address, _one_line(exc)) from None
    with client:
        yield client


def _unreachable(address, reason):
    return SpcaError(f"cannot reach a Dask scheduler at {address}: {reason}")


def _check_scheduler(address):
    """Refuse ``address`` unless it completes Dask's handshake within CONNECT_TIMEOUT seconds.

    ``distributed.Client`` waits for the handshake's reply without a time limit (an address
    that accepts and never answers hangs it), and reads the first bytes of any reply as
    frame lengths (an HTTP server's reply asks it to allocate exabytes): the handshake is
    made here first, under one deadline, and whatever goes wrong in it is this one error.
    """
    import asyncio

    from distributed.comm import connect as open_comm
    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import get_backend
    from distributed.security import Security

    try:
        get_backend(parse_address(address)[0])
    except ValueError as exc:  # an unknown scheme (http://...)
        raise _unreachable(address, _one_line(exc)) from None

    async def handshake():
        comm = await open_comm(address, timeout=CONNECT_TIMEOUT,
                               **Security().get_connection_args("client"))
        await comm.close()

    try:
        asyncio.run(asyncio.wait_for(handshake(), CONNECT_TIMEOUT))
    except (TimeoutError, asyncio.TimeoutError):
        raise _unreachable(address, f"no answer within {CONNECT_TIMEOUT:g} s") from None
    except OSError as exc:
        raise _unreachable(address, _one_line(exc)) from None
    except Exception:  # noqa: BLE001 - whatever a foreign peer's bytes make Dask's reader raise
        raise _unreachable(address, "it answers, but not as a Dask scheduler does") from None


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
