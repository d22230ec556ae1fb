"""Sparse PCA solvers. :data:`~spca_cli.solvers.registry.REGISTRY` holds one entry per
``--solver`` name: its function, its parameters with their constraints and the common inputs
it uses; ``SOLVERS`` and ``JOINT_SOLVERS`` are views of it by kind.

Single-component solvers share the signature documented in :mod:`spca_cli.solvers._base`;
``JOINT_SOLVERS`` compute all components at once (disjoint supports).

The names below are made on first use, so that importing the registry (every CLI start) loads
no solver module.
"""

__all__ = ["REGISTRY", "SOLVERS", "JOINT_SOLVERS", "SolverOutput", "SolverSpec", "solver_spec"]


def __getattr__(name):
    if name in ("SOLVERS", "JOINT_SOLVERS"):
        from spca_cli.solvers.registry import REGISTRY

        joint = name == "JOINT_SOLVERS"
        value = {key: spec.function for key, spec in REGISTRY.items() if spec.joint == joint}
    elif name == "SolverOutput":
        from spca_cli.solvers._base import SolverOutput as value
    elif name in ("REGISTRY", "SolverSpec", "solver_spec"):
        from spca_cli.solvers import registry

        value = getattr(registry, name)
    else:
        raise AttributeError(f"module 'spca_cli.solvers' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *__all__})
