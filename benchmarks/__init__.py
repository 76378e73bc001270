"""`make bench`: collsweep's figures, each printed as a ratio against a baseline from the same run.

Entry point: `python benchmarks/run.py` (see its --help). Not part of `make test`.
"""
