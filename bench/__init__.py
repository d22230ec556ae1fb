"""Benchmarks: `python -m bench.<name>`; not part of the default test run."""
