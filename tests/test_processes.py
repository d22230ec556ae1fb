"""spca's own processes (the command line's, a worker's) collect garbage less often and keep
freed memory for reuse; a library caller's process keeps Python's and the C library's
defaults."""

import platform
import subprocess
import sys

import pytest

PROBE = """
import gc
before = gc.get_threshold()
import spca_cli.topics, spca_cli.cli
imported = gc.get_threshold()
from spca_cli.processes import own_process
own_process()
print(before, imported, gc.get_threshold(), sep='\\n')
"""

# page faults of a second 100 MB array, allocated after a first one was freed
REUSE = """
import resource, sys
import numpy as np

def second_array_faults():
    a = np.ones(100 << 17)
    del a
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    b = np.ones(100 << 17)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

if sys.argv[1] == "own":
    from spca_cli.processes import own_process
    own_process()
print(second_array_faults())
"""


def _run(code, *args):
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True).stdout.splitlines()


def test_only_spcas_own_processes_collect_less_often():
    # Python's default, unchanged by importing the library; then spca's own process's
    assert _run(PROBE) == ["(700, 10, 10)", "(700, 10, 10)", "(50000, 20, 20)"]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc",
                    reason="only the GNU C library's allocator is tuned (mallopt)")
def test_spcas_own_process_reuses_freed_memory():
    fresh = int(_run(REUSE, "library")[0])
    reused = int(_run(REUSE, "own")[0])
    assert fresh > 0  # the C library's default: a new mapping, touched again
    assert reused == 0


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
