/* Figure 10's loop: back-to-back MPI_Allreduce calls (8 B: 2 float32, MPI_SUM, MPI_COMM_WORLD),
 * timed per repeat, run with and without collsweep's call recorder preloaded.
 *
 * Usage: record_timer CALLS REPEATS
 * 100 untimed calls, then REPEATS times: MPI_Barrier; t0; CALLS calls; (now - t0) / CALLS,
 * with CLOCK_MONOTONIC. One MPI_Allreduce(MAX) of the per-call times after the loop; rank 0
 * prints {"seconds_per_call": [...]}, one value per repeat (max over ranks). The result of every
 * call is checked (MPI_Abort(1) on a wrong one).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long calls = argc > 2 ? atol(argv[1]) : 0;
    int repeats = argc > 2 ? atoi(argv[2]) : 0;
    if (calls < 1 || repeats < 1 || repeats > 1000) {
        if (rank == 0) fprintf(stderr, "usage: %s CALLS REPEATS\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    float send[2] = {1.0f, (float)rank}, recv[2] = {0.0f, 0.0f};
    double *times = malloc(sizeof(double) * (size_t)repeats);
    for (int i = 0; i < 100; i++)
        MPI_Allreduce(send, recv, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int r = 0; r < repeats; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = now();
        for (long i = 0; i < calls; i++)
            MPI_Allreduce(send, recv, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        times[r] = (now() - start) / (double)calls;
        if (recv[0] != (float)size || recv[1] != (float)(size * (size - 1) / 2))
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Allreduce(MPI_IN_PLACE, times, repeats, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("{\"seconds_per_call\": [");
        for (int r = 0; r < repeats; r++) printf(r ? ", %.6e" : "%.6e", times[r]);
        printf("]}\n");
    }
    free(times);
    MPI_Finalize();
    return 0;
}
