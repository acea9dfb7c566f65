/* On GPUs (SYMCOMM_BACKEND=cuda, under symcomm-run; run by tests/gpu/run.sh):
 *   test_gpu_stream user    the caller's CUDA streams wrapped with
 *                           symcomm_stream_from_cuda: a stream made with
 *                           cuStreamCreate (blocking and non-blocking) and the
 *                           legacy default stream (NULL). Inputs are copied in
 *                           on the caller's stream, the operations queued on
 *                           the wrapped one, results copied out on the
 *                           caller's stream again, with no host wait between:
 *                           symcomm's kernels must run in the caller's stream
 *                           order. Then destroying the wrapper leaves the CUDA
 *                           stream working.
 *   test_gpu_stream small   a few rounds of the operation set and of
 *                           put/signal/wait on a stream symcomm made: small
 *                           enough for compute-sanitizer's memcheck. It runs
 *                           on the simulated GPUs too (the CI checks the
 *                           test's own logic that way).
 * The operations are tests/common/test_opset.h's (every collective and a
 * send/recv ring, all outputs checked); the one-sided round puts data
 * depending on (round, rank, index) into the right neighbour's window. */
#include <stdio.h>
#include <string.h>

#include "test_data.h"
#include "test_device.h"
#include "test_opset.h"
#include "test_util.h"

static symcomm_comm_t comm;
static int rank, size;

/* put_signal into the right neighbour's window, wait for the left one's,
 * check it; the slot counts rounds (`round` from 1). */
static void onesided_round(symcomm_window_t win, symcomm_stream_t stream, tdev_buf_t *src,
                           int round) {
  enum { BYTES = 40009, AT = 4096 + 3 };
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  uint64_t seed = 5000 + (uint64_t)round;
  td_fill(src->host.data, BYTES, seed, rank);
  tdev_buf_push(src);
  TEST_OK(symcomm_put_signal(win, right, AT, src->data, BYTES, 7, 1, SYMCOMM_SIGNAL_ADD, stream));
  TEST_OK(symcomm_wait_signal(win, 7, SYMCOMM_CMP_GE, (uint64_t)round, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
  unsigned char *got = malloc(BYTES);
  TEST_ASSERT(got != NULL);
  tdev_download(got, (char *)symcomm_window_local(win) + AT, BYTES);
  char what[64];
  snprintf(what, sizeof(what), "put/signal round %d", round);
  td_check(got, BYTES, seed, left, what);
  free(got);
  /* Nobody overwrites the window before every rank has read it. */
  TEST_OK(symcomm_signal(win, left, 8, 1, SYMCOMM_SIGNAL_ADD, stream));
  TEST_OK(symcomm_wait_signal(win, 8, SYMCOMM_CMP_GE, (uint64_t)round, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
}

/* Rounds on a caller's CUDA stream `cs` wrapped as a symcomm stream. */
static void on_user_stream(opset_t *set, void *cs, const char *name, uint64_t first_seed) {
  const tdev_driver_t *cu = tdev_cu();
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_from_cuda(comm, cs, &s));
  for (int round = 0; round < 4; round++) {
    uint64_t seed = first_seed + (uint64_t)round;
    opset_fill(set, seed);
    opset_push_async(set, cs);
    opset_enqueue(set, s);
    opset_pull_async(set, cs);
    TDEV_CU(cu->cuStreamSynchronize(cs));
    /* The caller's stream is done, so are symcomm's kernels on it: their
     * failure record is clean. */
    TEST_OK(symcomm_stream_query(s));
    TEST_OK(symcomm_stream_synchronize(s));
    char what[96];
    snprintf(what, sizeof(what), "%s, round %d", name, round);
    opset_check(set, seed, what);
  }
  TEST_OK(symcomm_stream_destroy(s));
  /* Still the caller's: it works after the wrapper is gone. */
  opset_fill(set, first_seed + 100);
  opset_push_async(set, cs);
  opset_pull_async(set, cs);
  TDEV_CU(cu->cuStreamSynchronize(cs));
  TEST_ASSERT(cu->cuStreamQuery(cs) == TDEV_CUDA_SUCCESS, "%s: the stream is not idle", name);
  if (rank == 0)
    printf("%s: 4 rounds of the set, in the caller's stream order\n", name);
}

static void test_user(void) {
  const tdev_driver_t *cu = tdev_cu();
  opset_t set;
  opset_init(&set, comm);
  void *blocking = NULL, *nonblocking = NULL;
  TDEV_CU(cu->cuStreamCreate(&blocking, TDEV_STREAM_DEFAULT));
  TDEV_CU(cu->cuStreamCreate(&nonblocking, TDEV_STREAM_NON_BLOCKING));
  on_user_stream(&set, blocking, "a blocking stream of cuStreamCreate", 100);
  on_user_stream(&set, nonblocking, "a non-blocking stream of cuStreamCreate", 200);
  on_user_stream(&set, NULL, "the legacy default stream (NULL)", 300);
  /* Two wrappers of one CUDA stream are one queue. */
  symcomm_stream_t a, b;
  TEST_OK(symcomm_stream_from_cuda(comm, nonblocking, &a));
  TEST_OK(symcomm_stream_from_cuda(comm, nonblocking, &b));
  for (int round = 0; round < 3; round++)
    opset_round(&set, round % 2 ? a : b, 400 + (uint64_t)round, "two wrappers of one stream");
  TEST_OK(symcomm_stream_destroy(a));
  TEST_OK(symcomm_stream_destroy(b));
  /* One-sided operations on a wrapped stream too. */
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, 1 << 20, &win));
  symcomm_stream_t w;
  TEST_OK(symcomm_stream_from_cuda(comm, blocking, &w));
  tdev_buf_t src = tdev_buf_alloc(40009, 0);
  for (int round = 1; round <= 3; round++)
    onesided_round(win, w, &src, round);
  tdev_buf_free(&src);
  TEST_OK(symcomm_stream_destroy(w));
  TEST_OK(symcomm_window_free(win));
  TDEV_CU(cu->cuStreamDestroy(blocking));
  TDEV_CU(cu->cuStreamDestroy(nonblocking));
  opset_free(&set);
}

static void test_small(void) {
  opset_t set;
  opset_init(&set, comm);
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_create(comm, &s));
  for (int round = 0; round < 3; round++) {
    char what[32];
    snprintf(what, sizeof(what), "round %d", round);
    opset_round(&set, s, 700 + (uint64_t)round, what);
  }
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, 1 << 20, &win));
  tdev_buf_t src = tdev_buf_alloc(40009, 0);
  for (int round = 1; round <= 2; round++)
    onesided_round(win, s, &src, round);
  tdev_buf_free(&src);
  TEST_OK(symcomm_window_free(win));
  TEST_OK(symcomm_stream_destroy(s));
  opset_free(&set);
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "user") != 0 && strcmp(argv[1], "small") != 0)) {
    fprintf(stderr, "usage: test_gpu_stream user|small   (SYMCOMM_BACKEND=cuda, under symcomm-run)\n");
    return 2;
  }
  bool user = strcmp(argv[1], "user") == 0;
  tdev_init_job(&comm, &rank, &size, user);
  if (user)
    test_user();
  else
    test_small();
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_gpu_stream %s: passed on %d %s\n", argv[1], size,
           tdev_cuda() ? "GPUs" : "simulated GPUs");
  return 0;
}
