"""What a CLI start imports. ``import spca_cli.cli``, ``spca --help``, every command's
``--help`` and ``spca --version`` load none of NumPy, SciPy, numba and scikit-learn (they took
0.4-0.6 s of every start): the options take their choices from light modules and the commands
import the library when they run. A raw text read still imports neither scikit-learn nor
scipy.optimize, while the stop list and the seeds are still scikit-learn's. spca's own process
(the command line's) collects garbage less often and, its corpus read, keeps the memory it
frees; a library caller's keeps the defaults."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner
import numpy as np
import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
from sklearn.utils import check_random_state

from spca_cli.cli import cli
from spca_cli.corpus.stopwords import english_stop_words
from spca_cli.seeds import random_state_of

#: prints the loaded modules of the libraries a start must not load
LOADED = ("import sys; print(sorted(m for m in sys.modules "
          "if m.split('.')[0] in ('numba', 'scipy', 'sklearn', 'numpy')))")


def _python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout


def _command_lines():
    """Every visible command as argument lists: ``[name]``, and ``[group, name]`` in a group."""
    found = []
    for name, command in sorted(cli.commands.items()):
        if command.hidden:
            continue
        found.append([name])
        if isinstance(command, click.Group):
            found += [[name, sub] for sub, c in sorted(command.commands.items()) if not c.hidden]
    return found


def test_importing_the_cli_loads_no_numeric_library():
    assert _python("import spca_cli.cli; " + LOADED).strip() == "[]"


def test_help_and_version_load_no_numeric_library():
    runs = [["--help"], ["--version"], *([*line, "--help"] for line in _command_lines())]
    code = ("from spca_cli.cli import cli\n"
            f"for args in {runs!r}:\n"
            "    assert cli.main(args, prog_name='spca', standalone_mode=False) == 0, args\n"
            + LOADED)
    assert _python(code).strip().splitlines()[-1] == "[]"


def test_help_lists_every_command():
    spca = Path(sys.executable).with_name("spca")
    if not spca.exists():
        pytest.skip(f"no spca console script beside {sys.executable}")
    out = subprocess.run([str(spca), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stderr == ""
    listed = out.stdout.split("Commands:\n", 1)[1].splitlines()
    names = [line.split()[0] for line in listed if line.strip()]
    assert names == sorted(n for n, c in cli.commands.items() if not c.hidden)
    assert {"topics", "info", "spectrum", "ingest", "daily", "datasets", "reproduce"} <= set(names)


def test_a_cli_start_and_a_raw_text_read_import_neither_sklearn_nor_scipy_optimize(tmp_path):
    tweets = tmp_path / "tweets.jsonl"
    tweets.write_text('{"text": "The flight was late again @united"}\n'
                      '{"text": "Late flight, lost bags"}\n', encoding="utf-8")
    code = ("import sys, spca_cli.cli\n"
            "from spca_cli.corpus import read_corpus\n"
            f"c = read_corpus({str(tweets)!r}, min_count=1)\n"
            "print(sorted(map(str, c.vocabulary)), 'sklearn' in sys.modules, "
            "'scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['bags', 'flight', 'late', 'lost'] False False"


def test_the_english_stop_list_is_scikit_learns():
    assert english_stop_words() == ENGLISH_STOP_WORDS
    assert "the" in english_stop_words() and "flight" not in english_stop_words()


@pytest.mark.parametrize("seed", [0, 7, 2 ** 32 - 1])
def test_a_seed_gives_scikit_learns_stream(seed):
    assert np.array_equal(random_state_of(seed).rand(5), check_random_state(seed).rand(5))


def test_a_random_state_is_used_as_is_and_a_float_is_refused():
    rng = np.random.RandomState(3)
    assert random_state_of(rng) is rng
    assert isinstance(random_state_of(None), np.random.RandomState)
    with pytest.raises(ValueError, match="cannot seed"):
        random_state_of(1.5)


#: prints the garbage collector's thresholds: Python's, after importing the library, in spca's own
#: process (the command line's, a worker's), which collects less often
THRESHOLDS = """
import gc
before = gc.get_threshold()
import spca_cli.topics, spca_cli.cli
imported = gc.get_threshold()
from spca_cli.processes import own_process
own_process()
print(before, imported, gc.get_threshold(), sep='\\n')
"""


def test_only_spcas_own_processes_collect_less_often():
    before, imported, own = _python(THRESHOLDS).splitlines()
    assert imported == before  # importing the library leaves Python's default
    assert own == "(1000000, 20, 20)"


def test_the_command_line_is_spcas_own_process():
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print(gc.get_threshold()))\n"
            "sys.argv = ['spca', '--version']\n"
            "from spca_cli.cli import main\n"
            "main()\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0
    assert run.stdout.startswith("spca, version ")
    assert run.stdout.splitlines()[-1] == "(1000000, 20, 20)"


#: the command line's end (``end_process``): an exit handler registered before it runs writes
#: to stderr, and a thread that is not a daemon, still running, finishes its work first
ENDING = """
import atexit, sys, threading, time
atexit.register(lambda: print("handler ran", file=sys.stderr))
if sys.argv[1] == "thread":
    def late():
        time.sleep(0.3)
        print("thread done", file=sys.stderr)
    threading.Thread(target=late).start()
sys.argv = ["spca", *sys.argv[2:]]
from spca_cli.cli import main
main()
"""


@pytest.mark.parametrize("thread", [False, True])
@pytest.mark.parametrize("args, status, out, err", [
    (["--version"], 0, "spca, version ", ""),
    (["topics", "/no/such/file"], 1, "", "Error: /no/such/file: file not found"),
    (["topics", "--no-such-option"], 2, "", "Error: No such option '--no-such-option'"),
])
def test_the_command_line_ends_with_its_status_after_its_exit_handlers(thread, args, status,
                                                                       out, err):
    run = subprocess.run([sys.executable, "-c", ENDING, "thread" if thread else "-", *args],
                         capture_output=True, text=True)
    assert run.returncode == status
    assert run.stdout.startswith(out)
    lines = run.stderr.splitlines()
    assert err in run.stderr
    assert lines[-1] == "handler ran"
    assert ("thread done" in lines) == thread


def test_the_command_lines_whole_output_reaches_a_pipe():
    # stdout is flushed before the process ends without the interpreter's teardown
    sample = Path(__file__).resolve().parents[1] / "data_samples" / "docword.kos-sample.txt.gz"
    run = subprocess.run([sys.executable, "-m", "spca_cli", "topics", str(sample), "-k", "3",
                          "-c", "2", "--format", "json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    import json

    doc = json.loads(run.stdout)
    assert [len(c["words"]) for c in doc["components"]] == [3, 3]


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

if sys.argv[1] == "kept":
    from spca_cli.processes import keep_freed_memory
    assert keep_freed_memory()
print(second_array_faults())
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc",
                    reason="only the GNU C library's allocator is told to keep memory (mallopt)")
def test_freed_memory_is_kept_for_the_next_arrays_once_asked():
    def faults(mode):
        return int(subprocess.run([sys.executable, "-c", REUSE, mode], capture_output=True,
                                  text=True, check=True).stdout)

    assert faults("default") > 0  # the C library's default: a new mapping, touched again
    assert faults("kept") == 0


ADVICE = """
from spca_cli.processes import huge_page_advice, keep_freed_memory
before = huge_page_advice(True)
keep_freed_memory()
print(before, huge_page_advice(True), huge_page_advice(False))
"""


def test_memory_kept_for_later_arrays_carries_no_huge_page_advice():
    # NumPy's advice to use transparent huge pages is off from there on (a fault in advised
    # memory can wait on the kernel's compaction), and it can be set back (the benchmark's NMF)
    out = subprocess.run([sys.executable, "-c", ADVICE], capture_output=True, text=True,
                         check=True, env={**os.environ, "NUMPY_MADVISE_HUGEPAGE": "1"}).stdout
    assert out.split() == ["True", "False", "True"]


@pytest.mark.parametrize("own", [True, False])
def test_only_the_command_lines_own_process_keeps_freed_memory(monkeypatch, own):
    import spca_cli.processes as processes
    from spca_cli.cli import OWN_PROCESS

    asked = []
    monkeypatch.setattr(processes, "keep_freed_memory", lambda: asked.append(True))
    sample = Path(__file__).resolve().parents[1] / "data_samples" / "docword.kos-sample.txt.gz"
    result = CliRunner().invoke(cli, ["topics", str(sample), "-k", "3", "-c", "1"],
                                obj=OWN_PROCESS if own else None)
    assert result.exit_code == 0, result.output
    assert asked == ([True] if own else [])


def test_a_default_run_keeps_every_kernel_in_numbas_cache():
    """The bundled sample's default run as a user runs it: no kernel it uses is left out of
    numba's cache (numba says "Cannot cache compiled function ..." for one that reads a global
    it cannot save, e.g. ``numba.get_num_threads()``, and compiles it again in every process,
    this one included: seconds of each run), and the run reports nothing else either."""
    from conftest import REPO

    sample = str(REPO / "data_samples" / "docword.kos-sample.txt.gz")
    done = subprocess.run([sys.executable, "-m", "spca_cli", "topics", sample, "--format",
                           "json"], capture_output=True, text=True, check=True)
    assert "Cannot cache" not in done.stderr
    doc = json.loads(done.stdout)
    assert doc["notes"] == []
    assert [c["certified_ratio"] >= 0.99 for c in doc["components"]] == [True] * 5
