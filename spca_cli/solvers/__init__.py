"""Sparse PCA solvers. ``SOLVERS`` maps each ``--solver`` name to its function.

Single-component solvers share the signature documented in :mod:`spca_cli.solvers._base`;
``JOINT_SOLVERS`` compute all components at once (disjoint supports).
"""

from spca_cli.solvers._base import SolverOutput
from spca_cli.solvers.bipartite import bipartite
from spca_cli.solvers.exact import auto, exact
from spca_cli.solvers.greedy import greedy
from spca_cli.solvers.nonneg import nonneg
from spca_cli.solvers.spannogram import spannogram
from spca_cli.solvers.threshold import threshold
from spca_cli.solvers.tpower import tpower

SOLVERS = {
    "threshold": threshold,
    "tpower": tpower,
    "greedy": greedy,
    "nonneg": nonneg,
    "spannogram": spannogram,
    "exact": exact,
    "auto": auto,
}

JOINT_SOLVERS = {
    "bipartite": bipartite,
}

__all__ = ["SOLVERS", "JOINT_SOLVERS", "SolverOutput", "threshold"]
