"""Helpers the tests share: synthetic stores, MPI fingerprints, a one-node Slurm cluster,
headless Chromium over CDP."""
