/* On GPUs (SYMCOMM_BACKEND=cuda, 2 ranks under symcomm-run; run by
 * tests/gpu/run.sh): a failure that no symcomm stream reports is still the
 * communicator's asynchronous error. An all-reduce is captured into a CUDA
 * graph on the caller's stream A and the graph is launched on another stream
 * C (its kernels keep A's failure record). One replay on C works and the
 * query says OK on both ranks. Then rank 1 aborts the communicator while
 * rank 0's second replay on C waits for it: rank 0's
 * symcomm_comm_get_async_error, polled without synchronizing anything, says
 * REMOTE, naming rank 1 and the all-reduce, within 2 s of the abort; C's
 * CUDA stream then completes (the kernel stopped, no hang) and the query
 * still says so. Rank 1 reads ABORTED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_device.h"
#include "test_util.h"

#define COUNT 4096

static symcomm_result_t async_error(symcomm_comm_t comm) {
  symcomm_result_t err = SYMCOMM_ERR_INTERNAL;
  TEST_OK(symcomm_comm_get_async_error(comm, &err));
  return err;
}

int main(void) {
  symcomm_comm_t comm;
  int rank, size;
  tdev_init_job(&comm, &rank, &size, true);
  TEST_ASSERT(size == 2, "run it on 2 ranks");
  const tdev_driver_t *cu = tdev_cu();
  void *a = NULL, *c = NULL;
  TDEV_CU(cu->cuStreamCreate(&a, TDEV_STREAM_NON_BLOCKING));
  TDEV_CU(cu->cuStreamCreate(&c, TDEV_STREAM_NON_BLOCKING));
  symcomm_stream_t sa, sc;
  TEST_OK(symcomm_stream_from_cuda(comm, a, &sa));
  TEST_OK(symcomm_stream_from_cuda(comm, c, &sc));
  float *h = malloc(COUNT * sizeof(float)), *buf = tdev_alloc(COUNT * sizeof(float));
  TEST_ASSERT(h != NULL);
  for (int i = 0; i < COUNT; i++)
    h[i] = (float)((rank + 1) * 3 + i % 17);
  tdev_upload(buf, h, COUNT * sizeof(float));

  /* Eager first (first-call setup outside the capture), then the capture on A. */
  TEST_OK(symcomm_allreduce(buf, buf, COUNT, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, sa));
  TEST_OK(symcomm_stream_synchronize(sa));
  TDEV_CU(cu->cuStreamBeginCapture(a, TDEV_CAPTURE_MODE_GLOBAL));
  TEST_OK(symcomm_allreduce(buf, buf, COUNT, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, sa));
  /* Asking during the capture is legal and queues nothing into it. */
  TEST_ASSERT(async_error(comm) == SYMCOMM_OK, "during the capture: %s", symcomm_last_error(comm));
  void *graph = NULL, *exec = NULL;
  TDEV_CU(cu->cuStreamEndCapture(a, &graph));
  TDEV_CU(cu->cuGraphInstantiateWithFlags(&exec, graph, 0));

  TDEV_CU(cu->cuGraphLaunch(exec, c));
  TDEV_CU(cu->cuStreamSynchronize(c));
  TEST_ASSERT(async_error(comm) == SYMCOMM_OK, "rank %d after a good replay on C: %s", rank,
              symcomm_last_error(comm));

  if (rank == 1) {
    usleep(500000); /* rank 0's replay is waiting for this rank by then */
    TEST_OK(symcomm_comm_abort(comm));
    TEST_ASSERT(async_error(comm) == SYMCOMM_ERR_ABORTED, "rank 1: %s", symcomm_last_error(comm));
  } else {
    TDEV_CU(cu->cuGraphLaunch(exec, c));
    double t0 = test_now();
    symcomm_result_t err;
    while ((err = async_error(comm)) == SYMCOMM_OK) {
      TEST_ASSERT(test_now() - t0 < 20, "rank 0: no asynchronous error 20 s after the replay");
      usleep(1000);
    }
    double seen = test_now() - t0;
    const char *why = symcomm_last_error(comm);
    TEST_ASSERT(err == SYMCOMM_ERR_REMOTE && test_contains(why, "rank 1 aborted the communicator"),
                "rank 0: %s: %s", symcomm_result_string(err), why);
    TEST_ASSERT(seen < 0.5 + 2.0, "rank 0: the abort was seen %.2f s after the replay", seen);
    TDEV_CU(cu->cuStreamSynchronize(c)); /* the replay ended: its kernel stopped */
    err = async_error(comm);
    TEST_ASSERT(err == SYMCOMM_ERR_REMOTE && test_contains(symcomm_last_error(comm), "all-reduce"),
                "rank 0 once C is done: %s: %s", symcomm_result_string(err), symcomm_last_error(comm));
    printf("rank 0: %.2f s after the replay on C: %s: %s\n", seen, symcomm_result_string(err),
           symcomm_last_error(comm));
    symcomm_result_t on_c = symcomm_stream_synchronize(sc);
    printf("rank 0: symcomm_stream_synchronize(C) = %s (the graph's kernels report to A's record)\n",
           symcomm_result_string(on_c));
  }
  TDEV_CU(cu->cuGraphExecDestroy(exec));
  TDEV_CU(cu->cuGraphDestroy(graph));
  tdev_free(buf);
  free(h);
  TEST_OK(symcomm_stream_destroy(sa));
  TEST_OK(symcomm_stream_destroy(sc));
  TEST_OK(symcomm_comm_destroy(comm));
  TDEV_CU(cu->cuStreamDestroy(a));
  TDEV_CU(cu->cuStreamDestroy(c));
  if (rank == 0)
    printf("test_gpu_async: all passed\n");
  return 0;
}
