"""Progress display for the CLI: a rich progress bar on stderr, shown only on a terminal.

The library reports progress through plain callbacks (``progress(n_bytes)``) and knows nothing
about rich; these context managers give the CLI such a callback, or ``None`` when nothing should
be drawn (``--quiet``, or stderr redirected to a file or pipe, as under cron). rich is imported
only when stderr may be a terminal, not when the CLI starts.
"""

from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["byte_progress", "status", "stderr_console", "task_progress"]


def stderr_console():
    from rich.console import Console

    return Console(stderr=True)


def _drawing_console(quiet):
    """The console of stderr when something is drawn there (not ``quiet``, and rich takes
    stderr for a terminal), else None. A stderr that is no terminal, with neither
    ``TTY_COMPATIBLE`` nor ``FORCE_COLOR`` set (rich's only reasons to take such a stream for
    a terminal: with either, rich decides), is answered without importing rich: 35 ms of
    every run into a file, a pipe or cron."""
    if quiet:
        return None
    forced = (os.environ.get("TTY_COMPATIBLE", "") != "" or
              os.environ.get("FORCE_COLOR") is not None)
    try:
        plainly_not = not forced and not sys.stderr.isatty()
    except (AttributeError, OSError, ValueError):  # (no stream, or a closed one: rich decides)
        plainly_not = False
    if plainly_not:
        return None
    console = stderr_console()
    return console if console.is_terminal else None


@contextlib.contextmanager
def byte_progress(total_bytes, description, *, quiet=False):
    """Yield a callback ``advance(n_bytes)`` that moves a bar to ``total_bytes``, or None."""
    console = _drawing_console(quiet)
    if console is None or total_bytes <= 0:
        yield None
        return
    from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                               TimeRemainingColumn, TransferSpeedColumn)

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
               TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(description, total=total_bytes)
        yield lambda n: bar.advance(task, n)


@contextlib.contextmanager
def status(description, *, quiet=False):
    """A spinner with ``description`` for a step of unknown length (on a terminal only). Yields
    a callback ``say(text)`` that shows ``description: text`` beside the spinner (what a proof
    search is doing), or None where nothing is drawn."""
    console = _drawing_console(quiet)
    if console is None:
        yield None
        return
    with console.status(description) as spinner:
        yield lambda text: spinner.update(f"{description}: {text}")


@contextlib.contextmanager
def task_progress(*, quiet=False):
    """Yield a callback ``progress(description, done, total)`` drawing one bar, or None."""
    console = _drawing_console(quiet)
    if console is None:
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description}"), BarColumn(),
               TextColumn("{task.completed}/{task.total}"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("", total=None)

        def advance(description, done, total):
            bar.update(task, description=description, completed=done, total=total)

        yield advance
