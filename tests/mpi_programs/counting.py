"""A user-defined sum that records how many elements each local reduction received."""

import numpy as np
from mpi4py import MPI

calls: list[int] = []


def counting_sum(inbuf, inoutbuf, datatype):
    a = np.frombuffer(inbuf, dtype=np.float64)
    b = np.frombuffer(inoutbuf, dtype=np.float64)
    b += a
    calls.append(int(a.size))


COUNTING_SUM = MPI.Op.Create(counting_sum, commute=True)


def counted_call(comm: MPI.Comm, collective: str, count: int) -> bool:
    """One call of `collective` on `comm`, rank r sending `count` float64 of value r + 1 (the
    whole vector; allgather: each rank's block), the counting op reducing where the collective
    reduces (to rank 0 for reduce, from rank 0 for bcast); whether this rank's result is right.
    `calls` holds the reductions this rank received in it."""
    size = comm.Get_size()
    send = np.full(count, comm.Get_rank() + 1.0)
    total = size * (size + 1) / 2
    calls.clear()
    if collective == "allgather":
        recv = np.zeros(count * size)
        comm.Allgather(send, recv)
        return bool(np.all(recv == np.repeat(np.arange(1.0, size + 1), count)))
    if collective == "bcast":
        comm.Bcast(send, 0)
        return bool(np.all(send == 1.0))
    if collective == "reduce":
        recv = np.zeros(count)
        comm.Reduce(send, recv, COUNTING_SUM, root=0)
        return bool(np.all(recv == total)) if comm.Get_rank() == 0 else True
    if collective == "reduce_scatter":
        recv = np.zeros(count // size)
        comm.Reduce_scatter_block(send, recv, COUNTING_SUM)
    else:
        recv = np.zeros(count)
        comm.Allreduce(send, recv, COUNTING_SUM)
    return bool(np.all(recv == total))
