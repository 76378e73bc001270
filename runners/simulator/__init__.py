"""Simulation in SimGrid: every rank an actor running its algorithm's schedule step by step on a
simulated platform. The only layer that imports SimGrid (as runners/ranks is for MPI)."""
