"""spca's own processes (the command line's, a worker's) collect garbage less often; a library
caller's process keeps Python's defaults."""

import subprocess
import sys

PROBE = """
import gc
before = gc.get_threshold()
import spca_cli.topics, spca_cli.cli
imported = gc.get_threshold()
from spca_cli.processes import own_process
own_process()
print(before, imported, gc.get_threshold(), sep='\\n')
"""


def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.splitlines()


def test_only_spcas_own_processes_collect_less_often():
    before, imported, own = _run(PROBE)
    assert imported == before  # importing the library leaves Python's default
    assert own == "(50000, 20, 20)"


def test_the_command_line_is_spcas_own_process():
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print(gc.get_threshold()))\n"
            "sys.argv = ['spca', '--version']\n"
            "from spca_cli.cli import main\n"
            "main()\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0
    assert run.stdout.startswith("spca, version ")
    assert run.stdout.splitlines()[-1] == "(50000, 20, 20)"
