"""The hand-written bcast algorithms, one module each."""
