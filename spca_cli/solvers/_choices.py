"""The named values a solver option chooses among, in a module that imports nothing: the
registry declares the CLI's choices from here at every start, before any solver module (NumPy,
SciPy, numba) is loaded, and the solver checks its argument against the same tuple."""

__all__ = ["INITS"]

#: tpower's start vectors (``init``)
INITS = ("auto", "top-variance", "top-k-variance", "warm-start", "eigenvector", "spannogram")
