/* Seed 003's scenario: a world communicator over several hosts, split into
 * tensor-parallel groups (one per host: color = host, key = local rank) and
 * data-parallel groups (one per local rank: color = local rank, key = host).
 *
 *   build/bin/symcomm-run -n 16 --hosts 2 -- build/examples/tp_dp
 *
 * Then an all-reduce inside each TP group (over the host's GPUs), then one
 * of its result inside each DP group (across the hosts, over the network),
 * both checked element by element. Each rank prints one line: its place in
 * each group, the group's members (world ranks), and the all-reduces'
 * outcome. */
#include <stdio.h>
#include <stdlib.h>

#include "symcomm.h"

#define CHECK(call)                                                                           \
  do {                                                                                        \
    symcomm_result_t r_ = (call);                                                             \
    if (r_ != SYMCOMM_OK) {                                                                   \
      fprintf(stderr, "%s failed: %s: %s\n", #call, symcomm_result_string(r_),                \
              symcomm_last_error(NULL));                                                      \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

/* "rank/size {world ranks of the members}" of a split communicator. */
static void describe(symcomm_comm_t comm, char *text, size_t len) {
  int rank, size;
  CHECK(symcomm_comm_rank(comm, &rank));
  CHECK(symcomm_comm_size(comm, &size));
  int n = snprintf(text, len, "%d/%d {", rank, size);
  for (int r = 0; r < size && n < (int)len - 8; r++) {
    int w;
    CHECK(symcomm_comm_peer_world_rank(comm, r, &w));
    n += snprintf(text + n, len - (size_t)n, r == 0 ? "%d" : " %d", w);
  }
  snprintf(text + n, len - (size_t)n, "}");
}

int main(void) {
  symcomm_comm_t world, tp, dp;
  CHECK(symcomm_init_from_env(&world, NULL));
  int rank, host, local;
  CHECK(symcomm_comm_rank(world, &rank));
  CHECK(symcomm_comm_host_index(world, &host));
  CHECK(symcomm_comm_local_rank(world, &local));

  CHECK(symcomm_comm_split(world, host, local, &tp)); /* TP: the GPUs of one host */
  CHECK(symcomm_comm_split(world, local, host, &dp)); /* DP: one GPU of each host */
  char tp_text[512], dp_text[512];
  describe(tp, tp_text, sizeof(tp_text));
  describe(dp, dp_text, sizeof(dp_text));

  /* TP all-reduce: every element is the sum over the group, exactly. */
  int tp_rank, tp_size;
  CHECK(symcomm_comm_rank(tp, &tp_rank));
  CHECK(symcomm_comm_size(tp, &tp_size));
  enum { COUNT = 1 << 20 };
  float *grad = malloc(sizeof(float) * COUNT);
  if (grad == NULL)
    exit(1);
  for (int i = 0; i < COUNT; i++)
    grad[i] = (float)(tp_rank + i % 7);
  symcomm_stream_t stream, dp_stream;
  CHECK(symcomm_stream_create(tp, &stream));
  CHECK(symcomm_allreduce(grad, grad, COUNT, SYMCOMM_FLOAT32, SYMCOMM_SUM, tp, stream));
  CHECK(symcomm_stream_synchronize(stream));
  int wrong = 0;
  for (int i = 0; i < COUNT; i++)
    wrong += grad[i] != (float)(tp_size * (tp_size - 1) / 2 + tp_size * (i % 7));

  /* DP all-reduce of the TP results: every host's TP group got the same sum,
   * so the DP sum is that times the number of hosts. */
  int dp_size;
  CHECK(symcomm_comm_size(dp, &dp_size));
  CHECK(symcomm_stream_create(dp, &dp_stream));
  CHECK(symcomm_allreduce(grad, grad, COUNT, SYMCOMM_FLOAT32, SYMCOMM_SUM, dp, dp_stream));
  CHECK(symcomm_stream_synchronize(dp_stream));
  int dp_wrong = 0;
  for (int i = 0; i < COUNT; i++)
    dp_wrong += grad[i] != (float)dp_size * (float)(tp_size * (tp_size - 1) / 2 + tp_size * (i % 7));
  printf("[rank %2d] TP %s  DP %s  all-reduce of %d floats in TP: %s, then in DP: %s\n", rank,
         tp_text, dp_text, COUNT, wrong == 0 ? "checked" : "WRONG", dp_wrong == 0 ? "checked" : "WRONG");
  fflush(stdout);
  CHECK(symcomm_stream_destroy(dp_stream));
  CHECK(symcomm_stream_destroy(stream));
  free(grad);
  if (wrong != 0 || dp_wrong != 0)
    return 1;

  CHECK(symcomm_comm_destroy(dp));
  CHECK(symcomm_comm_destroy(tp));
  CHECK(symcomm_comm_destroy(world));
  return 0;
}
