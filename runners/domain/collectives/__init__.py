"""The collectives and what every algorithm of one must keep (pure: no MPI).

`collective` names each collective and its contract; `datatypes` the datatypes and reduction
ops; `schedule` the steps a rank runs, as data; `descriptor` what collsweep knows about one
algorithm; `contract_check` proves a schedule keeps its contract symbolically; `inputs` makes
inputs whose result is known exactly. Everything above this wing reads these."""
