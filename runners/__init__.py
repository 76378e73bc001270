"""collsweep's measuring side: algorithms, sweeps, timing, models and the results store.

Importing this package does not start MPI; only the modules that run inside ranks import mpi4py.
"""

__version__ = "0.1.0"
