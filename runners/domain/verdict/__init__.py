"""What the measurements say (pure: no MPI, no store).

`comparison` decides which of two algorithms is faster; `winner_table` and `summary` say the
answer per size and at a glance; `crossovers` where the best choice changes; `assumptions` which
of the model's assumptions a run met (`topology` where its ranks ran, `provisional` when its
winners are provisional); `history` the host's run-to-run variation; `run_comparison` two runs
of the same points."""
