/* Seed 003's scenario: a world communicator over several hosts, split into
 * tensor-parallel groups (one per host: color = host, key = local rank) and
 * data-parallel groups (one per local rank: color = local rank, key = host).
 *
 *   build/bin/symcomm-run -n 16 --hosts 2 -- build/examples/tp_dp
 *
 * Then an all-reduce inside each TP group, checked element by element (the DP
 * all-reduce across hosts arrives with the TCP transport). */
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

/* One line per communicator: "<label> rank r/n members w0 w1 ... - Init COMPLETE". */
static void print_comm(int world_rank, const char *label, symcomm_comm_t comm) {
  int rank, size;
  CHECK(symcomm_comm_rank(comm, &rank));
  CHECK(symcomm_comm_size(comm, &size));
  char line[1024];
  int n = snprintf(line, sizeof(line), "[rank %2d] %-5s comm rank %2d of %2d, members", world_rank,
                   label, rank, size);
  for (int r = 0; r < size && n < (int)sizeof(line) - 8; r++) {
    int w;
    CHECK(symcomm_comm_peer_world_rank(comm, r, &w));
    n += snprintf(line + n, sizeof(line) - (size_t)n, " %d", w);
  }
  printf("%s - Init COMPLETE\n", line);
  fflush(stdout);
}

int main(void) {
  symcomm_comm_t world, tp, dp;
  CHECK(symcomm_init_from_env(&world, NULL));
  int rank, host, local;
  CHECK(symcomm_comm_rank(world, &rank));
  CHECK(symcomm_comm_host_index(world, &host));
  CHECK(symcomm_comm_local_rank(world, &local));
  print_comm(rank, "world", world);

  CHECK(symcomm_comm_split(world, host, local, &tp)); /* TP: the GPUs of one host */
  CHECK(symcomm_comm_split(world, local, host, &dp)); /* DP: one GPU of each host */
  print_comm(rank, "TP", tp);
  print_comm(rank, "DP", dp);

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
  symcomm_stream_t stream;
  CHECK(symcomm_stream_create(tp, &stream));
  CHECK(symcomm_allreduce(grad, grad, COUNT, SYMCOMM_FLOAT32, SYMCOMM_SUM, tp, stream));
  CHECK(symcomm_stream_synchronize(stream));
  int wrong = 0;
  for (int i = 0; i < COUNT; i++)
    wrong += grad[i] != (float)(tp_size * (tp_size - 1) / 2 + tp_size * (i % 7));
  printf("[rank %2d] TP    all-reduce of %d floats: %s\n", rank, COUNT,
         wrong == 0 ? "every element checked" : "WRONG");
  fflush(stdout);
  CHECK(symcomm_stream_destroy(stream));
  free(grad);
  if (wrong != 0)
    return 1;

  CHECK(symcomm_comm_destroy(dp));
  CHECK(symcomm_comm_destroy(tp));
  CHECK(symcomm_comm_destroy(world));
  return 0;
}
