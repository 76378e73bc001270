"""The hand-written reduce algorithms, one module each."""
