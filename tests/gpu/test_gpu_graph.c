/* On GPUs (SYMCOMM_BACKEND=cuda, under symcomm-run; run by tests/gpu/run.sh):
 *   test_gpu_graph [REPLAYS]   (default 1000)
 * A caller's CUDA stream, wrapped with symcomm_stream_from_cuda, is captured
 * into a CUDA graph (cuStreamBeginCapture, CU_STREAM_CAPTURE_MODE_GLOBAL, so
 * that no thread of the process, symcomm's included, may make a call that
 * capture forbids): two all-reduces (one-shot and two-shot sizes), a reduce,
 * a broadcast, an all-gather, a reduce-scatter, an all-to-all and a grouped
 * send/recv ring (tests/common/test_opset.h). The graph is instantiated and
 * replayed REPLAYS times; before each replay every input is uploaded anew
 * from that replay's seed (rank-, index- and replay-dependent) and every
 * output reset to the sentinel, and after it every element of every output
 * is checked: a replay that reused a frozen counter (a barrier passed
 * without waiting, a stale half of a double buffer, a message matched to the
 * wrong position) shows as wrong data. Eager calls before the capture and
 * after the replays must agree with the graph's. While a capture is open,
 * synchronize and query of the stream are refused (INVALID_USAGE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_device.h"
#include "test_opset.h"
#include "test_util.h"

static symcomm_comm_t comm;
static int rank, size;

int main(int argc, char **argv) {
  int replays = argc > 1 ? atoi(argv[1]) : 1000;
  if (argc > 2 || replays < 1) {
    fprintf(stderr, "usage: test_gpu_graph [REPLAYS]   (SYMCOMM_BACKEND=cuda, under symcomm-run)\n");
    return 2;
  }
  tdev_init_job(&comm, &rank, &size, true);
  const tdev_driver_t *cu = tdev_cu();
  void *cs = NULL;
  TDEV_CU(cu->cuStreamCreate(&cs, TDEV_STREAM_NON_BLOCKING));
  symcomm_stream_t s;
  TEST_OK(symcomm_stream_from_cuda(comm, cs, &s));
  opset_t set;
  opset_init(&set, comm);

  /* Eager first: whatever a first call of a kind sets up happens outside the capture. */
  opset_round(&set, s, 1, "before the capture");

  TDEV_CU(cu->cuStreamBeginCapture(cs, TDEV_CAPTURE_MODE_GLOBAL));
  opset_enqueue(&set, s);
  void *graph = NULL;
  TDEV_CU(cu->cuStreamEndCapture(cs, &graph));
  size_t nodes = 0;
  TDEV_CU(cu->cuGraphGetNodes(graph, NULL, &nodes));
  TEST_ASSERT(nodes >= (size_t)set.n, "the graph holds %zu nodes for %d operations", nodes, set.n);
  void *exec = NULL;
  TDEV_CU(cu->cuGraphInstantiateWithFlags(&exec, graph, 0));
  char ops[512];
  opset_describe(&set, ops, sizeof(ops));
  if (rank == 0)
    printf("captured %d operations (%s) into a graph of %zu nodes\n", set.n, ops, nodes);

  double t0 = test_now(), in_graph = 0;
  for (int r = 1; r <= replays; r++) {
    uint64_t seed = 1000 + (uint64_t)r;
    opset_fill(&set, seed);
    opset_push(&set);
    double t = test_now();
    TDEV_CU(cu->cuGraphLaunch(exec, cs));
    symcomm_result_t res = symcomm_stream_synchronize(s);
    in_graph += test_now() - t;
    TEST_ASSERT(res == SYMCOMM_OK, "replay %d of %d: %s: %s", r, replays,
                symcomm_result_string(res), symcomm_last_error(comm));
    opset_pull(&set);
    char what[64];
    snprintf(what, sizeof(what), "replay %d of %d", r, replays);
    opset_check(&set, seed, what);
  }
  if (rank == 0)
    printf("%d replays, every output checked: %.2f s in all, %.1f us per replay on the GPU side\n",
           replays, test_now() - t0, in_graph / replays * 1e6);

  /* Eager calls go on from where the replays left the device's counters. */
  opset_round(&set, s, 2, "after the replays");
  TDEV_CU(cu->cuGraphExecDestroy(exec));
  TDEV_CU(cu->cuGraphDestroy(graph));
  opset_round(&set, s, 3, "after the graph was destroyed");

  /* Under capture, synchronize and query are refused, and say why. */
  TDEV_CU(cu->cuStreamBeginCapture(cs, TDEV_CAPTURE_MODE_GLOBAL));
  symcomm_result_t q = symcomm_stream_query(s), y = symcomm_stream_synchronize(s);
  void *empty = NULL;
  TDEV_CU(cu->cuStreamEndCapture(cs, &empty));
  TEST_ASSERT(q == SYMCOMM_ERR_INVALID_USAGE && y == SYMCOMM_ERR_INVALID_USAGE,
              "under capture: query %s, synchronize %s", symcomm_result_string(q),
              symcomm_result_string(y));
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "captured"), "the sentence: %s",
              symcomm_last_error(comm));
  if (empty != NULL)
    TDEV_CU(cu->cuGraphDestroy(empty));
  opset_round(&set, s, 4, "after a refused synchronize");

  TEST_OK(symcomm_stream_destroy(s));
  TDEV_CU(cu->cuStreamDestroy(cs));
  opset_free(&set);
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_gpu_graph: passed on %d GPUs (%d replays)\n", size, replays);
  return 0;
}
