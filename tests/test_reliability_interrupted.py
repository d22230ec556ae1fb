"""Reliability: a run stopped by SIGTERM removes its temporary folders (the copy of standard
input in TMPDIR, the row blocks a distributed ``ingest -o DIR`` writes beside DIR) and exits
143; what a run killed by SIGKILL leaves is removed by the next run that makes such a folder,
when its name says it was this host's and its process no longer lives.

The runs are child processes; a patched step holds each one at the moment that matters (stdin
kept open, or the manifest write of a distributed save) until the test sends the signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _cli import spca

TINY = Path(__file__).resolve().parent / "data" / "tiny.csv"


def wait_for(found, seconds=60):
    """Poll ``found()`` until it is truthy (returned) or ``seconds`` pass (the test fails)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail("the child never reached the step the test waits for")


def entries(folder, prefix):
    return sorted(n for n in os.listdir(folder) if n.startswith(prefix))


def host():
    from spca_cli.files import _host

    return _host()


def dead_pid():
    """The id of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


# ---------------------------------------------------------------------- standard input
def spooling_child(tmpdir):
    """``spca info -`` whose standard input stays open: it waits in the copy to TMPDIR."""
    child = subprocess.Popen([sys.executable, "-m", "spca_cli", "info", "-", "--input-format",
                              "text"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env={**os.environ, "TMPDIR": str(tmpdir)})
    child.stdin.write(b"fares went up\n" * 1000)
    child.stdin.flush()
    wait_for(lambda: entries(tmpdir, "spca-stdin-"))
    return child


def test_sigterm_while_standard_input_is_spooled_removes_the_spool(tmp_path):
    child = spooling_child(tmp_path)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 128 + signal.SIGTERM
    assert err == b""
    assert os.listdir(tmp_path) == []


def test_the_next_stdin_run_removes_the_spool_of_a_killed_run(tmp_path, monkeypatch):
    child = spooling_child(tmp_path)
    child.kill()
    child.communicate(timeout=60)
    left = entries(tmp_path, "spca-stdin-")
    assert len(left) == 1 and left[0].startswith(f"spca-stdin-{host()}-{child.pid}-")
    # a live process's spool, and one of another machine (on shared storage), stay
    live = tmp_path / f"spca-stdin-{host()}-{os.getpid()}-live"
    other = tmp_path / f"spca-stdin-otherhost-{dead_pid()}-other"
    live.mkdir(), other.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    result = spca_stdin("fares went up\nfares went down\n")
    assert result.exit_code == 0, result.output
    assert entries(tmp_path, "spca-stdin-") == sorted([live.name, other.name])


def spca_stdin(text):
    from click.testing import CliRunner

    from spca_cli.cli import cli

    return CliRunner().invoke(cli, ["info", "-", "--input-format", "text", "--format", "json",
                                    "--eigenvalues", "0", "--min-count", "1"], input=text)


# ---------------------------------------------------------------------- ingest --scheduler
# the child's save stops at its manifest, after the workers wrote the blocks, until signalled
_HELD_INGEST = """
import json, sys, time
import spca_cli.distributed.corpus as corpus

class Held:
    @staticmethod
    def dump(*args, **kwargs):
        open(sys.argv[1], "w").close()
        time.sleep(600)

corpus.json = Held
from spca_cli.cli import cli
cli(sys.argv[2:], prog_name="spca")
"""


def held_ingest(tmp_path, out):
    marker = tmp_path / "saving"
    child = subprocess.Popen([sys.executable, "-c", _HELD_INGEST, str(marker), "ingest", TINY,
                              "-o", out, "-q", "--scheduler", "local:1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(marker.exists, seconds=120)
    assert len(entries(out.parent, ".spca-blocks-")) == 1
    return child


def test_sigterm_during_a_distributed_ingest_removes_its_block_folder(tmp_path):
    pytest.importorskip("distributed", reason="--scheduler needs the dask extra: "
                                              "pip install 'spca-cli[dask]'")
    out = tmp_path / "corpus"
    child = held_ingest(tmp_path, out)
    child.send_signal(signal.SIGTERM)
    child.communicate(timeout=120)
    assert child.returncode == 128 + signal.SIGTERM
    assert entries(tmp_path, ".spca-") == []
    assert not out.exists()


def test_the_next_distributed_ingest_removes_the_block_folder_of_a_killed_one(tmp_path):
    pytest.importorskip("distributed", reason="--scheduler needs the dask extra: "
                                              "pip install 'spca-cli[dask]'")
    out = tmp_path / "corpus"
    child = held_ingest(tmp_path, out)
    child.kill()
    child.communicate(timeout=120)
    left = entries(tmp_path, ".spca-blocks-")
    assert len(left) == 1 and left[0].startswith(f".spca-blocks-{host()}-{child.pid}-")
    live = tmp_path / f".spca-blocks-{host()}-{os.getpid()}-live"
    live.mkdir()
    result = spca("ingest", TINY, "-o", out, "-q", "--scheduler", "local:1")
    assert result.exit_code == 0, result.output
    assert entries(tmp_path, ".spca-") == [live.name]
    assert (out / "spca-corpus.json").is_file()


# ---------------------------------------------------------------------- signals and workers
def test_sigterm_inside_a_compiled_call_is_the_exit_not_a_system_error():
    """numba runs Python code inside a compiled call (it unpickles a kernel's constants at its
    first call): SIGTERM's SystemExit raised there comes back as a SystemError caused by it;
    the command exits 143 as for SIGTERM anywhere else."""
    from spca_cli.cli import sigterm_as_exit

    with pytest.raises(SystemExit) as stopped:
        with sigterm_as_exit():
            try:
                raise SystemExit(143)
            except SystemExit as exc:
                raise SystemError("CPUDispatcher(...) returned a result with an exception "
                                  "set") from exc
    assert stopped.value.code == 143
    with pytest.raises(SystemError):  # (any other SystemError is not ours to change)
        with sigterm_as_exit():
            raise SystemError("something else")


@pytest.mark.parametrize("name, stop", [("SIGTERM", SystemExit), ("SIGINT", KeyboardInterrupt)])
def test_a_signal_inside_an_llvm_callback_comes_again_outside_it(name, stop):
    """On a first run numba compiles kernels, and LLVM calls llvmlite's Python hooks from C,
    which print and drop an exception raised in them (the run then went on to the end, exit
    0): SIGTERM or Ctrl-C arriving there is delivered again once the main thread is back in
    its own code, and the command exits 143, or as interrupted."""
    import os
    import signal
    import time

    from spca_cli.cli import sigterm_as_exit

    hook = compile(f"def hook():\n    signal.raise_signal(signal.{name})\n    return 'done'\n",
                   os.path.join(os.sep, "site-packages", "llvmlite", "binding", "hook.py"), "exec")
    scope = {"signal": signal}
    exec(hook, scope)
    returned = []
    with pytest.raises(stop) as stopped:
        with sigterm_as_exit():
            returned.append(scope["hook"]())  # (no exception inside the hook)
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline:
                time.sleep(0.01)
    assert returned == ["done"]
    assert stop is KeyboardInterrupt or stopped.value.code == 143
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_signal_deferred_as_the_run_ends_ends_with_it():
    """A Ctrl-C deferred from an LLVM callback in the run's last moments is not delivered after
    the command has finished (a KeyboardInterrupt traceback in its exit)."""
    import os
    import signal
    import time

    from spca_cli.cli import sigterm_as_exit

    hook = compile("def hook():\n    signal.raise_signal(signal.SIGINT)\n",
                   os.path.join(os.sep, "site-packages", "llvmlite", "binding", "hook.py"), "exec")
    scope = {"signal": signal}
    exec(hook, scope)
    with sigterm_as_exit():
        scope["hook"]()
    time.sleep(0.3)  # (past the re-delivery: nothing comes)


def _with_a_worker(body, before=""):
    """A script run in a child process: ``before``, then ``body`` inside a pool of one spawned
    worker started by spca's ``worker_start`` (``pool``)."""
    code = ("import signal, multiprocessing as mp\n"
            "from concurrent.futures import ProcessPoolExecutor\n"
            "from concurrent.futures.process import BrokenProcessPool\n"
            "from spca_cli.groups import GroupWorkers\n"
            "from spca_cli.processes import worker_start\n"
            "if __name__ == '__main__':\n" + before +
            "    with ProcessPoolExecutor(1, mp_context=mp.get_context('spawn'),\n"
            "                             initializer=worker_start) as pool:\n" + body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_ctrl_c_ends_a_worker_without_a_word():
    """Ctrl-C reaches every process of the terminal's group: a worker (spca topics --by, a
    parallel read) ends at once and prints nothing; the parent reports the interruption."""
    out = _with_a_worker(
        "        try:\n"
        "            pool.submit(signal.raise_signal, signal.SIGINT).result()\n"
        "        except BrokenProcessPool:\n"
        "            print('worker ended')\n")
    assert out.stdout.strip() == "worker ended"
    assert out.stderr == ""


def test_a_worker_started_with_ctrl_c_ignored_keeps_ignoring_it():
    """A run started with SIGINT ignored (``spca ... &`` in a script) goes on through a Ctrl-C:
    its workers inherit the ignore; and --by's workers always start with it (the process that
    started them stops them), so a Ctrl-C while they start prints nothing of theirs."""
    out = _with_a_worker(
        "        pool.submit(signal.raise_signal, signal.SIGINT).result()\n"
        "        print('worker alive', pool.submit(int, '7').result())\n"
        "    signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "    with GroupWorkers(1) as workers:\n"
        "        print(workers.pool.submit(signal.getsignal, signal.SIGINT).result().name)\n"
        "    print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n",
        before="    signal.signal(signal.SIGINT, signal.SIG_IGN)\n")
    assert out.stdout.split() == ["worker", "alive", "7", "SIG_IGN", "True"], out.stderr
    assert out.stderr == ""
