/* Known collective calls for tests/test_record.py, each result checked (MPI_Abort(.., 1) on a
 * wrong one), so a recorder that changed what a call computes fails the run. The same calls as
 * record_calls.py; see expected() in tests/test_record.py.
 *
 * Usage: record_calls [calls|disagree|fail]
 *   calls     the calls, results checked, exit 0
 *   disagree  the in-place allreduce reduces with MPI_SUM on rank 0 and MPI_MAX elsewhere (not
 *             checked); everything else as `calls`
 *   fail      as `calls`, then exit 3
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank, size;

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "rank %d: wrong result of %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "calls";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int root = size > 1 ? 1 : 0;
    float params[256], grads[1024], summed[1024];
    double loss, total;
    int ok = 1;

    for (int i = 0; i < 256; i++) params[i] = rank == root ? (float)i : -1.0f;
    MPI_Bcast(params, 256, MPI_FLOAT, root, MPI_COMM_WORLD);
    for (int i = 0; i < 256; i++) ok &= params[i] == (float)i;
    check(ok, "bcast");

    for (int step = 0; step < 3; step++) {
        for (int i = 0; i < 1024; i++) grads[i] = (float)(rank + i % 5);
        MPI_Allreduce(grads, summed, 1024, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < 1024; i++)
            ok &= summed[i] == (float)(size * (size - 1) / 2 + size * (i % 5));
        loss = rank + 0.5;
        MPI_Allreduce(&loss, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        ok &= total == size * (size - 1) / 2.0 + 0.5 * size;
    }
    check(ok, "allreduce");

    int flags[100];
    for (int i = 0; i < 100; i++) flags[i] = rank * 100 + i;
    MPI_Op op = strcmp(mode, "disagree") == 0 && rank == 0 ? MPI_SUM : MPI_MAX;
    MPI_Allreduce(MPI_IN_PLACE, flags, 100, MPI_INT, op, MPI_COMM_WORLD);
    if (strcmp(mode, "disagree") != 0) {
        for (int i = 0; i < 100; i++) ok &= flags[i] == (size - 1) * 100 + i;
        check(ok, "in-place allreduce");
    }

    double values[8], reduced[8];
    for (int times = 0; times < 2; times++) {
        for (int i = 0; i < 8; i++) values[i] = rank + i + times;
        MPI_Reduce(values, reduced, 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        for (int i = 0; rank == 0 && i < 8; i++)
            ok &= reduced[i] == size * (size - 1) / 2.0 + size * (double)(i + times);
    }
    check(ok, "reduce");

    int mine[4], gathered[4 * 64];
    for (int i = 0; i < 4; i++) mine[i] = rank * 10 + i;
    MPI_Allgather(mine, 4, MPI_INT, gathered, 4, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 4; i++) ok &= gathered[4 * r + i] == r * 10 + i;
    for (int i = 0; i < 4 * size; i++) gathered[i] = i / 4 == rank ? rank * 10 + i % 4 : -1;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, 4, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 4; i++) ok &= gathered[4 * r + i] == r * 10 + i;
    check(ok, "allgather");

    float blocks[2 * 64], block[2];
    for (int i = 0; i < 2 * size; i++) blocks[i] = (float)(rank + i);
    MPI_Reduce_scatter_block(blocks, block, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++)
        ok &= block[i] == (float)(size * (size - 1) / 2 + size * (2 * rank + i));
    check(ok, "reduce_scatter_block");

    int out[64], in[64];
    for (int i = 0; i < size; i++) out[i] = rank * 100 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) ok &= in[i] == i * 100 + rank;
    check(ok, "alltoall");

    MPI_Comm half;
    int half_size;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Comm_size(half, &half_size);
    float ones[16], counted[16];
    for (int i = 0; i < 16; i++) ones[i] = 1.0f;
    MPI_Allreduce(ones, counted, 16, MPI_FLOAT, MPI_SUM, half);
    for (int i = 0; i < 16; i++) ok &= counted[i] == (float)half_size;
    MPI_Comm_free(&half);
    check(ok, "allreduce on half the ranks");

    for (int i = 0; i < 1024; i++) grads[i] = 1.0f;
    MPI_Allreduce(grads, summed, 1024, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 1024; i++) ok &= summed[i] == (float)size;
    check(ok, "last allreduce");

    MPI_Finalize();
    return strcmp(mode, "fail") == 0 ? 3 : 0;
}
