"""The hand-written reduce_scatter algorithms, one module each."""
