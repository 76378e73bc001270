"""Pure domain code: no MPI, no processes, no store, no reads of the host. Every other layer
may import it. Its wings, each importing only the wings before it (tests/structure/test_layers.py):

    collectives -> algorithms -> libraries -> nodes -> model -> workload -> sweep -> verdict
    -> imports

beside the shared modules at the top (units, errors, status, names, outputs), which any wing
may import. docs/architecture.md says what each wing holds."""
