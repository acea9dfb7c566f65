/* On GPUs (SYMCOMM_BACKEND=cuda, under symcomm-run; run by tests/gpu/run.sh):
 * destroying a communicator, and a symcomm stream over the caller's CUDA
 * stream, waits for symcomm's own work on that stream only, not for the
 * caller's work queued after it. A communicator (timeout 3 s) runs an
 * all-reduce on the caller's stream X, then the caller queues a host
 * function that holds X for 6 s. symcomm_stream_destroy returns well before
 * either (the all-reduce is done), with right data; X then finishes the
 * caller's work as queued. symcomm_comm_destroy's own wait ends as soon,
 * but the driver's frees (cuMemFree, cuMemFreeHost) wait for the device to
 * be idle, the caller's work included (symcomm.h says so): it is only
 * checked to return, with the data right. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_device.h"
#include "test_util.h"

#define COUNT 4096
#define HOLD_S 6

static void hold_stream(void *user) {
  (void)user;
  sleep(HOLD_S);
}

int main(void) {
  symcomm_comm_t world, comm;
  int rank, size;
  tdev_init_job(&world, &rank, &size, true);
  symcomm_config_t config = SYMCOMM_CONFIG_INITIALIZER;
  config.timeout_ms = 3000;
  TEST_OK(symcomm_init_from_env(&comm, &config));
  const tdev_driver_t *cu = tdev_cu();
  void *x = NULL;
  TDEV_CU(cu->cuStreamCreate(&x, TDEV_STREAM_NON_BLOCKING));
  symcomm_stream_t sx;
  TEST_OK(symcomm_stream_from_cuda(comm, x, &sx));
  int32_t *h = malloc(COUNT * sizeof(int32_t)), *buf = tdev_alloc(COUNT * sizeof(int32_t));
  TEST_ASSERT(h != NULL);
  for (int i = 0; i < COUNT; i++)
    h[i] = (rank + 1) * 1000 + i;
  tdev_upload(buf, h, COUNT * sizeof(int32_t));
  TEST_OK(symcomm_allreduce(buf, buf, COUNT, SYMCOMM_INT32, SYMCOMM_SUM, comm, sx));
  TDEV_CU(cu->cuLaunchHostFunc(x, hold_stream, NULL));

  double t0 = test_now();
  TEST_OK(symcomm_stream_destroy(sx));
  double stream_s = test_now() - t0;
  t0 = test_now();
  TEST_OK(symcomm_comm_destroy(comm));
  double comm_s = test_now() - t0;
  printf("rank %d: stream destroy %.3f s, communicator destroy %.3f s (the caller holds the stream "
         "%d s, the timeout is 3 s)\n",
         rank, stream_s, comm_s, HOLD_S);
  TEST_ASSERT(stream_s < 2.0, "waited for the caller's work: stream destroy %.3f s", stream_s);

  TDEV_CU(cu->cuStreamSynchronize(x));
  tdev_download(h, buf, COUNT * sizeof(int32_t));
  for (int i = 0; i < COUNT; i++) {
    int32_t want = 1000 * size * (size + 1) / 2 + size * i;
    TEST_ASSERT(h[i] == want, "element %d is %d, not %d", i, h[i], want);
  }
  free(h);
  tdev_free(buf);
  TDEV_CU(cu->cuStreamDestroy(x));
  TEST_OK(symcomm_comm_destroy(world));
  if (rank == 0)
    printf("test_gpu_drain: all passed\n");
  return 0;
}
