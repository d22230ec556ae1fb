"""Exceptions of the library; the CLI turns them into one-line messages and exit status 1.

The library never imports click: it raises these, and ``cli.py`` catches exactly these types,
so a real bug still shows its traceback.

A message names a parameter as the Python API spells it (``min_length``), never as a command-line
flag: a message is a string, or a list of strings in which the parameter names are
:class:`Name` parts. ``str(error)`` reads the names as they are; the CLI rewrites exactly those
parts to the options its user typed (``--min-length``) with :meth:`SpcaError.worded`, so a value
that happens to equal a parameter's name is never touched.
"""

from __future__ import annotations


class Name(str):
    """A parameter's name inside a message, e.g. ``[Name("min_length"), " must be at least 1"]``.
    It reads as the name itself; the CLI shows its option instead."""

    __slots__ = ()


def _parts(message):
    """A message (a string, or a list of strings and :class:`Name` parts) as a tuple of parts."""
    return tuple(message) if isinstance(message, (list, tuple)) else (str(message),)


def _rebuilt(cls, args, state):
    """An :class:`SpcaError` of class ``cls`` with these ``args`` and attributes, made without
    its constructor (:meth:`SpcaError.__reduce__`)."""
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class SpcaError(Exception):
    """Base class of every error spca reports to a user as one line.

    Parameters
    ----------
    message : str or list of str
        The message; parameter names in it are :class:`Name` parts of a list.
    """

    def __init__(self, message=""):
        self.parts = _parts(message)
        super().__init__("".join(self.parts))

    def __reduce__(self):
        # pickled as its class, message and attributes, whatever its constructor takes: an
        # error raised in a worker process (spca topics --by) reaches the parent as itself
        return _rebuilt, (type(self), self.args, self.__dict__)

    @property
    def params(self):
        """The names of the parameters the message names, in order."""
        return tuple(str(part) for part in self.parts if isinstance(part, Name))

    def worded(self, name_of):
        """The message with every parameter name replaced by ``name_of(name)`` (the CLI passes
        a function giving the option its command takes for that parameter)."""
        return "".join(name_of(str(part)) if isinstance(part, Name) else part
                       for part in self.parts)


class SpcaInputError(SpcaError):
    """An input file is missing, empty or malformed.

    Parameters
    ----------
    path : str
        The file at fault (shown first in the message).
    message : str or list of str
        What is wrong, as one sentence without a trailing period (parameters as :class:`Name`
        parts of a list).
    line : int, optional
        1-based line (or record) number where the problem was found.
    """

    def __init__(self, path, message, line=None):
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}: line {line}: " if line is not None else f"{self.path}: "
        super().__init__([where, *_parts(message)])


class SpcaOutputError(SpcaError):
    """An output path that cannot (or must not) be written: a missing or unwritable folder, a
    directory where a file goes, an input file, or an OSError while writing.

    Parameters
    ----------
    path : str
        The output at fault (shown first in the message).
    message : str or list of str
        What is wrong, as one sentence without a trailing period.
    """

    def __init__(self, path, message):
        self.path = str(path)
        self.message = message
        super().__init__([f"{self.path}: ", *_parts(message)])


class SpcaParameterError(SpcaError, ValueError):
    """A parameter value, or a combination of values, that cannot work on this input; the message
    names the parameters as :class:`Name` parts."""


class SpcaUsageError(SpcaParameterError):
    """A parameter value that is a mistake in the command typed rather than a misfit of the data
    (a word to include that is not in the vocabulary): the CLI reports it as a usage error,
    exit status 2."""


class SpcaNoDocumentsError(SpcaInputError):
    """The filters (dates, ``contains``) leave no documents; ``spca daily`` treats it as an
    empty day rather than a failure."""


class ConvergenceWarning(UserWarning):
    """An iterative method stopped at its iteration or time limit: the result is usable (and its
    bounds valid) but may be worse than with more iterations or time."""
