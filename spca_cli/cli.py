"""The ``spca`` command line: a thin click shell over the library.

Each command parses its options, calls the library, and prints. Library errors
(:class:`~spca_cli.errors.SpcaError`) are turned into click's ``Error: <message>`` with exit
status 1 in one place, :class:`SpcaGroup`; anything else is a bug and keeps its traceback.

Adding a command that reads corpora takes three decorators and one call::

    @cli.command()
    @click.argument("inputs", nargs=-1, required=True, metavar="CORPUS|INPUT...")
    @labels_option
    @ingest_options
    @quiet_option
    def topics(inputs, labels, quiet, **ingest_kwargs):
        data = load_from_options(inputs, labels=labels, quiet=quiet, **ingest_kwargs)
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import math
import os
import re
import shutil
import signal
import sys
import time
import warnings
from pathlib import Path

import click

# Only light modules here (the standard library, click, and what the options' choices and
# defaults need): every start, --help and --version included, pays for what is imported at the
# top. The library (NumPy, SciPy, numba kernels, rich) is imported inside the commands.
from spca_cli.corpus.kinds import FORMATS, NEAR_THRESHOLD, WEIGHTINGS
from spca_cli.corpus.sources import open_inputs
from spca_cli.distributed import CONNECT_TIMEOUT
from spca_cli.errors import SpcaError, SpcaOutputError, SpcaParameterError, SpcaUsageError
from spca_cli.files import (TMP_PREFIX, atomic_output, check_output_file, check_output_folder,
                            output_errors)
from spca_cli.params import DEFAULTS, DEFLATIONS, SEED_MAX
from spca_cli.progress import byte_progress, status, task_progress

__all__ = ["cli", "ingest_options", "labels_option", "quiet_option", "load_from_options",
           "SpcaGroup", "CONTEXT_SETTINGS"]

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


class WarningLines(logging.Handler):
    """The library's warnings (its loggers at WARNING, and Python warnings) as ``Warning: ...``
    lines on stderr, except under ``--quiet``; all of them are kept in ``messages`` for
    ``spca daily --log``. Installed for one command invocation by :class:`SpcaGroup`."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def note(self, message):
        message = " ".join(str(message).split())  # one line, whatever the source
        self.messages.append(message)
        ctx = click.get_current_context(silent=True)
        if ctx is None or not ctx.params.get("quiet"):
            click.echo(f"Warning: {message}", err=True)

    def emit(self, record):
        self.note(record.getMessage())

    def show_python_warning(self, message, category, *_args, **_kwargs):
        self.note(message)


def _one_line(text):
    """A message as one line: a parser's multi-line error joined at its line breaks."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def warning_lines():
    """The :class:`WarningLines` of the running command (a fresh one outside the CLI)."""
    ctx = click.get_current_context(silent=True)
    found = ctx.find_root().meta.get("spca.warnings") if ctx is not None else None
    return found if found is not None else WarningLines()


#: Library parameters the CLI takes under another name: the input kind ``format`` of
#: load_input is ``--input-format`` (``--format`` is an output's), and run_topics's
#: ``n_components`` and ``random_state`` are ``--components`` and ``--seed``
_CLI_NAMES = {"format": "input_format", "n_components": "components", "random_state": "seed"}


def _option_of(command):
    """The function from a library parameter's name to ``command``'s option for it, derived from
    the command's click options (a name the command has no option for stays as it is)."""
    flags = {}
    for param in getattr(command, "params", ()):
        if isinstance(param, click.Option):
            long = [opt for opt in param.opts if opt.startswith("--")]
            own = "--" + param.name.replace("_", "-")
            flags[param.name] = own if own in long else (long or param.opts)[0]

    def option(name):
        return flags.get(_CLI_NAMES.get(name, name), name)
    return option


def cli_message(exc, command=None):
    """A library error as one line in the CLI's words: its parameters named by the options of
    ``command`` (default: the running command)."""
    if command is None:
        ctx = click.get_current_context(silent=True)
        command = ctx.command if ctx is not None else None
    return _one_line(exc.worded(_option_of(command)))


@contextlib.contextmanager
def sigterm_as_exit():
    """While the block runs, SIGTERM raises SystemExit(143) (128 + SIGTERM, as a shell reports
    a terminated command) in the main thread, so every cleanup runs as for an error: the
    temporary block folder of ``ingest --scheduler``, the copy of standard input, atomic
    outputs' temp files, a local Dask cluster. A second SIGTERM does not interrupt that
    cleanup. (SIGKILL runs none: the next run removes what it left, see
    :func:`spca_cli.files.remove_stale`.) SIGTERM or Ctrl-C arriving inside an LLVM callback
    comes again once the main thread is back in its own code (:func:`_redelivered`)."""
    timers = []  # the signals to come again (_redelivered), cancelled when the block ends

    def terminate(signum, frame):
        if _redelivered(signum, frame, timers):
            return
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    def interrupt(signum, frame):
        if _redelivered(signum, frame, timers):
            return
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except ValueError:  # not the main thread: signals are not ours to handle
        yield
        return
    # (a run started with Ctrl-C ignored, ``spca ... &`` in a script, keeps ignoring it)
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    except SystemError as exc:
        # a signal's exception raised while numba ran Python code inside a compiled call (it
        # unpickles constants at a kernel's first call): numba reports a SystemError caused by
        # it, which would have been a traceback; the exit (or Ctrl-C) is what happened
        cause = _signal_exception(exc)
        if cause is None:
            raise
        raise cause from None
    finally:
        for timer in timers:
            timer.cancel()
        signal.signal(signal.SIGTERM, previous)
        if previous_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous_int)


_REDELIVER_SECONDS = 0.05


def _redelivered(signum, frame, timers):
    """When ``frame`` is llvmlite's Python code, which LLVM calls from C (its object-cache hook,
    while numba compiles a kernel on a first run), an exception raised there is printed and
    dropped, and the run went on to the end: the signal is then sent again in
    :data:`_REDELIVER_SECONDS`, once this thread is back in code of its own (its timer joins
    ``timers``), and True returned."""
    if frame is None or f"{os.sep}llvmlite{os.sep}" not in frame.f_code.co_filename:
        return False
    import _thread
    import threading

    timer = threading.Timer(_REDELIVER_SECONDS, _thread.interrupt_main, (signum,))
    timer.daemon = True
    timer.start()
    timers.append(timer)
    return True


def _signal_exception(exc):
    """The SystemExit or KeyboardInterrupt among the causes of ``exc``, or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (SystemExit, KeyboardInterrupt)):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _stdout_reader_gone():
    """True when stdout is a pipe whose reading end is closed (``spca info FILE | head -3`` once
    head has exited): poll() reports POLLERR on the writing end of such a pipe. False for a
    terminal, a file, a pipe still read, or a stdout that is no file (a test's)."""
    import select

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    if not hasattr(select, "poll"):  # no poll(): trust the error
        return True
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & select.POLLERR for _fd, events in poller.poll(0))


@contextlib.contextmanager
def closed_stdout_ends_quietly():
    """A write to a stdout nobody reads any more ends the command with status 0 and no message,
    as ``head`` and every Unix filter expect; stdout is pointed at /dev/null first, so that the
    interpreter's last flush does not fail again (the Python docs' advice on SIGPIPE). A broken
    pipe of anything else (a socket, a child process) propagates."""
    try:
        yield
    except BrokenPipeError:
        if not _stdout_reader_gone():
            raise
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        raise click.exceptions.Exit(0) from None


class SpcaGroup(click.Group):
    """A click group that reports the library's errors as ``Error: ...`` with exit status 1,
    each parameter the error names shown as the option of the command that ran, turns SIGTERM
    into an exit that cleans up (:func:`sigterm_as_exit`), and ends quietly with status 0 when
    the reader of stdout has gone (:func:`closed_stdout_ends_quietly`): every command and every
    ``--help`` runs inside :meth:`make_context` (the group's own options) or :meth:`invoke`."""

    def make_context(self, info_name, args, parent=None, **extra):
        with closed_stdout_ends_quietly():  # spca --help | ..., spca --version | ...
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx):
        handler = WarningLines()
        ctx.meta["spca.warnings"] = handler
        library = logging.getLogger("spca_cli")
        library.addHandler(handler)
        try:
            with warnings.catch_warnings(), sigterm_as_exit(), closed_stdout_ends_quietly():
                warnings.showwarning = handler.show_python_warning
                return super().invoke(ctx)
        except SpcaUsageError as exc:
            command = self.get_command(ctx, ctx.invoked_subcommand or "")
            raise click.UsageError(cli_message(exc, command)) from None
        except SpcaError as exc:
            command = self.get_command(ctx, ctx.invoked_subcommand or "")
            raise click.ClickException(cli_message(exc, command)) from None
        except OSError as exc:
            # the boundary for the environment: a file that vanished, a full disk, a pipe
            # other than stdout; outputs are named by atomic_output already, this catches the
            # rest
            reason = exc.strerror or str(exc) or type(exc).__name__
            where = f"{exc.filename}: " if exc.filename else ""
            raise click.ClickException(f"{where}{reason}") from None
        finally:
            library.removeHandler(handler)


@click.group(cls=SpcaGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="spca-cli", prog_name="spca")
def cli():
    """Topics of a text corpus by sparse PCA, with certified bounds on their quality."""


#: the click context object of the command line's own process (:func:`main`)
OWN_PROCESS = {"own process": True}


def main():
    """The ``spca`` command (the console script and ``python -m spca_cli``): :func:`cli` in a
    process that ends with it (:func:`spca_cli.processes.own_process`, :func:`~spca_cli.processes.
    end_process`). Callers that go on after a command (tests, scripts) call :func:`cli` itself."""
    from spca_cli.processes import end_process, own_process

    own_process()
    try:
        cli(obj=OWN_PROCESS)
    except SystemExit as end:
        end_process(end.code)


# ---------------------------------------------------------------------- shared options
class FiniteFloatRange(click.FloatRange):
    """click's FloatRange without inf and nan: no option of spca means anything by them (a time
    limit of inf is no limit: leave the option out), and nan passes every range comparison
    into the library, whose message would name the Python parameter instead of the option."""

    def convert(self, value, param, ctx):
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)


def _ngram_option(ctx, param, value):
    if value is None:
        return None
    from spca_cli.corpus.tokenize import parse_ngram_range

    try:
        low, high = parse_ngram_range(value)
    except SpcaParameterError as exc:
        raise click.BadParameter(str(exc).removeprefix("ngrams ")) from None
    return f"{low}-{high}"


def _ingest_option_list(format_names):
    return [
        click.option(*format_names, "input_format", type=click.Choice(FORMATS), default="auto",
                     show_default=True,
                     help="Input kind; auto tells it from the file name. Required for - "
                          "(standard input)."),
        click.option("--vocab", metavar="FILE",
                     help="Vocabulary of a UCI docword file [default: vocab.NAME.txt beside it]."),
        click.option("--text-column", metavar="NAME",
                     help="CSV column / JSON field with the text [default: text]."),
        click.option("--time-column", metavar="NAME",
                     help="CSV column / JSON field with the time [default: created_at, "
                          "tweet_created or date]."),
        click.option("--since", metavar="DATE",
                     help="Keep documents from this date or ISO datetime on (UTC unless an "
                          "offset is given)."),
        click.option("--until", metavar="DATE",
                     help="Keep documents up to this date (the whole day) or ISO datetime."),
        click.option("--contains", metavar="WORD", multiple=True,
                     help="Keep documents containing WORD (repeat: any of them)."),
        click.option("--min-count", type=click.IntRange(min=1), metavar="N",
                     help="Drop words in fewer than N documents [default: 2; UCI 1]."),
        click.option("--min-length", type=click.IntRange(min=1), metavar="N",
                     help="Drop words shorter than N characters [default: 3; UCI 1]."),
        click.option("--stopwords", metavar="LIST,...",
                     help="Stop words to drop: comma-separated language names (english, "
                          "spanish, french, ...; english-2013 = the paper's exact recipe) and "
                          "files of one word per line, united; none = keep all "
                          "[default: english; UCI none]."),
        click.option("--lang", metavar="CODE", multiple=True,
                     help="Keep documents whose language field (JSON lang, CSV lang/language) "
                          "is CODE, e.g. en (repeat: any of them)."),
        click.option("--ngrams", metavar="MIN-MAX", callback=_ngram_option,
                     help="Terms of MIN to MAX consecutive words, e.g. 1-2 for words and "
                          "two-word phrases (stop words removed first) [default: 1-1]."),
        click.option("--weighting", type=click.Choice(WEIGHTINGS),
                     help="Matrix entries [default: binary; UCI count]."),
        click.option("--titles", metavar="FILE",
                     help="UCI: one title per document (in docID order), shown as the "
                          "documents' text."),
        click.option("--keep-duplicates/--drop-duplicates", "keep_duplicates", default=None,
                     help="Keep every document, or count each text once: texts equal once "
                          "lower-cased, without URLs, @handles, a leading 'RT @user:' and "
                          "extra spaces are exact duplicates, the first read stays [default: "
                          "drop for CSV and JSON lines, keep for text files]."),
        click.option("--near-duplicates", "near_duplicates", metavar="[THRESHOLD]",
                     type=FiniteFloatRange(0, 1, min_open=True), is_flag=False,
                     flag_value=NEAR_THRESHOLD,
                     help="Also set aside near duplicates: texts whose two-word shingles "
                          "have a Jaccard index of at least THRESHOLD (0 < THRESHOLD <= 1; "
                          f"alone: {NEAR_THRESHOLD}) with a text kept before them."),
    ]


def _stack(options):
    def decorator(fn):
        for option in reversed(options):
            fn = option(fn)
        return fn
    return decorator


#: Every ingest option of SPEC, for commands that read raw corpora (``ingest``, ``info``,
#: ``topics``, ``daily``). The input kind is ``--input-format`` because those commands use
#: ``--format`` for their output; ``ingest`` also accepts it as ``--format`` (SPEC).
ingest_options = _stack(_ingest_option_list(("--input-format",)))
_ingest_command_options = _stack(_ingest_option_list(("--format", "--input-format")))

labels_option = click.option(
    "--labels", metavar="FILE",
    help="Names of the rows of a .npy or the columns of a .mtx matrix, one per line.")
quiet_option = click.option("-q", "--quiet", is_flag=True,
                            help="No progress bar or summary on stderr.")
scheduler_option = click.option(
    "--scheduler", metavar="ADDRESS",
    help="Run on a Dask cluster: local:N (N single-threaded worker processes here; N above "
         "the cores is lowered to them, with a warning) or a scheduler address such as "
         f"tcp://HOST:8786, which must answer within {CONNECT_TIMEOUT:g} s [default: "
         "$DASK_SCHEDULER_ADDRESS; "
         "unset: one process]. Needs pip install 'spca-cli[dask]'.")
documents_option = click.option(
    "--documents", "n_documents", type=click.IntRange(min=0), default=3, show_default=True,
    metavar="N", help="Show each topic's N top-scoring documents (0: none).")


def load_from_options(inputs, *, labels=None, quiet=False, input_format="auto", scheduler=None,
                      **ingest_kwargs):
    """Load any input (SPEC's table) with the options of :func:`ingest_options`, drawing a
    progress bar on a terminal. Returns a Corpus or MatrixInput.

    ``inputs`` may hold ``-`` (stdin), folders and glob patterns
    (:func:`~spca_cli.corpus.sources.open_inputs`). With ``scheduler`` (``--scheduler`` or
    ``DASK_SCHEDULER_ADDRESS``) the input is read on a Dask cluster whose client lives as long
    as the command: a :class:`~spca_cli.distributed.corpus.DistributedCorpus`."""
    from spca_cli.corpus import load_input

    client = _cluster_client(scheduler)
    if client is not None:
        from spca_cli.distributed.load import load_distributed

        with status("Reading on the cluster", quiet=quiet):
            return load_distributed(client, inputs, labels=labels, input_format=input_format,
                                    **ingest_kwargs)
    with open_inputs(list(inputs), input_format) as resolved:
        total = sum(os.path.getsize(p) for p in resolved.files if os.path.isfile(p))
        with byte_progress(total, "Reading", quiet=quiet) as progress:
            return load_input(resolved, labels=labels, format=input_format, progress=progress,
                              **ingest_kwargs)


def _cluster_client(scheduler):
    """The Dask client of ``--scheduler`` (or DASK_SCHEDULER_ADDRESS) for this command, closed
    when it ends; None for the single-process path."""
    from spca_cli.distributed import connect, scheduler_address

    address = scheduler_address(scheduler)
    if address is None:
        return None
    ctx = click.get_current_context()
    root = ctx.find_root()
    if "spca.client" not in root.meta:
        root.meta["spca.client"] = root.with_resource(connect(address))
    return root.meta["spca.client"]


def input_files(inputs, *, labels=None, vocab=None, stopwords=None, titles=None, groups=None,
                **_other):
    """Every file a command may read: the inputs (folders and quoted globs expanded), the
    vocabulary beside a docword file or a .mtx, and the --vocab, --labels, --titles,
    --stopwords and --by (a groups file) files; outputs must be none of them."""
    import glob

    from spca_cli.corpus.kinds import vocab_path_for

    expanded = []
    for item in inputs:
        if os.path.isdir(item):
            expanded += [os.path.join(item, name) for name in sorted(os.listdir(item))]
        elif not os.path.exists(item) and glob.has_magic(item):
            expanded += sorted(glob.glob(item))
        elif item != "-":
            expanded.append(item)
    inputs = expanded
    files = [*inputs, labels, vocab, titles]
    if groups and os.path.isfile(groups):
        files.append(groups)
    files += [part for part in (stopwords or "").split(",") if os.path.isfile(part)]
    for path in inputs:
        files.append(vocab_path_for(path))
        for ext in (".mtx.gz", ".mtx"):
            if str(path).endswith(ext):
                files.append(str(path)[: -len(ext)] + ".vocab.txt")
    return [f for f in files if f]


# ---------------------------------------------------------------------- ingest
def _summary_line(corpus, output, seconds):
    from spca_cli.corpus.times import format_time

    span = ""
    if corpus.times is not None and len(corpus.times):
        i, j = corpus.times.argmin(), corpus.times.argmax()
        span = (f", {format_time(corpus.times[i], corpus.tz_offsets[i])[:10]} .. "
                f"{format_time(corpus.times[j], corpus.tz_offsets[j])[:10]}")
    return (f"{corpus.n_documents:,} documents x {corpus.n_words:,} words, "
            f"{corpus.nnz:,} nonzeros{_set_aside(corpus)}{span} -> {output} ({seconds:.1f} s)")


def _set_aside(corpus):
    """``", 364 duplicates set aside"`` for ingest's summary line, "" when none were."""
    from spca_cli.report import set_aside_text

    text = set_aside_text(corpus.duplicates)
    return ", " + text.removesuffix(", ") if text else ""


@cli.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--output", required=True, metavar="CORPUS.npz",
              help="The corpus file to write (with --scheduler: a folder of row blocks).")
@_ingest_command_options
@scheduler_option
@quiet_option
def ingest(inputs, output, quiet, scheduler, **ingest_kwargs):
    """Read a corpus and save its document-word matrix for later commands.

    \b
    Example:
        spca ingest tweets.csv -o tweets.npz --since 2015-02-17 --min-count 3
        spca ingest docword.kos.txt.gz -o kos.npz
    """
    from spca_cli.corpus import MatrixInput, save_corpus
    from spca_cli.distributed import scheduler_address

    distributed = scheduler_address(scheduler) is not None
    if distributed:  # a folder of row blocks
        from spca_cli.distributed.corpus import check_blocks_output

        check_output_folder(output, input_files(inputs, **ingest_kwargs))
        check_blocks_output(output)
    else:
        check_output_file(output, input_files(inputs, **ingest_kwargs))
    start = time.perf_counter()
    corpus = load_from_options(inputs, quiet=quiet, scheduler=scheduler, **ingest_kwargs)
    if isinstance(corpus, MatrixInput):
        raise SpcaParameterError(f"{corpus.path} is a matrix, not a corpus; give it to "
                                 "spca topics directly")
    if distributed:
        corpus.save(output)
        if not quiet:
            first, last = corpus.time_span()
            span = f", {first[:10]} .. {last[:10]}" if first else ""
            click.echo(f"{corpus.n_documents:,} documents x {corpus.n_words:,} words, "
                       f"{corpus.nnz:,} nonzeros{_set_aside(corpus)}{span} -> {output} "
                       f"({len(corpus.blocks)} row blocks, "
                       f"{time.perf_counter() - start:.1f} s)", err=True)
        return
    save_corpus(corpus, output)
    if not quiet:
        click.echo(_summary_line(corpus, output, time.perf_counter() - start), err=True)


# ---------------------------------------------------------------------- tables on stdout
#: the width of the tables written into a pipe or a file: wide enough that no cell wraps
_UNWRAPPED_WIDTH = 10_000


def stdout_console():
    """The rich console of a command's tables on stdout: on a terminal as rich draws them, at
    its width; into a pipe or a file nothing wrapped (and :func:`new_table` draws ASCII boxes).
    A closed pipe raises BrokenPipeError, which :class:`SpcaGroup` ends with status 0 (rich's
    own answer would be status 1)."""
    import errno

    from rich.console import Console

    class StdoutConsole(Console):
        def on_broken_pipe(self):
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    console = StdoutConsole()
    if not console.is_terminal:
        console.width = _UNWRAPPED_WIDTH
    return console


def new_table(console, **kwargs):
    """A rich Table for ``console``: rich's box-drawing characters on a terminal, ASCII
    (``+``, ``-``, ``|``) into a pipe or a file, so that what a program or a file receives is
    plain text. A file name belongs above the table (printed by itself), never in a cell or the
    title, where it would be broken over lines."""
    from rich import box
    from rich.table import Table

    if not console.is_terminal:
        kwargs["box"] = box.ASCII
    return Table(**kwargs)


# ---------------------------------------------------------------------- info
def _info_table(summary):
    console = stdout_console()
    console.print(summary["path"], markup=False, highlight=False, soft_wrap=True)
    table = new_table(console, show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    for key in ("kind", "documents", "words", "nonzeros"):
        value = summary[key]
        table.add_row(key, "-" if value is None else f"{value:,}" if isinstance(value, int)
                      else str(value))
    set_aside = summary.get("duplicates_set_aside")
    if set_aside is not None:
        table.add_row("set aside", ", ".join(f"{n:,} {reason} duplicates"
                                             for reason, n in set_aside.items()))
    if summary["first_time"] is not None:
        table.add_row("first time", summary["first_time"])
        table.add_row("last time", summary["last_time"])
    if summary["eigenvalues"]:
        table.add_row("eigenvalues", ", ".join(f"{v:,.6g}" for v in summary["eigenvalues"]))
    console.print(table)
    if summary["top_words"]:
        words = new_table(console, title="Most frequent words")
        words.add_column("word")
        words.add_column("documents", justify="right")
        for row in summary["top_words"]:
            words.add_row(row["word"], f"{row['documents']:,}")
        console.print(words)


@cli.command()
@click.argument("inputs", nargs=-1, required=True, metavar="CORPUS|INPUT...")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]),
              default="table", show_default=True, help="Output format.")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many of the most frequent words to list.")
@click.option("--eigenvalues", "n_eigenvalues", type=click.IntRange(min=0), default=5,
              show_default=True, help="How many leading eigenvalues of A = S^T S to compute.")
@labels_option
@ingest_options
@scheduler_option
@quiet_option
def info(inputs, output_format, top, n_eigenvalues, labels, quiet, scheduler, **ingest_kwargs):
    """Show the size, date range, frequent words and leading eigenvalues of an input.

    \b
    Example:
        spca info kos.npz
        spca info tweets.csv --format json --top 20
    """
    from spca_cli.corpus.summary import summarize

    data = load_from_options(inputs, labels=labels, quiet=quiet, scheduler=scheduler,
                             **ingest_kwargs)
    with status("Computing eigenvalues", quiet=quiet):
        summary = summarize(data, top=top, n_eigenvalues=n_eigenvalues)
    if output_format == "json":
        click.echo(json.dumps(summary, indent=2))
    else:
        _info_table(summary)


# ---------------------------------------------------------------------- topics
def _click_type(rule):
    """The click type of a registry constraint (:mod:`spca_cli.solvers.registry`)."""
    from spca_cli.solvers.registry import Choice, Interval

    if isinstance(rule, Choice):
        return click.Choice(list(rule.values))
    if isinstance(rule, Interval):
        kind = click.IntRange if rule.kind is int else FiniteFloatRange
        extra = {"min_open": True} if rule.low_open else {}
        if rule.high_open:
            extra["max_open"] = True
        return kind(min=rule.low, max=rule.high, **extra)
    return None


def _solver_option(param):
    """The click option of one solver parameter of the registry."""
    name = param.name
    if "/" in param.flag:  # an on/off switch; unset (None) lets the solver choose
        return click.option(param.flag, name, default=None, help=param.help + ".")
    if param.flag_value is not None:
        return click.option(param.flag, name, flag_value=param.flag_value, default=None,
                            help=param.help + ".")
    return click.option(param.flag, name, type=_click_type(param.cli_rule or param.rule),
                        metavar=param.metavar, help=param.help + ".")


def _solver_params():
    from spca_cli.solvers.registry import cli_params

    return cli_params()


def _solver_names():
    from spca_cli.solvers.registry import solver_names

    return solver_names()


def topics_options(fn):
    """The options of ``spca topics`` (also taken by ``spca daily``)."""
    options = [
        click.option("--solver", type=click.Choice(_solver_names()), default=DEFAULTS["solver"],
                     show_default=True,
                     help="Sparse PCA method. auto: the best of tpower, spannogram (--rank) "
                          "and greedy per topic, closed by a few seconds of branch and bound; "
                          "exact: branch and bound to a proven optimum."),
        click.option("-k", "k", type=click.IntRange(min=1), default=DEFAULTS["k"],
                     show_default=True,
                     help="Words per topic."),
        click.option("-c", "--components", type=click.IntRange(min=1),
                     default=DEFAULTS["n_components"],
                     show_default=True, help="Number of topics."),
        click.option("-d", "--rank", type=click.IntRange(min=1), default=DEFAULTS["rank"],
                     show_default=True,
                     help="Rank d of the approximation A_d (spannogram, nonneg) or of the "
                          "sketch (bipartite)."),
        click.option("--deflation", type=click.Choice(list(DEFLATIONS)), default=None,
                     help="joint: the best set of disjoint topics, searched together (default "
                          "with --solver auto); remove: one at a time, each topic's words "
                          "removed (default with a named solver); projection: "
                          "A <- (I-xx')A(I-xx')."),
        click.option("--seed", type=click.IntRange(0, SEED_MAX), default=0, show_default=True,
                     help=f"Seed for every random choice (0 .. {SEED_MAX})."),
        click.option("--time-limit", type=FiniteFloatRange(min=0, min_open=True),
                     metavar="SECONDS", help="Per component: return the best found so far."),
        click.option("--eigensolver", type=click.Choice(["auto", "krylov", "arpack"]),
                     default="auto", show_default=True,
                     help="auto: dense LAPACK up to 1500 words, else krylov (warm-started "
                          "block method, fewest passes over S) for up to 12 eigenpairs, else "
                          "arpack (SciPy's eigsh)."),
        # the solver-specific options, as the solver registry declares them
        *(_solver_option(param) for param in _solver_params()),
    ]
    return _stack(options)(fn)


def _solver_options(solver, given):
    """The solver-specific options given, checked against the solver they apply to."""
    from spca_cli.solvers.registry import solvers_taking

    flags = {param.name: param.flag for param in _solver_params()}
    chosen = {}
    for name, value in given.items():
        if value is None:
            continue
        takers = solvers_taking(name)
        if solver not in takers:
            flag = flags[name].split("/")[0]
            raise click.UsageError(f"{flag} applies to --solver {' or '.join(takers)}, "
                                   f"not {solver}")
        chosen[name] = value
    return chosen


def compute_topics(data, *, solver, k, components, rank, deflation, seed, time_limit,
                   eigensolver="auto", seconds=None, include=None, exclude=None, progress=None,
                   **solver_given):
    """Run the topics pipeline with the CLI's option names (shared by topics and daily);
    ``progress``: the status line's callback, for what a proof search is doing. In the command
    line's own process (:func:`main`), the corpus read, freed memory is kept from here on
    (:func:`spca_cli.processes.keep_freed_memory`)."""
    from spca_cli.processes import keep_freed_memory
    from spca_cli.topics import run_topics

    context = click.get_current_context(silent=True)
    if context is not None and context.find_root().obj is OWN_PROCESS:
        keep_freed_memory()

    return run_topics(data, solver=solver, k=k, n_components=components, rank=rank,
                      deflation=deflation, random_state=seed, time_limit=time_limit,
                      solver_options=_solver_options(solver, solver_given), seconds=seconds,
                      eigensolver=eigensolver, include=include, exclude=exclude,
                      progress=progress)


def _write_outputs(text, output, write_more=None):
    """Print ``text`` to stdout, or write it atomically to ``output``, after ``write_more()``
    (another output's writer, or None), so that when that one fails ``output`` is not written:
    ``output``'s temp file replaces it only once both are written."""
    with contextlib.ExitStack() as stack:
        fh = None if output is None else stack.enter_context(atomic_output(output, "w"))
        more = write_more() if write_more is not None else None
        if fh is None:
            click.echo(text, nl=False)
        else:
            fh.write(text)
    return more


def _check_distinct_outputs(outputs):
    """Refuse two output options naming one file (``{option: path}``, None for not given):
    the second write would replace the first."""
    seen = {}
    for option, path in outputs.items():
        if path is None:
            continue
        real = os.path.realpath(path)
        for other, (other_path, other_real) in seen.items():
            same = real == other_real
            if not same and os.path.exists(path) and os.path.exists(other_path):
                same = os.path.samefile(path, other_path)  # hard links of one file
            if same:
                raise SpcaOutputError(path, f"is also the {other} file; give {option} "
                                            "another name")
        seen[option] = (path, real)


def _topic_kwargs(kwargs):
    names = ("solver", "k", "components", "rank", "deflation", "seed", "time_limit",
             "eigensolver", *(param.name for param in _solver_params()))
    chosen = {name: kwargs.pop(name) for name in names}
    # an option of another solver is a usage error before any input is read
    _solver_options(chosen["solver"], {param.name: chosen[param.name]
                                       for param in _solver_params()})
    return chosen


@cli.command()
@click.argument("inputs", nargs=-1, required=True, metavar="CORPUS|INPUT|MATRIX...")
@topics_options
@click.option("--format", "output_format", type=click.Choice(["table", "json", "csv",
                                                              "markdown", "html"]),
              default=None, help="Output format [default: from the -o file's extension "
                                 "(.json, .csv, .md, .html), else table].")
@click.option("-o", "--output", metavar="FILE",
              callback=lambda ctx, param, value: None if value == "-" else value,
              help="Write the result here instead of stdout ('-': stdout).")
@click.option("--include", metavar="WORD[,WORD...]",
              help="Every topic contains these words (at most k); its bound and --solver "
                   "exact's proof are for topics containing them.")
@click.option("--exclude", metavar="WORD[,WORD...]",
              help="No topic contains these words (beyond the stop lists).")
@documents_option
@click.option("--assignments", metavar="FILE.csv",
              help="Also write one CSV row per document: row, id, time, best_topic and its "
                   "score for every topic.")
@click.option("--by", "groups", metavar="COLUMN|FILE",
              help="Topics of each group: the CSV column or JSON field that names a "
                   "document's group; for a UCI docword file, a file of one group per "
                   "document line. Ends with each group's distinctive words.")
@click.option("--min-documents", type=click.IntRange(min=1), default=20, show_default=True,
              metavar="N", help="With --by: groups of fewer documents are reported, not "
                                "solved.")
@click.option("--distinctive", type=click.IntRange(min=0), default=5, show_default=True,
              metavar="N", help="With --by: distinctive words shown per group.")
@labels_option
@ingest_options
@scheduler_option
@quiet_option
@click.pass_context
def topics(ctx, inputs, output_format, output, n_documents, assignments, groups, min_documents,
           distinctive, labels, quiet, scheduler, include, exclude, **kwargs):
    """Find the sparse topics of a corpus or matrix, each with a certified bound.

    \b
    Example:
        spca topics docword.kos.txt.gz --solver spannogram --rank 3 -k 10 -c 5
        spca topics tweets.csv --solver tpower -k 8 --format json -o topics.json
        spca topics tweets.csv --documents 5 -o topics.html
        spca topics tweets.csv --documents 5 --assignments topics-per-tweet.csv
        spca topics tweets.csv --include refund -c 1 --solver exact
        spca topics tweets.csv --by airline -c 3
    """
    from spca_cli.corpus import MatrixInput
    from spca_cli.documents import add_documents, write_assignments
    from spca_cli.page import render_topics_page
    from spca_cli.report import render, to_dict

    topic_kwargs = _topic_kwargs(kwargs)
    output_format = output_format or _format_of(output)
    if groups is not None:
        for flag, given in (("--assignments", assignments is not None),
                            ("--scheduler", scheduler is not None)):
            if given:
                raise click.UsageError(f"{flag} does not apply with --by")
    else:
        for flag in ("min_documents", "distinctive"):
            if ctx.get_parameter_source(flag) == click.core.ParameterSource.COMMANDLINE:
                raise click.UsageError(f"--{flag.replace('_', '-')} applies with --by only")
    # every output before any work: a run that cannot write one of them writes none
    reads = input_files(inputs, labels=labels, groups=groups, **kwargs)
    for path in (output, assignments):
        if path is not None:
            check_output_file(path, reads)
    _check_distinct_outputs({"-o": output, "--assignments": assignments})
    if (topic_kwargs["solver"] == "bipartite"
            and ctx.get_parameter_source("deflation") == click.core.ParameterSource.COMMANDLINE):
        click.echo("Note: --deflation does not apply to --solver bipartite, which computes "
                   "disjoint topics jointly", err=True)
    if groups is not None:
        _topics_by_group(inputs, groups, min_documents, distinctive, output_format, output,
                         n_documents, labels, quiet, topic_kwargs, kwargs, include, exclude)
        return
    start = time.perf_counter()
    data = load_from_options(inputs, labels=labels, quiet=quiet, scheduler=scheduler, **kwargs)
    ingest_seconds = time.perf_counter() - start
    if assignments is not None and isinstance(data, MatrixInput):
        raise SpcaParameterError(f"--assignments needs documents; {data.path} is a matrix")
    with status(f"Finding {topic_kwargs['components']} topics", quiet=quiet) as say:
        result = compute_topics(data, seconds={"ingest": ingest_seconds}, include=include,
                                exclude=exclude, progress=say, **topic_kwargs)
    doc = add_documents(to_dict(result), data, n_documents)
    if not quiet:
        for note in doc["notes"]:
            click.echo(f"Warning: {note}", err=True)
    # a table fills the terminal it is printed on; to a file or pipe nothing is wrapped or cut
    width = (shutil.get_terminal_size((100, 24)).columns
             if output is None and sys.stdout.isatty() else None)
    text = (render_topics_page(doc) if output_format == "html"
            else render(doc, output_format, width=width))
    count = _write_outputs(text, output,
                           None if assignments is None else
                           lambda: write_assignments(assignments, data, doc["components"]))
    if assignments is not None and not quiet:
        click.echo(f"{count:,} documents -> {assignments}", err=True)


def _topics_by_group(inputs, groups, min_documents, distinctive, output_format, output,
                     n_documents, labels, quiet, topic_kwargs, kwargs, include, exclude):
    """``spca topics --by``: the corpus read once with its groups, then each group's topics
    (:func:`spca_cli.groups.run_groups`) and the distinctive words."""
    from spca_cli.corpus import MatrixInput
    from spca_cli.documents import add_documents
    from spca_cli.groups import EARLY_WORKERS_BYTES, GroupWorkers, run_groups
    from spca_cli.page import render_groups_page
    from spca_cli.report import GROUP, GROUPS, grouped_to_dict, render_grouped

    start = time.perf_counter()
    given = dict(topic_kwargs)
    solver_given = {param.name: given.pop(param.name) for param in _solver_params()}
    # a large input's groups are solved in several processes: they start while it is read
    early = (sum(os.path.getsize(p) for p in input_files(inputs) if os.path.isfile(p))
             >= EARLY_WORKERS_BYTES)
    with GroupWorkers(None if early else 0) as workers:
        data = load_from_options(inputs, labels=labels, quiet=quiet, groups=groups, **kwargs)
        if isinstance(data, MatrixInput):  # (load_input refuses --by on a matrix first)
            raise SpcaParameterError(f"--by needs documents; {data.path} is a matrix")
        ingest_seconds = time.perf_counter() - start
        with task_progress(quiet=quiet) as progress:
            def on_group(index, count, name):
                if progress is not None:
                    progress(f"Topics of {name}", index - 1, count)

            result = run_groups(
                data, by=groups, solver=given["solver"], k=given["k"],
                n_components=given["components"], rank=given["rank"],
                deflation=given["deflation"], random_state=given["seed"],
                time_limit=given["time_limit"], eigensolver=given["eigensolver"],
                solver_options=_solver_options(given["solver"], solver_given),
                min_documents=min_documents, distinctive=distinctive,
                seconds={"ingest": ingest_seconds}, on_group=on_group, jobs=None,
                workers=workers, include=include, exclude=exclude)
    doc = grouped_to_dict(result, lambda d, corpus: add_documents(d, corpus, n_documents))
    if not quiet:
        for note in doc["notes"]:
            click.echo(f"Warning: {note}", err=True)
        for group in doc[GROUPS]:
            for note in group.get("notes", []):
                click.echo(f"Warning: {group[GROUP]}: {note}", err=True)
    width = (shutil.get_terminal_size((100, 24)).columns
             if output is None and sys.stdout.isatty() else None)
    _write_outputs(render_groups_page(doc) if output_format == "html"
                   else render_grouped(doc, output_format, width=width), output)


#: The output format a ``-o`` file's extension asks for when ``--format`` is not given: a user
#: who writes ``-o topics.json`` expects JSON in it, not the table.
_FORMAT_OF_EXTENSION = {".json": "json", ".csv": "csv", ".md": "markdown", ".markdown": "markdown",
                        ".html": "html", ".htm": "html"}


def _format_of(output):
    """``topics``'s output format for ``-o output`` without ``--format``: its extension's, else
    the table."""
    if output is None:
        return "table"
    return _FORMAT_OF_EXTENSION.get(os.path.splitext(output)[1].lower(), "table")


# ---------------------------------------------------------------------- daily
def _append_log(log_file, line, warnings_seen=()):
    """One line for the run in --log (after a line per warning it met), appended."""
    if log_file:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        with output_errors(log_file), open(log_file, "a", encoding="utf-8") as fh:
            for message in warnings_seen:
                fh.write(f"{stamp} warning: {message}\n")
            fh.write(f"{stamp} {line}\n")


#: the files of a report folder other runs wrote or will write: days' reports, the indexes, the
#: plot, the lock and the temp files of a write in progress
_REPORT_FILE = re.compile(r"(\d{4}-\d{2}-\d{2}\.(json|md)|index\.(md|html)|trends\.png|\.lock|"
                          + re.escape(TMP_PREFIX) + r".*)")


def _a_report_file(path, out_dir):
    """Whether ``path``, its links followed, is a file of the report folder ``out_dir`` that a
    run of spca daily reads or writes (another day's report, say): a log appended there would
    damage it."""
    real = os.path.realpath(path)
    return (os.path.dirname(real) == os.path.realpath(out_dir)
            and _REPORT_FILE.fullmatch(os.path.basename(real)) is not None)


def _check_daily_outputs(out_dir, log_file, days, inputs, kwargs):
    """Before any work: the report folder, the files the run writes in it, and --log."""
    reads = input_files(inputs, **kwargs)
    names = [f"{day.isoformat()}.{ext}" for day in days for ext in ("json", "md")]
    names += ["index.md", "index.html", "trends.png"]
    check_output_folder(out_dir, reads, files=names)
    if log_file:
        if os.path.realpath(log_file) == os.path.realpath(out_dir):
            raise SpcaOutputError(log_file, "is the --out folder; give the log a file name")
        if _a_report_file(log_file, out_dir):
            raise SpcaOutputError(log_file, "is one of the files spca daily writes in --out; "
                                            "give the log another name")
        log_folder = os.path.dirname(os.path.abspath(log_file))
        if os.path.abspath(out_dir) == log_folder and not os.path.exists(out_dir):
            with output_errors(out_dir):  # the log lives in the report folder: make it now
                os.makedirs(out_dir, exist_ok=True)
        check_output_file(log_file, reads)


@cli.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--out", "out_dir", required=True, metavar="DIR",
              help="Folder of the daily reports (DIR/YYYY-MM-DD.json, .md; index.md, "
                   "index.html, trends.png).")
@click.option("--date", "date_text", metavar="YYYY-MM-DD", help="The day to analyse.")
@click.option("--yesterday", is_flag=True,
              help="Analyse yesterday in --timezone (the default when --date is not given).")
@click.option("--from", "from_text", metavar="YYYY-MM-DD",
              help="With --to: analyse every day of this range (a backfill).")
@click.option("--to", "to_text", metavar="YYYY-MM-DD", help="Last day of the --from range.")
@documents_option
@click.option("--timezone", "tz_name", default="UTC", show_default=True, metavar="TZ",
              help="IANA time zone that defines the day, e.g. America/Los_Angeles.")
@click.option("--log", "log_file", metavar="FILE", help="Append one line per run to FILE.")
@topics_options
@ingest_options
@scheduler_option
@quiet_option
def daily(inputs, out_dir, date_text, yesterday, from_text, to_text, n_documents, tz_name,
          log_file, quiet, scheduler, **kwargs):
    """Analyse one day of tweets and keep a folder of daily reports (for cron).

    \b
    Example: every morning at 06:15, from crontab
        15 6 * * * spca daily '/data/tweets/*.jsonl.gz' --out /srv/topics --yesterday --timezone Europe/Athens --quiet
    Example: a backfill of one week
        spca daily tweets.csv --out topics --from 2015-02-17 --to 2015-02-23
    """
    from spca_cli.corpus import load_input
    from spca_cli.daily import resolve_day, resolve_range, resolve_timezone, run_daily

    topic_kwargs = _topic_kwargs(kwargs)
    if (from_text is None) != (to_text is None):
        raise click.UsageError("--from and --to go together")
    if from_text is not None and (date_text is not None or yesterday):
        raise click.UsageError("use either --from/--to or one of --date and --yesterday")
    if kwargs.get("since") or kwargs.get("until"):
        raise click.UsageError("--since/--until do not apply to spca daily, which reads one "
                               "day; use --date or --yesterday")
    kwargs.pop("since", None), kwargs.pop("until", None)
    day = None
    try:
        tz = resolve_timezone(tz_name)
        if from_text is not None:
            days = resolve_range(from_text, to_text)
            day = f"{days[0]}..{days[-1]}"
        else:
            days = [resolve_day(date_text, yesterday=yesterday, tz=tz)]
            day = days[0]
    except SpcaError as exc:
        with contextlib.suppress(SpcaError):  # a bad --log must not hide the real error
            _append_log(log_file, f"day={day} status=error {cli_message(exc)}")
        raise
    _check_daily_outputs(out_dir, log_file, days, inputs, kwargs)
    seen = warning_lines().messages
    try:
        client = _cluster_client(scheduler)

        def read(paths, start, end):
            # --until is inclusive to the second, and times are whole seconds: [start, end)
            if client is not None:
                from spca_cli.distributed.ingest import read_distributed

                return read_distributed(client, paths, since=start,
                                        until=end - datetime.timedelta(seconds=1),
                                        **_input_kwargs(kwargs))
            return load_input(paths, since=start, until=end - datetime.timedelta(seconds=1),
                              **_input_kwargs(kwargs))

        def topics(corpus):
            return compute_topics(corpus, **topic_kwargs)

        # quoted globs (as cron passes them), folders and stdin resolved once, for every read
        with open_inputs(list(inputs), kwargs.get("input_format", "auto")) as paths:
            if from_text is not None:
                return _daily_range(paths, out_dir, days, tz, read, topics, n_documents,
                                    log_file, quiet)
            outcome = run_daily(paths, out_dir, day=day, tz=tz, read=read, topics=topics,
                                n_documents=n_documents)
    except SpcaError as exc:
        _append_log(log_file, f"day={day} status=error {cli_message(exc)}", seen)
        raise
    _append_log(log_file, f"day={day} status=ok documents={outcome.documents} "
                          f"report={outcome.json_path}", seen)
    if not quiet:
        click.echo(f"{day}: {outcome.documents:,} documents -> {outcome.json_path}, "
                   f"{outcome.markdown_path}, {outcome.index_path}")


def _daily_range(paths, out_dir, days, tz, read, topics, n_documents, log_file, quiet):
    """``spca daily --from --to``: every day as a single-day run would do it, one log line and
    (unless quiet) one printed line per day, then the index pages once."""
    from spca_cli.daily import run_daily_range

    def on_day(outcome):
        _append_log(log_file, f"day={outcome.day} status=ok documents={outcome.documents} "
                              f"report={outcome.json_path}")
        if not quiet:
            click.echo(f"{outcome.day}: {outcome.documents:,} documents -> {outcome.json_path}")

    outcomes = run_daily_range(paths, out_dir, days=days, tz=tz, read=read, topics=topics,
                               n_documents=n_documents, on_day=on_day)
    if not quiet:
        folder = os.path.join(out_dir, "")
        click.echo(f"{len(outcomes)} days -> {folder}index.md, {folder}index.html, "
                   f"{folder}trends.png")


def _input_kwargs(kwargs):
    """Ingest options as load_input names them (the CLI calls the input kind input_format)."""
    out = dict(kwargs)
    out["format"] = out.pop("input_format", "auto")
    return out


# ---------------------------------------------------------------------- reproduce
@cli.command()
@click.argument("config", metavar="CONFIG.yaml")
@click.option("-o", "--outdir", metavar="OUTDIR", help="Folder for the table (and plot).")
@click.option("--format", "output_format", type=click.Choice(["markdown", "json"]),
              default="markdown", show_default=True, help="Output format.")
@click.option("--trials", type=click.IntRange(min=1), metavar="N",
              help="Override the config's number of random trials (quick checks).")
@quiet_option
def reproduce(config, outdir, output_format, trials, quiet):
    """Reproduce a table of the papers from a YAML config, with the published numbers beside.

    \b
    Example:
        spca reproduce configs/2013-table1-spiked.yaml -o out/
    """
    from spca_cli.reproduce import run_config

    with task_progress(quiet=quiet) as progress:
        text, files = run_config(config, outdir=outdir, fmt=output_format, trials=trials,
                                 progress=progress)
    click.echo(text, nl=not text.endswith("\n"))
    if files and not quiet:
        click.echo("wrote " + ", ".join(str(f) for f in files), err=True)


# ---------------------------------------------------------------------- spectrum
@cli.command()
@click.argument("inputs", nargs=-1, required=True, metavar="CORPUS|INPUT|MATRIX...")
@click.option("--top", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many leading eigenvalues (more than the words: all of them, with a "
                   "note). Beyond a quarter of the words, or with at most 2,000 words or "
                   "documents, every eigenvalue is computed at once by LAPACK.")
@click.option("--plot", metavar="FILE.png", help="Also draw them (needs matplotlib).")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]),
              default="table", show_default=True, help="Output format.")
@labels_option
@ingest_options
@scheduler_option
@quiet_option
def spectrum(inputs, top, plot, output_format, labels, quiet, scheduler, **ingest_kwargs):
    """Show the leading eigenvalues of A = S^T S (how fast they decay decides which rank d
    certifies well: the spannogram's guarantee is 1 - lambda_{d+1} / OPT).

    \b
    Example:
        spca spectrum docword.kos.txt.gz --top 10 --plot kos-spectrum.png
    """
    from spca_cli.corpus.core import input_gram
    from spca_cli.spectrum import leading_eigenvalues

    if plot:
        check_output_file(plot, input_files(inputs, labels=labels, **ingest_kwargs))
    data = load_from_options(inputs, labels=labels, quiet=quiet, scheduler=scheduler,
                             **ingest_kwargs)
    gram = input_gram(data).gram
    if top > gram.n:
        click.echo(f"Note: --top {top:,} is more than the {gram.n:,} words; showing all "
                   f"{gram.n:,} eigenvalues", err=True)
    with status("Computing eigenvalues", quiet=quiet):
        values = [float(v) for v in leading_eigenvalues(gram, top)]
    total = float(gram.diagonal().sum())  # trace(A) = sum of all eigenvalues
    if plot:
        figure = spectrum_figure(values, inputs)
        with atomic_output(plot) as fh:
            figure.savefig(fh, format="png", dpi=120)
    if output_format == "json":
        click.echo(json.dumps({"path": str(data.path), "paths": list(data.paths),
                               "eigenvalues": values, "trace": total}, indent=2))
        return
    console = stdout_console()
    console.print(f"{data.path}: trace(A) = {total:,.6g}", markup=False, highlight=False,
                  soft_wrap=True)
    table = new_table(console)
    table.add_column("i", justify="right")
    table.add_column("lambda_i", justify="right")
    table.add_column("lambda_i / lambda_1", justify="right")
    table.add_column("share of trace", justify="right")
    for i, v in enumerate(values, 1):
        table.add_row(str(i), f"{v:,.6g}", f"{v / values[0]:.4f}" if values[0] else "-",
                      f"{v / total:.4f}" if total else "-")
    console.print(table)


def spectrum_figure(values, inputs):
    """The matplotlib Figure of ``spca spectrum --plot``: lambda_i against i (a log scale), the
    ranks i as integer ticks, titled with the names of the ``inputs`` as given, without their
    folders. A Figure of its own (no pyplot), so nothing is kept once it is saved."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        raise SpcaParameterError("--plot needs matplotlib: pip install 'spca-cli[plot]'") from None
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.semilogy(range(1, len(values) + 1), values, "o-")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))  # ranks
    ax.set_xlabel("i")
    ax.set_ylabel("lambda_i of A = S^T S")
    ax.set_title(", ".join(Path(name).name for name in inputs), fontsize=9)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------- generate (hidden, dev)
@cli.command(hidden=True)
@click.option("--kind", type=click.Choice(["jsonl", "uci"]), default="jsonl", show_default=True,
              help="Tweets as JSON lines, or a UCI docword file (+ vocab.NAME.txt beside it).")
@click.option("--documents", type=click.IntRange(min=1), required=True, metavar="N")
@click.option("--words", type=click.IntRange(min=2), required=True, metavar="W",
              help="Vocabulary size, topic words included.")
@click.option("--words-per-doc", type=click.IntRange(min=1), default=15, show_default=True,
              metavar="L", help="Mean background tokens per document.")
@click.option("--topics", type=click.IntRange(min=0), default=5, show_default=True, metavar="T",
              help="Planted topics of 10 words (topicT_wordJ).")
@click.option("--exponent", type=FiniteFloatRange(min=0), default=1.1, show_default=True,
              help="Zipf exponent of the background words.")
@click.option("--offset", type=FiniteFloatRange(min=0), default=0.0, show_default=True,
              help="Zipf-Mandelbrot offset q: P(rank r) ~ (r + q)^-exponent.")
@click.option("--topic-rate", type=FiniteFloatRange(0, 1), default=0.3, show_default=True,
              help="Share of documents about a topic.")
@click.option("--topic-repeat", type=FiniteFloatRange(min=0), default=0.0, show_default=True,
              help="Extra occurrences (Poisson mean) of each topic word present.")
@click.option("--seed", type=click.IntRange(0, SEED_MAX), default=0, show_default=True)
@click.option("-o", "--output", required=True, metavar="PATH",
              help="NAME.jsonl, or docword.NAME.txt for --kind uci.")
def generate(kind, documents, words, words_per_doc, topics, exponent, offset, topic_rate,
             topic_repeat, seed, output):
    """Write a seeded synthetic corpus with planted topics (for benchmarks and tests).

    \b
    Example:
        spca generate --kind jsonl --documents 1000000 --words 50000 --seed 0 -o tweets.jsonl
        spca generate --kind uci --documents 300000 --words 100000 --words-per-doc 248 \\
            --exponent 1.0 --offset 20 --topic-repeat 2 -o docword.nyt.txt
    """
    from spca_cli.corpus.kinds import vocab_path_for
    from spca_cli.generate import write_corpus

    check_output_file(output)
    if kind == "uci" and vocab_path_for(output) is not None:
        check_output_file(vocab_path_for(output))  # written beside the docword file
    start = time.perf_counter()
    out = write_corpus(output, kind, documents=documents, words=words,
                       words_per_document=words_per_doc, topics=topics, exponent=exponent,
                       offset=offset, topic_rate=topic_rate, topic_repeat=topic_repeat,
                       seed=seed)
    extra = f", {out.nonzeros:,} nonzeros" if out.nonzeros is not None else ""
    click.echo(f"{out.documents:,} documents, {out.words:,} words, {out.tokens:,} tokens{extra}"
               f" -> {out.path} ({out.bytes / 1e6:,.1f} MB, "
               f"{time.perf_counter() - start:.1f} s)", err=True)


# ---------------------------------------------------------------------- datasets
class _DatasetName(click.ParamType):
    """A registered data set's name (the registry is imported only when a name is given)."""

    name = "NAME"

    def convert(self, value, param, ctx):
        from spca_cli.datasets import REGISTRY

        if value not in REGISTRY:
            self.fail(f"unknown data set {value!r}; expected one of {', '.join(sorted(REGISTRY))}"
                      " (spca datasets list)", param, ctx)
        return value


@cli.group(context_settings=CONTEXT_SETTINGS)
def datasets():
    """Named public corpora: list them, fetch them, print where they are.

    Files are kept in $SPCA_DATA if set, else $XDG_CACHE_HOME/spca, else ~/.cache/spca;
    see docs/datasets.md.
    """


def _size_text(n, approximate=False):
    if n is None:
        return "?"
    text = f"{n / 1e6:,.1f} MB" if n >= 100_000 else f"{n / 1e3:,.0f} kB"
    return f"~{text}" if approximate else text


def _dataset_row(ds, states):
    from spca_cli.datasets import RECORD_SUFFIX

    present = sum(s.present for s in states)
    damaged = [s for s in states if s.present and s.problem is not None]
    state = ("damaged" if damaged else "yes" if present == len(states)
             else "partly" if present else "no")
    approximate = any(s.size is None and s.file.sha256 is None for s in states)
    size = sum(s.size if s.size is not None else (s.file.size or 0) for s in states)
    if all(s.file.sha256 for s in states):
        checksum = "pinned"
    elif all(s.checksum.startswith("recorded") for s in states):
        checksum = f"recorded ({RECORD_SUFFIX})"
    elif any(s.present for s in states):
        checksum = "format checked"
    else:
        checksum = "recorded at first download"
    if state == "yes":
        where = str(states[0].path)
    elif ds.derived_from:
        where = f"built from {ds.derived_from}: spca datasets fetch {ds.name}"
    else:
        where = f"from {os.path.dirname(states[0].file.url)}/"
    return [ds.name, ", ".join(os.path.basename(s.file.name) for s in states),
            _size_text(size, approximate), state, checksum, where]


@datasets.command("list")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]),
              default="table", show_default=True, help="Output format.")
def datasets_list(output_format):
    """List the data sets: files, size, whether present, and where.

    \b
    Example:
        SPCA_DATA=/data/corpora spca datasets list
    """
    from spca_cli import datasets as registry

    folder = registry.data_folder()
    rows = [(registry.get(name), registry.file_states(name)) for name in registry.names()]
    if output_format == "json":
        out = {"folder": str(folder), "folder_from": registry.folder_origin(), "datasets": [
            {"name": ds.name, "title": ds.title, "source": ds.source, "licence": ds.licence,
             "derived_from": ds.derived_from, "present": all(s.ok for s in states),
             "files": [{"name": s.file.name, "path": str(s.path), "url": s.file.url,
                        "present": s.present, "problem": s.problem,
                        "bytes": s.size if s.present else s.file.size,
                        "bytes_exact": s.present or s.file.sha256 is not None,
                        "sha256": s.sha256, "checksum": s.checksum} for s in states]}
            for ds, states in rows]}
        click.echo(json.dumps(out, indent=2))
        return
    table = [["name", "files", "size", "present", "sha256", "where"]]
    table += [_dataset_row(ds, states) for ds, states in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    click.echo(f"data folder: {folder} ({registry.folder_origin()})")
    for row in table:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    click.echo("sha256: pinned = fixed in the code; recorded = what the first download saw, "
               f"kept beside the file in NAME{registry.RECORD_SUFFIX}; format checked = a "
               "file spca did not download, checked by its format only.")


@datasets.command("fetch")
@click.argument("names", nargs=-1, required=True, type=_DatasetName())
@quiet_option
def datasets_fetch(names, quiet):
    """Download (or build) data sets into the data folder and print their files' paths.

    A file already there that checks out is not downloaded again.

    \b
    Example:
        spca datasets fetch kos nips
    """
    from spca_cli.datasets import fetch

    def bar(description, total):
        return byte_progress(total, description, quiet=quiet)

    def done(path, how):
        if not quiet:
            click.echo(f"{how}: {path}", err=True)

    for name in names:
        for path in fetch(name, progress=bar, done=done):
            click.echo(str(path))


@datasets.command("path")
@click.argument("name", type=_DatasetName())
def datasets_path(name):
    """Print the path of a data set's main file (never downloads).

    \b
    Example:
        spca topics "$(spca datasets path kos)" -k 10
    """
    from spca_cli.datasets import local

    click.echo(str(local(name)[0]))
