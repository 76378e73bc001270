"""Emulated nodes: where each rank sits (its node, by a placement) and the network between
the nodes as the spec states it (pure: no processes, no reads of the host)."""
