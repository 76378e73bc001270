"""The hand-written allreduce algorithms, one module each (schedule and descriptor)."""
