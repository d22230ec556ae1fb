"""Progress bars: drawn on a terminal's stderr only, never with --quiet or under cron."""

from __future__ import annotations

import io
import json

from click.testing import CliRunner
from rich.console import Console

from spca_cli import progress
from spca_cli.cli import cli


def test_bar_only_on_a_terminal(monkeypatch):
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
