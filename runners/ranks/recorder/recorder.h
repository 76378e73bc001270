/* What the recorder's core (collsweep_record.c) and its MPI wrappers (wrappers.c) share. */
#ifndef COLLSWEEP_RECORDER_H
#define COLLSWEEP_RECORDER_H
#include <mpi.h>

#define HIDDEN __attribute__((visibility("hidden")))

/* The collectives recorded, and those only counted; their names are in collsweep_record.c. */
enum { ALLREDUCE, BCAST, REDUCE, ALLGATHER, REDUCE_SCATTER_BLOCK, N_RECORDED };
enum {
    BARRIER, ALLTOALL, ALLTOALLV, ALLGATHERV, GATHER, GATHERV, SCATTER, SCATTERV,
    REDUCE_SCATTER, SCAN, EXSCAN, IALLREDUCE, IBCAST, IREDUCE, IALLGATHER,
    IREDUCE_SCATTER_BLOCK, IBARRIER, IALLTOALL, N_COUNTED
};

/* Whether calls are being recorded (MPI is up and COLLSWEEP_RECORD_DIR names a folder). */
HIDDEN int collsweep_recording(void);
/* One call of a recorded collective (a no-op when not recording): `count` elements of `type`
 * per rank where `per_rank` (allgather, reduce_scatter_block: the whole vector is p blocks). */
HIDDEN void collsweep_record(int kind, MPI_Comm comm, MPI_Count count, MPI_Datatype type,
                             MPI_Op op, int root, int per_rank);
/* One call of a collective that is only counted. */
HIDDEN void collsweep_count(int which);

#endif
