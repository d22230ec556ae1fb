"""Kernel of the UCI reader: ``docID wordID count`` lines of a byte block -> three arrays.

``np.fromstring(block, sep=" ")`` reads a gigabyte of docword text in ~7 s and gives int64
triples that still have to be split and cast; this scans the bytes once and writes the 0-based
ids (int32) and counts (float64) straight into the reader's preallocated arrays, ~1 s per GB.
It only accepts the plain layout (digits, separated by spaces or tabs, ``\\r\\n`` allowed, blank
lines skipped); anything else is reported back so that the reader's careful path can name the
line and what is wrong with it.
"""

from __future__ import annotations

from numba import njit

__all__ = ["parse_docword", "OK", "BAD_LINE", "FULL"]

OK, BAD_LINE, FULL = 0, 1, 2
_INT32_MAX = 2 ** 31 - 1


@njit(cache=True, nogil=True)
def parse_docword(buf, doc, word, count, at):
    """Parse the whole lines in ``buf`` (uint8) into ``doc[at:]``, ``word[at:]``, ``count[at:]``.

    Parameters
    ----------
    buf : ndarray of uint8
        Whole lines; the last one may lack its newline.
    doc, word : ndarray of int32
        Receive docID - 1 and wordID - 1.
    count : ndarray of float64
        Receives the counts.
    at : int
        First free position of the output arrays.

    Returns
    -------
    entries : int
        Triples written (at most ``len(doc) - at``).
    lines : int
        Lines seen (blank lines included).
    status : int
        ``OK``; ``BAD_LINE`` when a line is not three unsigned integers below 2^31 (nothing
        after it is parsed); ``FULL`` when the output arrays are full.
    """
    n = buf.shape[0]
    cap = doc.shape[0]
    k = at
    lines = 0
    i = 0
    f0 = f1 = f2 = 0
    while i < n:
        fields = 0
        while i < n and buf[i] != 10:
            c = buf[i]
            if c == 32 or c == 9 or c == 13:
                i += 1
                continue
            if c < 48 or c > 57:
                return k - at, lines, BAD_LINE
            v = 0
            while i < n and 48 <= buf[i] <= 57:
                v = v * 10 + (buf[i] - 48)
                if v > _INT32_MAX:
                    return k - at, lines, BAD_LINE
                i += 1
            if fields == 0:
                f0 = v
            elif fields == 1:
                f1 = v
            elif fields == 2:
                f2 = v
            fields += 1
        if fields == 3:
            if k >= cap:
                return k - at, lines, FULL
            doc[k] = f0 - 1
            word[k] = f1 - 1
            count[k] = f2
            k += 1
        elif fields != 0:
            return k - at, lines, BAD_LINE
        lines += 1
        i += 1  # the newline
    if n > 0 and buf[n - 1] == 10:
        lines += 1  # an empty last line, as bytes.count(b"\n") + 1 counts it
    return k - at, lines, OK
