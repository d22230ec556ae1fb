"""Progress bars: drawn on a terminal's stderr only, never with --quiet or under cron."""

from __future__ import annotations

import io
import json

from click.testing import CliRunner
from rich.console import Console

from spca_cli import progress
from spca_cli.cli import cli


def test_bar_only_on_a_terminal(monkeypatch):
    # (pytest's stderr is no terminal; FORCE_COLOR makes rich, here the console below, decide)
    monkeypatch.setenv("FORCE_COLOR", "1")
    screen = io.StringIO()
    monkeypatch.setattr(progress, "stderr_console",
                        lambda: Console(file=screen, force_terminal=True, width=80))
    with progress.byte_progress(1000, "Reading") as advance:
        assert advance is not None
        advance(600)
        advance(400)
    assert "Reading" in screen.getvalue()
    with progress.byte_progress(1000, "Reading", quiet=True) as advance:
        assert advance is None
    with progress.task_progress(quiet=False) as advance:
        advance("trial", 1, 3)


def test_not_a_terminal_means_no_bar(monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # (rich decides: the console below says no)
    monkeypatch.setattr(progress, "stderr_console",
                        lambda: Console(file=io.StringIO(), force_terminal=False))
    with progress.byte_progress(1000, "Reading") as advance:
        assert advance is None
    with progress.task_progress() as advance:
        assert advance is None


def test_cli_output_stays_clean_when_stderr_is_a_pipe(tmp_path):
    (tmp_path / "docs.txt").write_text("apples and pears\napples and plums\npears plums\n")
    result = CliRunner().invoke(cli, ["info", str(tmp_path / "docs.txt"), "--format", "json",
                                      "--min-count", "1"])
    assert result.exit_code == 0
    assert result.stderr == ""  # no bar, no spinner: stderr is not a terminal here
    assert json.loads(result.stdout)["documents"] == 3


def test_a_run_with_stderr_in_a_pipe_imports_neither_rich_nor_scipy_io():
    """A stderr that is no terminal draws nothing, and is told so without importing rich (35 ms
    of a cron run's start); a JSON report needs no rich and a UCI corpus no scipy.io. With
    FORCE_COLOR, rich is asked, as it would draw on a pipe then."""
    import os
    import subprocess
    import sys

    from conftest import REPO

    code = ("import sys\nfrom spca_cli.cli import cli\n"
            "try:\n    cli(['info', sys.argv[1], '--format', 'json'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] if m.startswith('rich') else m for m in sys.modules\n"
            "              if m.startswith(('rich', 'scipy.io'))}))")
    sample = str(REPO / "data_samples" / "docword.kos-sample.txt.gz")
    env = {key: value for key, value in os.environ.items()
           if key not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    plain = subprocess.run([sys.executable, "-c", code, sample], env=env, capture_output=True,
                           text=True, check=True)
    report, modules = plain.stdout.rsplit("\n", 2)[:2]
    assert modules == "[]", plain.stderr
    assert plain.stderr == ""
    assert json.loads(report)["documents"] == 300
    forced = subprocess.run([sys.executable, "-c", code, sample],
                            env={**env, "FORCE_COLOR": "1"}, capture_output=True, text=True,
                            check=True)
    assert forced.stdout.strip().splitlines()[-1] == "['rich']", forced.stderr
