"""The parent side: launching MPI jobs and following them (sweeps, calibrations,
verification), writing through runners.store. Never imports mpi4py."""
