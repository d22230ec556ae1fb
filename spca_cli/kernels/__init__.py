"""Numba kernels: small pure functions, arrays in and arrays out, one module per solver.

Nothing here imports scipy or touches Python objects; the solver front ends in
:mod:`spca_cli.solvers` convert inputs (float64, int64, C order) and call these.
"""
