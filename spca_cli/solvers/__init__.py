"""Sparse PCA solvers. :data:`~spca_cli.solvers.registry.REGISTRY` holds one entry per
``--solver`` name: its function, its parameters with their constraints and the common inputs
it uses; ``SOLVERS`` and ``JOINT_SOLVERS`` are views of it by kind.

Single-component solvers share the signature documented in :mod:`spca_cli.solvers._base`;
``JOINT_SOLVERS`` compute all components at once (disjoint supports).
"""

from spca_cli.solvers._base import SolverOutput
from spca_cli.solvers.registry import REGISTRY, SolverSpec, solver_spec
from spca_cli.solvers.threshold import threshold

SOLVERS = {name: spec.function for name, spec in REGISTRY.items() if not spec.joint}

JOINT_SOLVERS = {name: spec.function for name, spec in REGISTRY.items() if spec.joint}

__all__ = ["REGISTRY", "SOLVERS", "JOINT_SOLVERS", "SolverOutput", "SolverSpec", "solver_spec",
           "threshold"]
