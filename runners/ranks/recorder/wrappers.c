/* The recorder's MPI wrappers: each notes its call with the core (collsweep_record.c) and calls
 * the PMPI_ routine with the very arguments it got. The recorded collectives come in their int
 * and MPI-4 large-count (`_c`) forms (mpi4py calls the latter where the library has them); the
 * others are counted only.
 */
#include "recorder.h"

/* --- recorded: each in its int and (MPI-4) large-count form ------------------------------- */

#define RECORDED_WRAPPERS(S, N)                                                                 \
    int MPI_Allreduce##S(const void *sbuf, void *rbuf, N count, MPI_Datatype type, MPI_Op op,   \
                         MPI_Comm comm) {                                                        \
        collsweep_record(ALLREDUCE, comm, count, type, op, -1, 0);                              \
        return PMPI_Allreduce##S(sbuf, rbuf, count, type, op, comm);                            \
    }                                                                                           \
    int MPI_Bcast##S(void *buf, N count, MPI_Datatype type, int root, MPI_Comm comm) {          \
        collsweep_record(BCAST, comm, count, type, MPI_OP_NULL, root, 0);                       \
        return PMPI_Bcast##S(buf, count, type, root, comm);                                     \
    }                                                                                           \
    int MPI_Reduce##S(const void *sbuf, void *rbuf, N count, MPI_Datatype type, MPI_Op op,      \
                      int root, MPI_Comm comm) {                                                \
        collsweep_record(REDUCE, comm, count, type, op, root, 0);                               \
        return PMPI_Reduce##S(sbuf, rbuf, count, type, op, root, comm);                         \
    }                                                                                           \
    int MPI_Allgather##S(const void *sbuf, N scount, MPI_Datatype stype, void *rbuf, N rcount,  \
                         MPI_Datatype rtype, MPI_Comm comm) {                                   \
        collsweep_record(ALLGATHER, comm, rcount, rtype, MPI_OP_NULL, -1, 1);                   \
        return PMPI_Allgather##S(sbuf, scount, stype, rbuf, rcount, rtype, comm);               \
    }                                                                                           \
    int MPI_Reduce_scatter_block##S(const void *sbuf, void *rbuf, N rcount, MPI_Datatype type,  \
                                    MPI_Op op, MPI_Comm comm) {                                 \
        collsweep_record(REDUCE_SCATTER_BLOCK, comm, rcount, type, op, -1, 1);                  \
        return PMPI_Reduce_scatter_block##S(sbuf, rbuf, rcount, type, op, comm);                \
    }

RECORDED_WRAPPERS(, int)
#if MPI_VERSION >= 4
RECORDED_WRAPPERS(_c, MPI_Count)
#endif

/* --- counted only ---------------------------------------------------------------------------- */

#define COUNTED_WRAPPER(NAME, WHICH, PARAMS, ARGS) \
    int MPI_##NAME PARAMS {                        \
        collsweep_count(WHICH);                         \
        return PMPI_##NAME ARGS;                   \
    }
#define T MPI_Datatype
#define C MPI_Comm
#define R MPI_Request *

COUNTED_WRAPPER(Barrier, BARRIER, (C c), (c))
COUNTED_WRAPPER(Ibarrier, IBARRIER, (C c, R q), (c, q))

#define COUNTED_WRAPPERS(S, N, D)                                                              \
    COUNTED_WRAPPER(Alltoall##S, ALLTOALL, (const void *a, N b, T t, void *d, N e, T u, C c),  \
                    (a, b, t, d, e, u, c))                                                      \
    COUNTED_WRAPPER(Alltoallv##S, ALLTOALLV,                                                    \
                    (const void *a, const N *b, const D *x, T t, void *d, const N *e,           \
                     const D *y, T u, C c),                                                     \
                    (a, b, x, t, d, e, y, u, c))                                                \
    COUNTED_WRAPPER(Allgatherv##S, ALLGATHERV,                                                  \
                    (const void *a, N b, T t, void *d, const N *e, const D *y, T u, C c),       \
                    (a, b, t, d, e, y, u, c))                                                   \
    COUNTED_WRAPPER(Gather##S, GATHER, (const void *a, N b, T t, void *d, N e, T u, int r, C c), \
                    (a, b, t, d, e, u, r, c))                                                   \
    COUNTED_WRAPPER(Gatherv##S, GATHERV,                                                        \
                    (const void *a, N b, T t, void *d, const N *e, const D *y, T u, int r,      \
                     C c),                                                                      \
                    (a, b, t, d, e, y, u, r, c))                                                \
    COUNTED_WRAPPER(Scatter##S, SCATTER,                                                        \
                    (const void *a, N b, T t, void *d, N e, T u, int r, C c),                   \
                    (a, b, t, d, e, u, r, c))                                                   \
    COUNTED_WRAPPER(Scatterv##S, SCATTERV,                                                      \
                    (const void *a, const N *b, const D *x, T t, void *d, N e, T u, int r,      \
                     C c),                                                                      \
                    (a, b, x, t, d, e, u, r, c))                                                \
    COUNTED_WRAPPER(Reduce_scatter##S, REDUCE_SCATTER,                                          \
                    (const void *a, void *d, const N *e, T t, MPI_Op o, C c),                   \
                    (a, d, e, t, o, c))                                                         \
    COUNTED_WRAPPER(Scan##S, SCAN, (const void *a, void *d, N n, T t, MPI_Op o, C c),           \
                    (a, d, n, t, o, c))                                                         \
    COUNTED_WRAPPER(Exscan##S, EXSCAN, (const void *a, void *d, N n, T t, MPI_Op o, C c),       \
                    (a, d, n, t, o, c))                                                         \
    COUNTED_WRAPPER(Iallreduce##S, IALLREDUCE,                                                  \
                    (const void *a, void *d, N n, T t, MPI_Op o, C c, R q), (a, d, n, t, o, c, q)) \
    COUNTED_WRAPPER(Ibcast##S, IBCAST, (void *d, N n, T t, int r, C c, R q), (d, n, t, r, c, q)) \
    COUNTED_WRAPPER(Ireduce##S, IREDUCE,                                                        \
                    (const void *a, void *d, N n, T t, MPI_Op o, int r, C c, R q),              \
                    (a, d, n, t, o, r, c, q))                                                   \
    COUNTED_WRAPPER(Iallgather##S, IALLGATHER,                                                  \
                    (const void *a, N b, T t, void *d, N e, T u, C c, R q),                     \
                    (a, b, t, d, e, u, c, q))                                                   \
    COUNTED_WRAPPER(Ireduce_scatter_block##S, IREDUCE_SCATTER_BLOCK,                            \
                    (const void *a, void *d, N n, T t, MPI_Op o, C c, R q), (a, d, n, t, o, c, q)) \
    COUNTED_WRAPPER(Ialltoall##S, IALLTOALL,                                                    \
                    (const void *a, N b, T t, void *d, N e, T u, C c, R q),                     \
                    (a, b, t, d, e, u, c, q))

COUNTED_WRAPPERS(, int, int)
#if MPI_VERSION >= 4
COUNTED_WRAPPERS(_c, MPI_Count, MPI_Aint)
#endif
