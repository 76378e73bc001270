"""Pure domain code: no MPI, no processes, no store. The algorithm catalog, models,
statistics, inputs, fits, crossovers, assumptions, specs, plans, launcher policy, units and
errors; every other layer may import it."""
