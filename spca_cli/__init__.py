"""spca: the topics of a text corpus by sparse PCA, with certified bounds on their quality.

The data flows corpus -> matrix -> spectrum -> solver -> components -> bounds -> report;
each stage is one module (see README.md, "Architecture").
"""

__version__ = "0.1.0"
