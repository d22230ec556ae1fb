"""``spca daily``: one calendar day of tweets -> a topics report, safe to run from cron.

Guarantees (SPEC, "Daily runs"):

* the day is a half-open window [00:00, 24:00) in ``timezone`` (UTC unless given);
* every file is written atomically (a temp file in the same folder, fsync, ``os.replace``), so a
  run killed at any moment leaves the previous report intact; leftover temp files of killed runs
  are removed by the next run, under the lock;
* one run at a time per output folder: ``DIR/.lock`` holds the owner's pid; a lock whose process
  is dead is stale and is taken over;
* re-running a day gives the same topics (every random choice is seeded);
* a day without documents writes a report that says so and succeeds.

``DIR/index.md``, ``DIR/trends.png`` and ``DIR/index.html`` are rebuilt from the
``DIR/YYYY-MM-DD.json`` reports on every run (:mod:`spca_cli.trends`: topics are followed from
day to day by the weight they share, with each day's prevalence). A topic is marked *new* when
it continues no topic of the previous analysed day. :func:`run_daily_range` analyses every day
of a range, each exactly as :func:`run_daily` does for one day.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from spca_cli.files import TMP_PREFIX, atomic_write
from spca_cli.errors import SpcaError, SpcaNoDocumentsError, SpcaParameterError
from spca_cli.documents import DEFAULT_DOCUMENTS, add_documents
from spca_cli.report import render_markdown, to_dict
from spca_cli import trends

__all__ = ["resolve_timezone", "resolve_day", "resolve_range", "day_window", "DirLock",
           "atomic_write", "run_daily", "run_daily_range", "write_index", "DailyOutcome",
           "NEW_TOPIC_OVERLAP"]

NEW_TOPIC_OVERLAP = trends.SAME_TOPIC_OVERLAP
MAX_RANGE_DAYS = 3660


def resolve_timezone(name):
    """A ``ZoneInfo`` for an IANA name such as ``America/Los_Angeles`` (``UTC`` by default)."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        raise SpcaParameterError(f"unknown time zone {name!r}; use an IANA name such as "
                                 "UTC or America/New_York") from None


def resolve_day(date_text=None, *, yesterday=False, tz, now=None):
    """The day to analyse: ``date_text`` (YYYY-MM-DD), or yesterday in ``tz`` (the default)."""
    if date_text is not None and yesterday:
        raise SpcaParameterError("use just one of --date and --yesterday")
    if date_text is not None:
        try:
            return dt.date.fromisoformat(date_text)
        except ValueError:
            raise SpcaParameterError(f"--date must be YYYY-MM-DD, got {date_text!r}") from None
    now = now or dt.datetime.now(dt.timezone.utc)
    return now.astimezone(tz).date() - dt.timedelta(days=1)


def day_window(day, tz):
    """[start, end) of ``day`` in ``tz`` as aware datetimes (23 or 25 hours on DST days)."""
    start = dt.datetime.combine(day, dt.time(0), tzinfo=tz)
    end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(0), tzinfo=tz)
    return start, end


class DirLock:
    """An exclusive lock on an output folder: ``DIR/.lock`` created with O_EXCL, holding our pid.

    A lock left by a process that no longer exists (killed run) is stale and is taken over.
    """

    def __init__(self, directory):
        self.path = Path(directory) / ".lock"
        self._held = False

    @staticmethod
    def _alive(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def acquire(self):
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                try:
                    pid = int(self.path.read_text().strip() or "0")
                except (OSError, ValueError):
                    pid = 0
                if pid and pid != os.getpid() and self._alive(pid):
                    raise SpcaError(f"another spca daily run holds {self.path} (pid {pid}); "
                                    "wait for it to finish") from None
                # stale: its process is gone (or the file is unreadable); take it over
                try:
                    self.path.unlink()
                except FileNotFoundError:
                    pass
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(f"{os.getpid()}\n")
            self._held = True
            return self
        raise SpcaError(f"could not take the lock {self.path}; remove it if no run is active")

    def release(self):
        if self._held:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
            self._held = False

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
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / f"{day.isoformat()}.json"
    md_path = out / f"{day.isoformat()}.md"
    with DirLock(out):
        _remove_stale_temp_files(out)
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
            documents = 0 if corpus is None else int(corpus.S.shape[0])
            doc = _empty_day_report(day, tz, inputs, documents, note)
            markdown = (f"# Topics of {day.isoformat()} ({tz})\n\n"
                        f"{documents} documents: {note}.\n")
        else:
            doc = add_documents({"day": day.isoformat(), "timezone": str(tz),
                                 "documents": int(corpus.S.shape[0]), **to_dict(result)},
                                corpus, n_documents)
            markdown = (f"# Topics of {day.isoformat()} ({tz})\n\n"
                        f"{doc['documents']} documents.\n\n" + render_markdown(doc))
        atomic_write(json_path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        atomic_write(md_path, markdown)
        index_path = out / "index.md"
        if index:
            write_index(out)
    return DailyOutcome(day=day, documents=doc["documents"], json_path=json_path,
                        markdown_path=md_path, index_path=index_path)


def _load_reports(directory):
    reports = []
    for path in sorted(Path(directory).glob("????-??-??.json")):
        try:
            reports.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError):
            continue  # a foreign or damaged file never stops the index from being written
    return reports


def new_topics(today, previous, overlap=NEW_TOPIC_OVERLAP):
    """Indices of today's topics that continue no topic of the previous analysed day (share
    less than ``overlap`` of their weight with each; see :mod:`spca_cli.trends`), all of them
    when there is no previous day."""
    matched = trends.match_topics(today, previous, overlap)
    return [comp["index"] for comp in today if comp["index"] not in matched]


def render_index(directory, *, plot_note=None):
    """Markdown index of every analysed day: documents, first topic, each topic's followed
    number and prevalence, topics new that day, and the recurring topics over the days."""
    return trends.render_index(_load_reports(directory), plot_note=plot_note)


def write_index(directory):
    """Rebuild ``index.md``, ``trends.png`` (when matplotlib is installed; otherwise the index
    says how to install it) and the self-contained ``index.html``; the caller holds the lock."""
    out = Path(directory)
    reports = _load_reports(out)
    png = trends.plot_trends(reports)
    if png is not None:
        atomic_write(out / "trends.png", png)
    atomic_write(out / "index.md", trends.render_index(
        reports, plot_note=None if png is not None else trends.PLOT_MISSING))
    atomic_write(out / "index.html", trends.render_html(reports, png))


def resolve_range(first_text, last_text):
    """The days from ``--from`` to ``--to`` (both included), in order."""
    days = []
    for name, text in (("--from", first_text), ("--to", last_text)):
        try:
            days.append(dt.date.fromisoformat(text))
        except (TypeError, ValueError):
            raise SpcaParameterError(f"{name} must be YYYY-MM-DD, got {text!r}") from None
    first, last = days
    if first > last:
        raise SpcaParameterError(f"--from {first_text} is later than --to {last_text}")
    count = (last - first).days + 1
    if count > MAX_RANGE_DAYS:
        raise SpcaParameterError(f"--from/--to span {count} days; at most {MAX_RANGE_DAYS} "
                                 "per run")
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
