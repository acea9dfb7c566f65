/* On a GPU host: initialise NCCL over every local GPU so that, with
 * NCCL_TOPO_DUMP_FILE set, NCCL writes its view of the host's topology.
 * tests/gpu/capture_nccl_topology.sh builds and runs it. */
#include <stdio.h>

#include <cuda_runtime.h>
#include <nccl.h>

#define MAX_GPUS 16

int main(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
    fprintf(stderr, "dump_nccl_topology: no GPU\n");
    return 1;
  }
  if (n > MAX_GPUS)
    n = MAX_GPUS;
  ncclComm_t comms[MAX_GPUS];
  int devs[MAX_GPUS];
  for (int i = 0; i < n; i++)
    devs[i] = i;
  ncclResult_t r = ncclCommInitAll(comms, n, devs);
  if (r != ncclSuccess) {
    fprintf(stderr, "dump_nccl_topology: ncclCommInitAll: %s\n", ncclGetErrorString(r));
    return 1;
  }
  for (int i = 0; i < n; i++)
    ncclCommDestroy(comms[i]);
  printf("dump_nccl_topology: NCCL initialised %d GPUs\n", n);
  return 0;
}
