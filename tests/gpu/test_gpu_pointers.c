/* On GPUs (SYMCOMM_BACKEND=cuda, under symcomm-run; run by tests/gpu/run.sh):
 *   test_gpu_pointers
 * Memory the GPU cannot use, passed where device memory belongs, is refused
 * before anything is queued, with a sentence that says what is wrong, never
 * a GPU fault: host memory (malloc, the stack) as a collective's send or
 * receive buffer and as a send's or receive's buffer; a device buffer whose
 * range runs past its allocation; memory of another GPU; a CUDA stream of
 * another GPU's context; device memory from cuMemAlloc given to
 * symcomm_window_register; pageable host memory as the source of a put.
 * Afterwards the stream is idle and healthy, and a real all-reduce and ring
 * on every rank still give the right data (the ranks stayed in step). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_data.h"
#include "test_device.h"
#include "test_opset.h"
#include "test_util.h"

static symcomm_comm_t comm;
static int rank, size;

/* A call that must be refused with INVALID_ARGUMENT and a sentence holding `needle`. */
#define EXPECT_REFUSED(call, needle)                                                             \
  do {                                                                                           \
    symcomm_result_t r_ = (call);                                                                \
    TEST_ASSERT(r_ == SYMCOMM_ERR_INVALID_ARGUMENT, "%s returned %s (%s), expected a refusal", \
                #call, symcomm_result_string(r_), symcomm_last_error(comm));                      \
    TEST_ASSERT(test_contains(symcomm_last_error(comm), needle),                                 \
                "%s: the sentence does not say \"%s\": %s", #call, needle,                       \
                symcomm_last_error(comm));                                                       \
    if (rank == 0)                                                                               \
      printf("refused as expected: %s\n", symcomm_last_error(comm));                             \
  } while (0)

/* Memory and a stream on another GPU than ours (needs two visible GPUs). */
static void test_other_gpu(symcomm_stream_t stream, float *mine) {
  const tdev_driver_t *cu = tdev_cu();
  int count = 0;
  TDEV_CU(cu->cuDeviceGetCount(&count));
  if (count < 2) {
    printf("rank %d: one visible GPU: memory of another GPU not tried\n", rank);
    return;
  }
  int other = (tdev_device() + 1) % count, dev = -1;
  void *ours = NULL, *theirs = NULL, *their_stream = NULL;
  TDEV_CU(cu->cuCtxGetCurrent(&ours));
  TDEV_CU(cu->cuDeviceGet(&dev, other));
  TDEV_CU(cu->cuDevicePrimaryCtxRetain(&theirs, dev));
  TDEV_CU(cu->cuCtxSetCurrent(theirs));
  tdev_ptr_t far = 0;
  TDEV_CU(cu->cuMemAlloc(&far, 4096));
  TDEV_CU(cu->cuStreamCreate(&their_stream, TDEV_STREAM_NON_BLOCKING));
  TDEV_CU(cu->cuCtxSetCurrent(ours));
  float *p = (float *)(uintptr_t)far;
  EXPECT_REFUSED(symcomm_allreduce(p, mine, 64, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream),
                 "memory of CUDA device");
  EXPECT_REFUSED(symcomm_allreduce(mine, p, 64, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream),
                 "memory of CUDA device");
  EXPECT_REFUSED(symcomm_recv(p, 64, SYMCOMM_FLOAT32, (rank + 1) % size, comm, stream),
                 "memory of CUDA device");
  symcomm_stream_t wrapped = NULL;
  EXPECT_REFUSED(symcomm_stream_from_cuda(comm, their_stream, &wrapped), "another context");
  TEST_ASSERT(wrapped == NULL, "a refused call wrote its output");
  TDEV_CU(cu->cuCtxSetCurrent(theirs));
  TDEV_CU(cu->cuStreamDestroy(their_stream));
  TDEV_CU(cu->cuMemFree(far));
  TDEV_CU(cu->cuCtxSetCurrent(ours));
}

int main(void) {
  tdev_init_job(&comm, &rank, &size, true);
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  int right = (rank + 1) % size, left = (rank + size - 1) % size;

  enum { N = 1024 };
  float *heap = malloc(N * sizeof(float)), stack[64];
  TEST_ASSERT(heap != NULL);
  memset(heap, 0, N * sizeof(float));
  memset(stack, 0, sizeof(stack));
  float *dev = tdev_alloc(N * sizeof(float));
  EXPECT_REFUSED(symcomm_allreduce(heap, dev, N, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream),
                 "host memory");
  EXPECT_REFUSED(symcomm_allreduce(dev, heap, N, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream),
                 "host memory");
  EXPECT_REFUSED(symcomm_allreduce(stack, stack, 64, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream),
                 "host memory");
  EXPECT_REFUSED(symcomm_allgather(dev, heap, 8, SYMCOMM_FLOAT32, comm, stream), "host memory");
  EXPECT_REFUSED(symcomm_broadcast(dev, heap, N, SYMCOMM_FLOAT32, 0, comm, stream),
                 "host memory");
  EXPECT_REFUSED(symcomm_send(heap, N, SYMCOMM_FLOAT32, right, comm, stream), "host memory");
  EXPECT_REFUSED(symcomm_recv(stack, 64, SYMCOMM_FLOAT32, left, comm, stream), "host memory");
  /* Device memory, but more of it than the allocation holds (2 MiB: a
   * whole granule, so that no rounding of the allocation hides the overrun). */
  enum { BIG = (2u << 20) / sizeof(float) };
  float *big = tdev_alloc(BIG * sizeof(float));
  EXPECT_REFUSED(symcomm_allreduce(big, big, 2 * BIG, SYMCOMM_FLOAT32, SYMCOMM_SUM, comm, stream),
                 "runs past the end");
  EXPECT_REFUSED(symcomm_send(big + BIG / 2, BIG, SYMCOMM_FLOAT32, right, comm, stream),
                 "runs past the end");
  tdev_free(big);
  test_other_gpu(stream, dev);
  /* Only symcomm_mem_alloc memory becomes a window. */
  symcomm_window_t win = NULL;
  EXPECT_REFUSED(symcomm_window_register(comm, dev, N * sizeof(float), &win), "symcomm_mem_alloc");
  TEST_ASSERT(win == NULL, "a refused call wrote its output");
  /* A put copies from device or page-locked memory only: from pageable
   * memory it would wait on the host (and break a capture). The signal of a
   * refused put_signal is not queued either. */
  TEST_OK(symcomm_window_alloc(comm, 4096, &win));
  EXPECT_REFUSED(symcomm_put(win, right, 0, heap, 256, stream), "page-locked host memory");
  EXPECT_REFUSED(symcomm_put_signal(win, right, 0, stack, 64, 0, 1, SYMCOMM_SIGNAL_ADD, stream),
                 "symcomm_put: src");
  TEST_OK(symcomm_window_free(win));

  /* Nothing was queued, nothing faulted: the stream is idle, the ranks in step. */
  TEST_OK(symcomm_stream_query(stream));
  opset_t set;
  opset_init(&set, comm);
  opset_round(&set, stream, 42, "after the refusals");
  opset_free(&set);

  tdev_free(dev);
  free(heap);
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_gpu_pointers: passed on %d GPUs\n", size);
  return 0;
}
