"""spca: the topics of a text corpus by sparse PCA, with certified bounds on their quality.

The data flows corpus -> matrix -> spectrum -> solver -> components -> bounds -> report;
each stage is one module (see README.md, "Architecture").

The public Python API::

    from spca_cli import SparseTopics, run_topics, load_input, Gram, REGISTRY
"""

__version__ = "0.1.0"

__all__ = ["SparseTopics", "run_topics", "load_input", "Gram", "REGISTRY", "SpcaError",
           "SpcaParameterError", "SpcaInputError", "__version__"]


def __getattr__(name):
    # imported on first use: ``import spca_cli`` (done by every CLI start) stays cheap
    if name == "SparseTopics":
        from spca_cli.estimator import SparseTopics
        return SparseTopics
    if name == "run_topics":
        from spca_cli.topics import run_topics
        return run_topics
    if name == "load_input":
        from spca_cli.corpus import load_input
        return load_input
    if name == "Gram":
        from spca_cli.matrix import Gram
        return Gram
    if name == "REGISTRY":
        from spca_cli.solvers.registry import REGISTRY
        return REGISTRY
    if name in ("SpcaError", "SpcaParameterError", "SpcaInputError"):
        from spca_cli import errors
        return getattr(errors, name)
    raise AttributeError(f"module 'spca_cli' has no attribute {name!r}")
