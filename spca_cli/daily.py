"""``spca daily``: one calendar day of tweets -> a topics report, safe to run from cron.

Guarantees (SPEC, "Daily runs"):

* the day is a half-open window [00:00, 24:00) in ``timezone`` (UTC unless given);
* every file is written atomically (a temp file in the same folder, fsync, ``os.replace``), so a
  run killed at any moment leaves the previous report intact; leftover temp files of killed runs
  are removed by the next run, under the lock;
* one run at a time per output folder: an advisory ``flock`` on ``DIR/.lock``, held for the whole
  run; the kernel releases it when the process ends however it ends, so there is never a stale
  lock to take over (the pid inside the file is only information for the message);
* re-running a day gives the same topics (every random choice is seeded);
* a day without documents writes a report that says so and succeeds.

``DIR/index.md``, ``DIR/trends.png`` and ``DIR/index.html`` are rebuilt from the
``DIR/YYYY-MM-DD.json`` reports on every run, even when the day fails, so they never stay stale
(:mod:`spca_cli.trends`: topics are followed from day to day by the weight they share, with each
day's prevalence). A file of that name that is not one of our reports (foreign, damaged,
hand-edited) is skipped and named in one warning, so it never stops the index. A topic is
marked *new* when it continues no topic of the previous analysed day. :func:`run_daily_range`
analyses every day of a range, each exactly as :func:`run_daily` does for one day.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from spca_cli.files import TMP_PREFIX, atomic_write, output_errors
from spca_cli.errors import (Name, SpcaError, SpcaNoDocumentsError, SpcaOutputError,
                              SpcaParameterError)
from spca_cli.documents import DEFAULT_DOCUMENTS, add_documents
from spca_cli.report import render_markdown, to_dict
from spca_cli import page, trends

__all__ = ["resolve_timezone", "resolve_day", "resolve_range", "day_window", "DirLock",
           "atomic_write", "run_daily", "run_daily_range", "write_index", "DailyOutcome",
           "NEW_TOPIC_OVERLAP"]

NEW_TOPIC_OVERLAP = trends.SAME_TOPIC_OVERLAP
MAX_RANGE_DAYS = 3660

logger = logging.getLogger(__name__)


def _iso_day(text):
    """The date of ``text`` written YYYY-MM-DD (ValueError else: Python's own reading also
    takes 20150220 and 2015-W08-5, which a mistyped cron line should not pass as a day)."""
    if not isinstance(text, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        raise ValueError(text)
    return dt.date.fromisoformat(text)


def resolve_timezone(name):
    """A ``ZoneInfo`` for an IANA name such as ``America/Los_Angeles`` (``UTC`` when None)."""
    if name is not None and not str(name).strip():
        raise SpcaParameterError(f"unknown time zone {name!r}; use an IANA name such as "
                                 "UTC or America/New_York")
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        raise SpcaParameterError(f"unknown time zone {name!r}; use an IANA name such as "
                                 "UTC or America/New_York") from None


def resolve_day(date_text=None, *, yesterday=False, tz, now=None):
    """The day to analyse: ``date_text`` (YYYY-MM-DD), or yesterday in ``tz`` (the default)."""
    if date_text is not None and yesterday:
        raise SpcaParameterError(["use just one of ", Name("date_text"), " and ",
                                  Name("yesterday")])
    if date_text is not None:
        try:
            day = _iso_day(date_text)
        except ValueError:
            raise SpcaParameterError([Name("date_text"), " must be YYYY-MM-DD, got "
                                                         f"{date_text!r}"]) from None
    else:
        now = now or dt.datetime.now(dt.timezone.utc)
        day = now.astimezone(tz).date() - dt.timedelta(days=1)
    try:
        # the window's end (the next midnight) and both ends as UTC seconds must exist
        start, end = day_window(day, tz)
        start.timestamp(), end.timestamp()
    except (OverflowError, ValueError):
        raise SpcaParameterError([Name("date_text"), f" {day.isoformat()} is out of range: its "
                                  "day must lie between 0001-01-02 and 9999-12-30"]) from None
    return day


def day_window(day, tz):
    """[start, end) of ``day`` in ``tz`` as aware datetimes (23 or 25 hours on DST days)."""
    start = dt.datetime.combine(day, dt.time(0), tzinfo=tz)
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(0), tzinfo=tz)
    return start, end


class DirLock:
    """An exclusive lock on an output folder: an advisory ``flock`` on ``DIR/.lock``.

    The kernel holds the lock for the open file and drops it when the process ends, killed or
    not, so a later run never has to decide whether a lock is stale (pids get reused; a
    takeover can race). The file holds the owner's pid only for the message a second run
    prints. It is removed on release while still locked; a run that opened it just before
    checks, once it has the lock, that the path still names the file it locked, else retries.
    """

    def __init__(self, directory):
        self.path = Path(directory) / ".lock"
        self._fd = None

    def _holder(self):
        try:
            text = self.path.read_text(encoding="ascii").strip()
        except (OSError, ValueError):
            return "unknown"
        return text if text.isdigit() else "unknown"

    def _open(self):
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except IsADirectoryError:
            # not ours (we only ever make a file here); an empty one goes quietly
            try:
                os.rmdir(self.path)
            except FileNotFoundError:
                pass
            except OSError:
                raise SpcaOutputError(self.path, "is a directory, not spca's lock file; remove "
                                                 "it") from None
            return None
        except PermissionError:
            # someone else's file we may not write: a read-only descriptor still takes flock
            with output_errors(self.path):
                return os.open(self.path, os.O_RDONLY)

    def acquire(self):
        for _ in range(50):
            with output_errors(self.path):
                fd = self._open()
            if fd is None:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise SpcaError(f"another spca daily run holds {self.path} "
                                    f"(pid {self._holder()}); wait for it to finish") from None
                raise SpcaOutputError(self.path, exc.strerror or str(exc)) from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if not same:  # the holder removed it between our open and our flock
                os.close(fd)
                continue
            try:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            except OSError:
                pass  # the pid is information only; the lock is what counts
            self._fd = fd
            return self
        raise SpcaError(f"could not take the lock {self.path}: it keeps being replaced")

    def release(self):
        if self._fd is not None:
            try:
                self.path.unlink()  # while still locked: see the class docstring
            except OSError:
                pass
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


def _remove_stale_temp_files(directory):
    for leftover in Path(directory).glob(TMP_PREFIX + "*"):
        try:
            leftover.unlink()
        except OSError:
            pass


@dataclass
class DailyOutcome:
    day: dt.date
    documents: int
    json_path: Path
    markdown_path: Path
    index_path: Path


def _empty_day_report(day, tz, inputs, documents=0, note="no documents on this day"):
    return {"day": day.isoformat(), "timezone": str(tz), "documents": documents,
            "input": {"path": ", ".join(map(str, inputs)), "documents": documents},
            "components": [], "notes": [note]}


def run_daily(inputs, out_dir, *, day, tz, read, topics, n_documents=DEFAULT_DOCUMENTS,
              index=True):
    """Analyse one day and write its reports and (unless ``index`` is False) the index pages.

    Parameters
    ----------
    inputs : list of str
        Tweet files (any kind ``spca ingest`` reads).
    out_dir : path
        Output folder (created if missing).
    day : datetime.date
    tz : ZoneInfo
    read : callable(inputs, since, until) -> Corpus
        Reads the documents with ``since <= time < until``; raises SpcaNoDocumentsError when none.
    topics : callable(corpus) -> TopicsResult
    n_documents : int
        Top documents reported per topic (coverage is always reported).
    index : bool
        Rebuild ``index.md``, ``trends.png`` and ``index.html`` (a range does it once, last).

    Returns
    -------
    DailyOutcome
    """
    out = Path(out_dir)
    with output_errors(out):
        out.mkdir(parents=True, exist_ok=True)
    json_path = out / f"{day.isoformat()}.json"
    md_path = out / f"{day.isoformat()}.md"
    index_path = out / "index.md"
    with DirLock(out):
        _remove_stale_temp_files(out)
        try:
            doc = _analyse_day(inputs, day, tz, read, topics, json_path, md_path, n_documents)
        finally:
            # even when the day fails, the index is rebuilt: it never stays stale
            if index:
                write_index(out)
    return DailyOutcome(day=day, documents=doc["documents"], json_path=json_path,
                        markdown_path=md_path, index_path=index_path)


def _analyse_day(inputs, day, tz, read, topics, json_path, md_path, n_documents):
    """Read the day, find its topics, write its JSON and Markdown reports; the JSON document."""
    start, end = day_window(day, tz)
    try:
        corpus = read(inputs, start, end)
    except SpcaNoDocumentsError:
        corpus = None
    result, note = None, "no documents on this day"
    if corpus is not None:
        try:
            result = topics(corpus)
        except SpcaParameterError as exc:
            # too little text that day for the topics asked (k * components > words):
            # a fact about the day, reported like an empty day, not a failed run
            note = f"not analysed: {exc}"
    if result is None:
        documents = 0 if corpus is None else corpus.n_documents
        doc = _empty_day_report(day, tz, inputs, documents, note)
        markdown = (f"# Topics of {day.isoformat()} ({tz})\n\n"
                    f"{documents} documents: {note}.\n")
    else:
        doc = add_documents({"day": day.isoformat(), "timezone": str(tz),
                             "documents": corpus.n_documents, **to_dict(result)},
                            corpus, n_documents)
        markdown = (f"# Topics of {day.isoformat()} ({tz})\n\n"
                    f"{doc['documents']} documents.\n\n" + render_markdown(doc))
    atomic_write(json_path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    atomic_write(md_path, markdown)
    return doc


def _is_int(value, low=0):
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _report_problem(path, report):
    """Why ``report`` (parsed from ``path``) is not one of our daily reports, or None."""
    if not isinstance(report, dict):
        kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
        return f"holds {kinds.get(type(report), 'a number')}, not a report object"
    if report.get("day") != path.stem:
        return f"its 'day' is {report.get('day')!r}, not {path.stem!r}"
    if "documents" in report and not (_is_int(report["documents"])
                                      and report["documents"] < 2 ** 53):
        return "its 'documents' is not a count"
    if report.get("timezone") is not None and not isinstance(report["timezone"], str):
        return "its 'timezone' is not a time zone's name"
    notes = report.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        return "its 'notes' is not a list of strings"
    comps = report.get("components", [])
    if not isinstance(comps, list):
        return "its 'components' is not a list"
    for i, comp in enumerate(comps, 1):
        if not isinstance(comp, dict) or comp.get("index") != i:
            return f"component {i} is not numbered {i}"
        words = comp.get("words")
        if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
            return f"component {i} has no list of words"
    return None


def _load_reports(directory):
    """(reports in day order, [(file name, why it was skipped)]) of ``DIR/YYYY-MM-DD.json``."""
    reports, skipped = [], []
    for path in sorted(Path(directory).glob("????-??-??.json")):
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            # ValueError: bad JSON, bytes that are not UTF-8, an integer of thousands of digits
            skipped.append((path.name, f"not readable as JSON ({type(exc).__name__})"))
            continue
        problem = _report_problem(path, report)
        if problem is None:
            reports.append(report)
        else:
            skipped.append((path.name, problem))
    return reports, skipped


def new_topics(today, previous, overlap=NEW_TOPIC_OVERLAP):
    """Indices of today's topics that continue no topic of the previous analysed day (share
    less than ``overlap`` of their weight with each; see :mod:`spca_cli.trends`), all of them
    when there is no previous day."""
    matched = trends.match_topics(today, previous, overlap)
    return [comp["index"] for comp in today if comp["index"] not in matched]


def render_index(directory, *, plot_note=None):
    """Markdown index of every analysed day: documents, first topic, each topic's followed
    number and prevalence, topics new that day, and the recurring topics over the days."""
    return trends.render_index(_reports_for_index(directory), plot_note=plot_note)


def _reports_for_index(directory):
    """The readable reports of ``directory``; the files skipped are named in one warning."""
    reports, skipped = _load_reports(directory)
    if skipped:
        # a foreign or damaged file never stops the index; said once per run
        listed = "; ".join(f"{name} ({why})" for name, why in skipped)
        logger.warning("%s: skipped %d file%s that %s not spca daily reports: %s", directory,
                       len(skipped), "" if len(skipped) == 1 else "s",
                       "is" if len(skipped) == 1 else "are", listed)
    return reports


def write_index(directory):
    """Rebuild ``index.md``, ``trends.png`` (when matplotlib is installed; otherwise the index
    says how to install it) and the self-contained ``index.html``; the caller holds the lock."""
    out = Path(directory)
    reports = _reports_for_index(out)
    png = trends.plot_trends(reports)
    if png is not None:
        atomic_write(out / "trends.png", png)
    atomic_write(out / "index.md", trends.render_index(
        reports, plot_note=None if png is not None else trends.PLOT_MISSING))
    with output_errors(out):
        existing = os.listdir(out)  # the page links a day's .md and .json only when there
    atomic_write(out / "index.html", page.render_index_page(reports, png, existing))


def resolve_range(from_text, to_text):
    """The days from ``from_text`` to ``to_text`` (YYYY-MM-DD, both included), in order."""
    days = []
    for name, text in (("from_text", from_text), ("to_text", to_text)):
        try:
            days.append(_iso_day(text))
        except (TypeError, ValueError):
            raise SpcaParameterError([Name(name), f" must be YYYY-MM-DD, got {text!r}"]) from None
    first, last = days
    if first > last:
        raise SpcaParameterError([Name("from_text"), f" {from_text} is later than ",
                                  Name("to_text"), f" {to_text}"])
    count = (last - first).days + 1
    if count > MAX_RANGE_DAYS:
        raise SpcaParameterError([Name("from_text"), "/", Name("to_text"), f" span {count} days;"
                                  f" at most {MAX_RANGE_DAYS} per run"])
    return [first + dt.timedelta(days=i) for i in range(count)]


def run_daily_range(inputs, out_dir, *, days, tz, read, topics, n_documents=DEFAULT_DOCUMENTS,
                    on_day=None):
    """Analyse every day of ``days`` exactly as :func:`run_daily` does one (each day atomic
    and under the folder's lock), then rebuild the index pages once, under the lock.

    ``on_day(outcome)`` is called after each day. When a day fails, the days before it are
    kept and the index is still rebuilt before the error propagates.

    Returns
    -------
    list of DailyOutcome
    """
    outcomes = []
    try:
        for day in days:
            outcomes.append(run_daily(inputs, out_dir, day=day, tz=tz, read=read, topics=topics,
                                      n_documents=n_documents, index=False))
            if on_day is not None:
                on_day(outcomes[-1])
    finally:
        if outcomes:
            with DirLock(out_dir):
                write_index(out_dir)
    return outcomes
