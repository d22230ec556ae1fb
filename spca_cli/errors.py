"""Exceptions of the library; the CLI turns them into one-line messages and exit status 1.

The library never imports click: it raises these, and ``cli.py`` catches exactly these types,
so a real bug still shows its traceback.
"""

from __future__ import annotations


class SpcaError(Exception):
    """Base class of every error spca reports to a user as one line."""


class SpcaInputError(SpcaError):
    """An input file is missing, empty or malformed.

    Parameters
    ----------
    path : str
        The file at fault (shown first in the message).
    message : str
        What is wrong, as one sentence without a trailing period.
    line : int, optional
        1-based line (or record) number where the problem was found.
    """

    def __init__(self, path, message, line=None):
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}: line {line}: " if line is not None else f"{self.path}: "
        super().__init__(where + message)


class SpcaOutputError(SpcaError):
    """An output path that cannot (or must not) be written: a missing or unwritable folder, a
    directory where a file goes, an input file, or an OSError while writing.

    Parameters
    ----------
    path : str
        The output at fault (shown first in the message).
    message : str
        What is wrong, as one sentence without a trailing period.
    """

    def __init__(self, path, message):
        self.path = str(path)
        self.message = message
        super().__init__(f"{self.path}: {message}")


class SpcaParameterError(SpcaError, ValueError):
    """A parameter value, or a combination of values, that cannot work on this input."""


class SpcaNoDocumentsError(SpcaInputError):
    """The filters (dates, ``--contains``) leave no documents; ``spca daily`` treats it as an
    empty day rather than a failure."""


class ConvergenceWarning(UserWarning):
    """An iterative method stopped at its iteration or time limit: the result is usable (and its
    bounds valid) but may be worse than with more iterations or time."""
