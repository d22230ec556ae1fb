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

``DIR/index.md`` is rebuilt from the ``DIR/YYYY-MM-DD.json`` reports on every run. A topic is
marked *new* when no topic of the previous analysed day shares at least half of its words.
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
from spca_cli.report import render_markdown, to_dict

__all__ = ["resolve_timezone", "resolve_day", "day_window", "DirLock", "atomic_write",
           "run_daily", "DailyOutcome", "NEW_TOPIC_OVERLAP"]

NEW_TOPIC_OVERLAP = 0.5


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


def run_daily(inputs, out_dir, *, day, tz, read, topics):
    """Analyse one day and write its reports and the index.

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
            doc = {"day": day.isoformat(), "timezone": str(tz),
                   "documents": int(corpus.S.shape[0]), **to_dict(result)}
            markdown = (f"# Topics of {day.isoformat()} ({tz})\n\n"
                        f"{doc['documents']} documents.\n\n" + render_markdown(doc))
        atomic_write(json_path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        atomic_write(md_path, markdown)
        index_path = out / "index.md"
        atomic_write(index_path, render_index(out))
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
    """Indices of today's topics that share fewer than ``overlap`` of their words with every
    topic of the previous analysed day (all of them when there is no previous day)."""
    before = [set(c["words"]) for c in previous] if previous else []
    fresh = []
    for comp in today:
        words = set(comp["words"])
        if not any(len(words & old) >= overlap * len(words) for old in before):
            fresh.append(comp["index"])
    return fresh


def render_index(directory):
    """Markdown index of every analysed day: documents, top words, topics new that day."""
    lines = ["# Daily topics", "",
             "| day | documents | first topic | new topics |", "|---|---|---|---|"]
    previous = None
    for report in _load_reports(directory):
        comps = report.get("components", [])
        first = (", ".join(comps[0]["words"][:6]) if comps
                 else "; ".join(report.get("notes", [])) or "(no documents)")
        if comps:
            fresh = new_topics(comps, previous)
            fresh_text = ", ".join(f"{i}: {' '.join(comps[i - 1]['words'][:3])}" for i in fresh)
            previous = comps
        else:
            fresh_text = ""
        link = f"[{report['day']}]({report['day']}.md)"
        lines.append(f"| {link} | {report.get('documents', 0)} | {first} | {fresh_text or '-'} |")
    return "\n".join(lines) + "\n"
