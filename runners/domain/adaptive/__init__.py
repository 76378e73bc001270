"""The adaptive sweep (no MPI): which points to measure next where the decision is least
certain (design.py), what each point costs (cost.py), and the winner of every cell left
unmeasured, inferred from its measured neighbours and the model and said to be inferred
(estimates.py, inference.py)."""
