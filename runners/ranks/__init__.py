"""Code that runs inside the MPI ranks (imports mpi4py): the algorithms, the timing harness
and the rank-side entry points of sweep, calibrate and verify. Imports runners.domain only."""
