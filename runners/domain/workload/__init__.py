"""A job's collective calls (pure: no MPI, no store).

`file` is the documented workload file; `recording` reads what `collsweep record`'s recorder
wrote, `rank_agreement` checks the ranks agree and `recorded` makes the workload from it;
`sources` builds one from a DDP model or a PARAM trace; `policy` says which algorithm each call
uses under each policy. A sweep of a workload's calls and its replay are the sweep wing's
(`sweep.workload_spec`, `sweep.replay`)."""
