"""Running the CLI in tests: one call, and the one-line error contract."""

from __future__ import annotations

from click.testing import CliRunner

from spca_cli.cli import cli


def spca(*args):
    """Run ``spca ARGS`` in-process; a crash (any exception but SystemExit) fails the test."""
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def assert_error(result, message):
    """Exit 1 and exactly one line ``Error: MESSAGE`` (SPEC)."""
    assert result.exit_code == 1
    assert result.output == f"Error: {message}\n"
