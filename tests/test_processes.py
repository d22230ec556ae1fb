"""The command line's own process collects garbage less often and skips the shutdown's
collections; a library caller's process keeps Python's defaults."""

import subprocess
import sys

PROBE = """
import gc
before = gc.get_threshold()
import spca_cli.topics, spca_cli.cli
imported = gc.get_threshold()
from spca_cli.processes import quick_exit
quick_exit()
print(before, imported, gc.get_threshold(), sep='\\n')
"""


def test_only_the_command_lines_process_collects_less_often():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    # Python's default, unchanged by importing the library; then the command line's
    assert out == ["(700, 10, 10)", "(700, 10, 10)", "(50000, 20, 20)"]


def test_the_command_line_sets_it_before_its_command():
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print(gc.get_threshold()))\n"
            "sys.argv = ['spca', '--version']\n"
            "from spca_cli.cli import main\n"
            "main()\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0
    assert run.stdout.splitlines()[-1] == "(50000, 20, 20)"
    assert run.stdout.startswith("spca, version ")
