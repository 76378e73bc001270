/* Baseline for collsweep's harness: MPI_Allreduce timed in plain C, with the same policy.
 *
 * Usage: allreduce_timer WARMUP BYTES:ITERATIONS [BYTES:ITERATIONS ...]
 * For each size (float32 elements, MPI_SUM, separate send and receive buffers written with
 * data): WARMUP untimed calls, then ITERATIONS iterations of MPI_Barrier; t0; MPI_Allreduce;
 * t = now - t0, with CLOCK_MONOTONIC (what Python's perf_counter reads). The per-iteration
 * times are reduced with one MPI_Allreduce(MAX) after the loop, outside the timed region, and
 * rank 0 prints one JSON line per size with every sample (max over ranks), in seconds.
 * Buffers get numpy's memory setting: from 4 MiB up, numpy advises huge pages (madvise
 * MADV_HUGEPAGE from the first 4 KiB boundary), and huge pages change large-message times.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define HUGEPAGE_THRESHOLD (4L << 20)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The timed loop: WARMUP untimed calls, then ITERATIONS of Barrier; t0; Allreduce; t - t0,
 * then one MPI_Allreduce(MAX) of the times. Exported so that a Python rank can call it on
 * the very buffers the harness times (benchmarks/overhead_worker.py, through ctypes). */
void collsweep_time_allreduce(const float *send, float *recv, int count, int iterations,
                              int warmup, double *times) {
    for (int i = 0; i < warmup; i++) {
        MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    for (int i = 0; i < iterations; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double start = now();
        MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        times[i] = now() - start;
    }
    MPI_Allreduce(MPI_IN_PLACE, times, iterations, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

#ifndef COLLSWEEP_NO_MAIN
/* malloc plus numpy's huge-page advice (numpy/_core/src/multiarray/alloc.c). */
static void *numpy_like_alloc(size_t nbytes) {
    char *p = malloc(nbytes + 1);
    if (p != NULL && (long)nbytes >= HUGEPAGE_THRESHOLD) {
        uintptr_t offset = 4096u - (uintptr_t)p % 4096u;
        madvise(p + offset, nbytes - offset, MADV_HUGEPAGE);
    }
    return p;
}

static void time_size(long nbytes, int iterations, int warmup, int rank) {
    int count = (int)(nbytes / (long)sizeof(float));
    float *send = numpy_like_alloc((size_t)count * sizeof(float));
    float *recv = numpy_like_alloc((size_t)count * sizeof(float));
    double *times = malloc((size_t)iterations * sizeof(double));
    for (int i = 0; i < count; i++) {
        send[i] = (float)((rank + i) % 7 + 1);
        recv[i] = 0.0f;
    }
    collsweep_time_allreduce(send, recv, count, iterations, warmup, times);
    if (rank == 0) {
        printf("{\"bytes\": %ld, \"samples\": [", nbytes);
        for (int i = 0; i < iterations; i++) {
            printf(i ? ", %.9e" : "%.9e", times[i]);
        }
        printf("]}\n");
        fflush(stdout);
    }
    free(send);
    free(recv);
    free(times);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        if (rank == 0) fprintf(stderr, "usage: %s WARMUP BYTES:ITERATIONS...\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int warmup = atoi(argv[1]);
    for (int a = 2; a < argc; a++) {
        long nbytes = 0;
        int iterations = 0;
        if (sscanf(argv[a], "%ld:%d", &nbytes, &iterations) != 2 || iterations < 1) {
            if (rank == 0) fprintf(stderr, "bad size argument %s\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        time_size(nbytes, iterations, warmup, rank);
    }
    MPI_Finalize();
    return 0;
}
#endif
