"""A sweep from its spec to its points (pure: no MPI, no processes, no store).

The spec (`spec`, its keys in `spec_keys`, its names expanded by `spec_names`, its sizes
checked against memory by `capacity`), the plan of launches (`plan`, `launcher`, `slurm`), the
job file the ranks read (`job_file`) and the events they print (`events`), the typed records
(`records`, `point_row`), the statistics of samples (`stats`) and of launches (`repetition`),
a run's name and tags (`run_labels`), a workload swept call by call (`workload_spec`) and
replayed (`replay`)."""
