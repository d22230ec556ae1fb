"""Output into pipes and files: a reader that stops early (``| head -3``) ends the command with
status 0 and nothing on stderr; tables sent to a pipe are plain text (no box-drawing
characters) and a file's name is never broken over lines."""

from __future__ import annotations

import io
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich import box
from rich.console import Console

from spca_cli.cli import closed_stdout_ends_quietly, new_table

REPO = Path(__file__).resolve().parent.parent
SAMPLE = "data_samples/docword.kos-sample.txt.gz"
#: U+2500-U+257F, the Box Drawing block
BOX_DRAWING = re.compile("[\u2500-\u257f]")


def _spca():
    script = Path(sys.executable).with_name("spca")
    return [str(script)] if script.exists() else [sys.executable, "-m", "spca_cli"]


def _piped_into_head(args):
    """``spca ARGS | head -3`` in bash with pipefail: the status is spca's unless head's fails."""
    line = f"set -o pipefail; {shlex.join([*_spca(), *args])} | head -3"
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=REPO)


@pytest.mark.parametrize("args, first", [
    # each writes well over a pipe's 64 kB, so spca is still writing when head has gone
    (["info", SAMPLE, "--top", "5000", "-q"], SAMPLE),
    (["info", SAMPLE, "--top", "5000", "-q", "--format", "json"], "{"),
    (["spectrum", SAMPLE, "--top", "3000", "-q"], f"{SAMPLE}: trace(A) = 82,368"),
    (["--help"], "Usage: spca [OPTIONS] COMMAND [ARGS]..."),
    (["topics", "--help"], "Usage: spca topics [OPTIONS] CORPUS|INPUT|MATRIX..."),
])
def test_a_reader_that_stops_early_ends_spca_quietly(args, first):
    out = _piped_into_head(args)
    assert (out.returncode, out.stderr) == (0, "")
    lines = out.stdout.splitlines()
    assert len(lines) == 3 and lines[0] == first


def test_the_help_into_a_reader_that_reads_nothing_ends_quietly():
    out = subprocess.run(["bash", "-c", f"set -o pipefail; {shlex.join(_spca())} --help | true"],
                         capture_output=True, text=True)
    assert (out.returncode, out.stderr) == (0, "")


def test_tables_into_a_pipe_are_plain_text_with_the_path_whole(tmp_path):
    folder = tmp_path / ("a-folder-whose-name-is-long-enough-to-wrap-any-table-title-" * 2)
    folder.mkdir()
    data = folder / "docword.kos-sample-named-at-length.txt.gz"
    shutil.copy(REPO / SAMPLE, data)
    shutil.copy(REPO / "data_samples/vocab.kos-sample.txt",
                folder / "vocab.kos-sample-named-at-length.txt")
    for args, heading in ([["info", data, "--top", "3"], str(data)],
                          [["spectrum", data, "--top", "3"], f"{data}: trace(A) = 82,368"]):
        out = subprocess.run([*_spca(), *map(str, args), "-q"], capture_output=True, text=True)
        assert (out.returncode, out.stderr) == (0, "")
        assert BOX_DRAWING.search(out.stdout) is None, out.stdout
        assert out.stdout.isascii()
        lines = out.stdout.splitlines()
        assert lines[0] == heading  # the whole path on one line, above the table
        assert lines[1].startswith("+-") and lines[2].startswith("| ")
    assert "| kind        | uci" in subprocess.run(
        [*_spca(), "info", str(data), "-q"], capture_output=True, text=True).stdout


def test_tables_keep_their_box_drawing_on_a_terminal():
    terminal = Console(file=io.StringIO(), force_terminal=True, width=80)
    assert new_table(terminal).box is box.HEAVY_HEAD
    assert new_table(Console(file=io.StringIO())).box is box.ASCII


def test_a_broken_pipe_that_is_not_stdout_is_no_quiet_end():
    # stdout here is not a pipe whose reader has gone: the error is someone else's
    with pytest.raises(BrokenPipeError):
        with closed_stdout_ends_quietly():
            raise BrokenPipeError(32, "Broken pipe")
