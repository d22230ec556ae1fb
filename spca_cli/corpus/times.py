"""Timestamps of tweets -> (UTC epoch seconds, UTC offset as written), vectorised.

Two families occur in real tweet files (SPEC, "Inputs"):

* Twitter's own ``Wed Feb 18 09:41:04 +0000 2015`` (API JSON);
* ISO 8601 and its near relatives: ``2015-02-17T11:53:37Z``, ``2015-02-17T11:53:37.000+00:00``,
  ``2015-02-17 11:53:37 -0800`` (the airline CSV), ``2015-02-17`` (a date alone).

A million tweets through ``datetime.strptime`` take ~8 s, longer than the rest of ingest together,
so fixed-width fields are read as character codes with numpy, and only the few distinct offset
suffixes ("-0800", "Z", ...) are parsed in Python. A string that does not fit either layout goes
through :func:`parse_one`, which either parses it or says which record is wrong.
A time without an offset is taken as UTC. A time is kept only when it lies in the years 1-9999
both in UTC and as written (:data:`TIME_RANGE`), the years a corpus file stores and a
``datetime`` shows; any other is refused like an unreadable one, naming its record.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

import numpy as np

__all__ = ["parse_timestamps", "parse_one", "parse_bound", "format_time", "TIME_RANGE",
           "storable_times"]

_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_TZ = re.compile(r"^\s*(?:\.\d+)?\s*(?:(Z|UTC|GMT)|([+-])(\d\d):?(\d\d))?\s*$", re.IGNORECASE)
_DAYS_IN_MONTH = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


#: UTC seconds of 0001-01-01T00:00:00 and 9999-12-31T23:59:59: the times a datetime can show
TIME_RANGE = (-62135596800, 253402300799)


class TimeFormatError(ValueError):
    """A timestamp that cannot be read; ``index`` is its position in the batch."""

    def __init__(self, index, value):
        self.index = index
        self.value = value
        super().__init__(f"cannot read time {value!r}")


class TimeRangeError(TimeFormatError):
    """A timestamp that reads as a time outside :data:`TIME_RANGE` (year 0, or a year 1 or 9999
    that its offset moves outside in UTC)."""


def storable_times(epoch, offset):
    """Boolean mask of the times in :data:`TIME_RANGE` both in UTC (``epoch``) and as written
    (``epoch + offset``): the times a corpus file holds and :func:`format_time` shows."""
    epoch = np.asarray(epoch, dtype=np.int64)
    local = epoch + np.asarray(offset, dtype=np.int64)
    low, high = TIME_RANGE
    return (epoch >= low) & (epoch <= high) & (local >= low) & (local <= high)


def _days_from_civil(y, m, d):
    # Howard Hinnant's days_from_civil, vectorised: days since 1970-01-01 (proleptic Gregorian)
    y = y - (m <= 2)
    era = np.where(y >= 0, y, y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _offset_seconds(tail):
    match = _TZ.match(tail)
    if match is None:
        return None
    if match.group(2) is None:
        return 0
    sign = -1 if match.group(2) == "-" else 1
    hours, minutes = int(match.group(3)), int(match.group(4))
    if hours > 23 or minutes > 59:
        return None
    return sign * (hours * 3600 + minutes * 60)


def _number(codes, start, stop):
    digits = codes[:, start:stop].astype(np.int64) - 48
    value = np.zeros(len(codes), dtype=np.int64)
    for j in range(stop - start):
        value = value * 10 + digits[:, j]
    return value, np.all((digits >= 0) & (digits <= 9), axis=1)


def _fast(strings):
    """(epoch, offset, ok) for the strings that fit a fixed layout; ok marks those that did."""
    n = len(strings)
    epoch = np.zeros(n, dtype=np.int64)
    offset = np.zeros(n, dtype=np.int32)
    ok = np.zeros(n, dtype=bool)
    if n == 0:
        return epoch, offset, ok
    arr = np.array(strings, dtype="U32")  # longer strings are cut here and fail the checks below
    codes = arr.view(np.int32).reshape(n, 32)  # one UCS-4 code per character, no copy
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=n)

    def at(i, ch):
        return codes[:, i] == ord(ch)

    # Twitter: "Wed Feb 18 09:41:04 +0000 2015"
    tw = (lengths == 30) & at(3, " ") & at(7, " ") & at(10, " ") & at(13, ":") & at(16, ":") \
        & at(19, " ") & at(25, " ") & (at(20, "+") | at(20, "-"))
    # ISO: "2015-02-17T11:53:37..." or "2015-02-17 11:53:37 -0800" or "2015-02-17"
    date_only = (lengths == 10) & at(4, "-") & at(7, "-")
    iso = (lengths >= 19) & at(4, "-") & at(7, "-") & (at(10, "T") | at(10, " ")) & at(13, ":") \
        & at(16, ":")

    year = np.zeros(n, np.int64)
    month = np.zeros(n, np.int64)
    day = np.zeros(n, np.int64)
    hms = np.zeros(n, np.int64)
    good = np.zeros(n, dtype=bool)

    if tw.any():
        c = codes[:, 4:7].astype(np.int64)
        key = c[:, 0] * 65536 + c[:, 1] * 256 + c[:, 2]
        names = np.array([ord(a) * 65536 + ord(b) * 256 + ord(c) for a, b, c in _MONTHS])
        mon = np.searchsorted(np.sort(names), key)
        mon = np.clip(mon, 0, 11)
        month_of_sorted = np.argsort(names) + 1
        found = np.sort(names)[mon] == key
        y, g1 = _number(codes, 26, 30)
        d, g2 = _number(codes, 8, 10)
        h, g3 = _number(codes, 11, 13)
        mi, g4 = _number(codes, 14, 16)
        s, g5 = _number(codes, 17, 19)
        oh, g6 = _number(codes, 21, 23)
        om, g7 = _number(codes, 23, 25)
        sel = tw & found & g1 & g2 & g3 & g4 & g5 & g6 & g7 & (oh <= 23) & (om <= 59)
        year[sel], month[sel], day[sel] = y[sel], month_of_sorted[mon[sel]], d[sel]
        hms[sel] = (h * 3600 + mi * 60 + s)[sel]
        sign = np.where(codes[:, 20] == ord("-"), -1, 1)
        offset[sel] = (sign * (oh * 3600 + om * 60))[sel]
        good |= sel & (h <= 23) & (mi <= 59) & (s <= 60)

    if iso.any() or date_only.any():
        y, g1 = _number(codes, 0, 4)
        mo, g2 = _number(codes, 5, 7)
        d, g3 = _number(codes, 8, 10)
        sel_d = date_only & g1 & g2 & g3
        year[sel_d], month[sel_d], day[sel_d] = y[sel_d], mo[sel_d], d[sel_d]
        good |= sel_d
        if iso.any():
            h, g4 = _number(codes, 11, 13)
            mi, g5 = _number(codes, 14, 16)
            s, g6 = _number(codes, 17, 19)
            sel = iso & g1 & g2 & g3 & g4 & g5 & g6 & (h <= 23) & (mi <= 59) & (s <= 60)
            # the suffix after the seconds takes few distinct values ("Z", " -0800", ".000Z")
            where = np.flatnonzero(sel)
            tails = [strings[i][19:] for i in where]
            uniq, inverse = np.unique(np.array(tails, dtype=str), return_inverse=True)
            offs = [_offset_seconds(t) for t in uniq]
            tail_ok = np.array([o is not None for o in offs], dtype=bool)[inverse]
            tail_off = np.array([o or 0 for o in offs], dtype=np.int64)[inverse]
            where = where[tail_ok]
            year[where], month[where], day[where] = y[where], mo[where], d[where]
            hms[where] = (h * 3600 + mi * 60 + s)[where]
            offset[where] = tail_off[tail_ok]
            good[where] = True

    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    valid_month = (month >= 1) & (month <= 12)
    dim = _DAYS_IN_MONTH[np.clip(month - 1, 0, 11)] + ((month == 2) & leap)
    good &= valid_month & (day >= 1) & (day <= dim)
    epoch = _days_from_civil(year, month, day) * 86400 + hms - offset
    return epoch, offset, good


_FORMATS = ("%a %b %d %H:%M:%S %z %Y", "%Y-%m-%d %H:%M:%S %z", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d")


def parse_one(value):
    """One timestamp -> (epoch seconds, offset seconds), or raise ``ValueError``."""
    text = value.strip()
    dt = None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        for fmt in _FORMATS:
            try:
                dt = datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
    if dt is None:
        raise ValueError(f"cannot read time {value!r}")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    off = int(dt.utcoffset().total_seconds())
    return int(dt.timestamp()), off


def parse_timestamps(strings):
    """Parse a list of timestamp strings.

    Parameters
    ----------
    strings : list of str

    Returns
    -------
    epoch : ndarray of shape (n,), int64
        UTC seconds since 1970-01-01.
    offset : ndarray of shape (n,), int32
        UTC offset in seconds as written (0 when none was written).

    Raises
    ------
    TimeFormatError
        With ``index`` of the first string that cannot be read; a :class:`TimeRangeError`
        when it reads as a time outside :data:`TIME_RANGE`.
    """
    epoch, offset, ok = _fast(strings)
    for i in np.flatnonzero(~ok):
        try:
            epoch[i], offset[i] = parse_one(strings[i])
        except (ValueError, OverflowError):
            raise TimeFormatError(int(i), strings[i]) from None
    outside = np.flatnonzero(~storable_times(epoch, offset))
    if len(outside):
        raise TimeRangeError(int(outside[0]), strings[outside[0]])
    return epoch, offset


def parse_bound(value, *, name, end_of_day=False):
    """``since``/``until`` (a date or an ISO datetime; ``name`` is which) -> UTC epoch seconds.

    A date alone means the start of that day in UTC, or with ``end_of_day`` its last second,
    so ``--until 2015-02-20`` keeps all of Feb 20.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        dt = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return int(dt.timestamp())
    if isinstance(value, date):
        value = value.isoformat()
    text = str(value).strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            dt = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
            if end_of_day:
                dt = dt + timedelta(days=1, seconds=-1)
            return int(dt.timestamp())
        return parse_one(text)[0]
    except ValueError:
        from spca_cli.errors import Name, SpcaParameterError

        raise SpcaParameterError([Name(name), " must be a date (2015-02-17) or an ISO datetime "
                                  f"(2015-02-17T09:00:00-08:00), got {value!r}"]) from None


def format_time(epoch, offset):
    """ISO 8601 with the offset as written: (1424159617, -28800) -> '2015-02-17T00:53:37-08:00'."""
    tz = timezone(timedelta(seconds=int(offset)))
    return datetime.fromtimestamp(int(epoch), tz).isoformat()
