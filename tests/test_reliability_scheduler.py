"""Reliability: ``--scheduler`` at something that is not a Dask scheduler is one error line
within the connection timeout (never a hang, never a traceback), and ``local:N`` starts at most
one worker per core.

The servers are this test's own, on 127.0.0.1 only: one answers HTTP, one sends bytes that are
no protocol, one accepts and never answers. The CLI runs in a child process (a hang would be
killed by the timeout, not stall the suite) with the connection timeout lowered to 1 s."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="--scheduler needs the dask extra: "
                                          "pip install 'spca-cli[dask]'")

from _cli import spca  # noqa: E402

TINY = Path(__file__).resolve().parent / "data" / "tiny.csv"

HTTP_REPLY = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


@contextlib.contextmanager
def server(answer):
    """A TCP server on 127.0.0.1 that calls ``answer(connection)`` for each client; yields
    its tcp:// address. Connections stay open until the server stops."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop, open_connections = threading.Event(), []

    def serve():
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            open_connections.append(connection)
            with contextlib.suppress(OSError):
                answer(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for connection in open_connections:
            connection.close()
        listener.close()


def http(connection):
    connection.settimeout(2)
    connection.recv(65536)
    connection.sendall(HTTP_REPLY)


def garbage(connection):
    connection.sendall(b"\xff" * 4096)


def silent(connection):
    pass  # accepted, never answered


def spca_child(*args, timeout=1.0):
    """``spca ARGS`` in a child process whose scheduler connection timeout is ``timeout`` s."""
    code = ("import sys, spca_cli.distributed as d\n"
            f"d.CONNECT_TIMEOUT = {timeout!r}\n"
            "from spca_cli.cli import cli\n"
            "cli(sys.argv[1:], prog_name='spca')\n")
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                            text=True, timeout=120)
    return result, time.monotonic() - start


@pytest.mark.parametrize("answer", [http, garbage], ids=["http", "garbage"])
def test_an_address_that_answers_in_another_protocol_is_one_error_line(answer):
    with server(answer) as address:
        result, _ = spca_child("info", TINY, "--scheduler", address)
    assert result.returncode == 1
    assert result.stderr == (f"Error: cannot reach a Dask scheduler at {address}: it answers, "
                             "but not as a Dask scheduler does\n")


def test_an_address_that_never_answers_fails_at_the_connection_timeout():
    with server(silent) as address:
        result, seconds = spca_child("info", TINY, "--scheduler", address, timeout=1.0)
    assert result.returncode == 1
    assert result.stderr == (f"Error: cannot reach a Dask scheduler at {address}: no answer "
                             "within 1 s\n")
    assert seconds < 30  # the child's start (imports) and the 1 s wait, not a hang


def test_an_address_of_another_scheme_is_one_error_line():
    result = spca("info", TINY, "--scheduler", "http://127.0.0.1:9")
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot reach a Dask scheduler at "
                                    "http://127.0.0.1:9: unknown address scheme 'http'")


def test_local_workers_are_capped_at_the_cores_with_a_warning(monkeypatch):
    import distributed

    import spca_cli.processes as processes

    started = []

    class Recording(distributed.LocalCluster):
        def __init__(self, *args, n_workers=None, **kwargs):
            started.append(n_workers)
            super().__init__(*args, n_workers=n_workers, **kwargs)

    monkeypatch.setattr(processes, "usable_cores", lambda: 1)
    monkeypatch.setattr(distributed, "LocalCluster", Recording)
    result = spca("info", TINY, "--scheduler", "local:64", "--format", "json", "--top", "0",
                  "--eigenvalues", "0")
    assert result.exit_code == 0, result.output
    assert result.stderr == ("Warning: local:64 asks for 64 workers but this machine has 1 "
                             "core: starting 1, one single-threaded worker per core\n")
    assert started == [1]
