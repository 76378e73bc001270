"""The hand-written allgather algorithms, one module each."""
