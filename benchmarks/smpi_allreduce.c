/* One MPI_Allreduce of argv[1] bytes of float32 SUM, for SMPI (smpicc): rank 0 prints the
   slowest rank's simulated seconds. No barrier first: under SMPI every rank starts at simulated
   time 0, as the ranks of `collsweep simulate` do (a barrier would leave them skewed). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long bytes = atol(argv[1]);
  int count = (int)(bytes / 4);
  float *in = calloc(count > 0 ? count : 1, 4), *out = calloc(count > 0 ? count : 1, 4);
  double start = MPI_Wtime();
  MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double took = MPI_Wtime() - start, slowest = 0.0;
  MPI_Reduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("{\"seconds\": %.17g}\n", slowest);
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
