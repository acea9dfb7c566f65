/* Collective launches repeated exactly as they are, the way a CUDA graph
 * replays a captured call, under symcomm-run (a unit test, linked to the
 * static library: it builds a call's launch with sc_coll_prepare, which the
 * public API does not show). For each case the argument block is built once,
 * then launched 200 times; before each launch every rank writes new inputs in
 * place (a function of the launch's number, the rank and the element), and
 * after it every element of the result is checked. The ranks take turns to
 * come late, so a launch that did not wait in its barriers would read a late
 * rank's previous input: nothing that changes from launch to launch (barrier
 * epochs) may be in the arguments. Eager calls between the launches (through
 * the API) share the device's counters with them.
 *
 * Cases: all-reduce one-shot and two-shot (several rounds with a small
 * SYMCOMM_COLL_SCRATCH_BYTES), in place on a window, all-to-all, broadcast,
 * reduce-scatter; run it with SYMCOMM_COLL_BLOCKS to repeat multi-block launches. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll.h"
#include "core/comm.h"
#include "core/stream.h"
#include "test_data.h"
#include "test_util.h"

#define LAUNCHES 200

static symcomm_comm_t comm;
static symcomm_stream_t stream;
static int rank, nranks;

typedef struct replay {
  sc_coll_kind_t kind;
  symcomm_dtype_t t;
  symcomm_op_t op;
  size_t count;
  int root;
  char *send, *recv; /* recv == send: in place */
  const char *what;
} replay_t;

static uint64_t seed_of(const replay_t *c, int i) { return (uint64_t)c->kind * 1000003u + (uint64_t)i * 7919u + 1; }

static size_t in_elems(const replay_t *c) {
  return c->kind == SC_COLL_ALLTOALL || c->kind == SC_COLL_REDUCESCATTER ? c->count * (size_t)nranks
                                                                         : c->count;
}

static size_t out_elems(const replay_t *c) {
  return c->kind == SC_COLL_ALLTOALL ? c->count * (size_t)nranks : c->count;
}

static bool moves_data(const replay_t *c) {
  return c->kind == SC_COLL_ALLTOALL || c->kind == SC_COLL_BROADCAST;
}

/* This rank's input for launch i, in place. */
static void write_input(const replay_t *c, int i) {
  if (moves_data(c))
    td_fill_elems(c->send, in_elems(c), c->t, seed_of(c, i), rank, 0);
  else
    td_fill_small(c->send, in_elems(c), c->t, c->op, seed_of(c, i), rank, 0);
}

static void check_output(const replay_t *c, int i) {
  char what[160];
  snprintf(what, sizeof(what), "%s, launch %d", c->what, i);
  size_t sz = td_dtype_size(c->t);
  switch (c->kind) {
  case SC_COLL_ALLREDUCE:
    td_check_reduced(c->recv, c->count, c->t, c->op, seed_of(c, i), 0, nranks, what);
    break;
  case SC_COLL_REDUCESCATTER:
    td_check_reduced(c->recv, c->count, c->t, c->op, seed_of(c, i), (uint64_t)rank * c->count,
                     nranks, what);
    break;
  case SC_COLL_BROADCAST:
    td_check_elems(c->recv, c->count, c->t, seed_of(c, i), c->root, 0, what);
    break;
  case SC_COLL_ALLTOALL:
    for (int r = 0; r < nranks; r++)
      td_check_elems(c->recv + (size_t)r * c->count * sz, c->count, c->t, seed_of(c, i), r,
                     (uint64_t)rank * c->count, what);
    break;
  default: TEST_ASSERT(0, "no check for %s", c->what);
  }
}

/* An eager all-gather between launches, checked. */
static void eager_allgather(int i) {
  int64_t mine = (int64_t)td_mix(99, rank, (uint64_t)i), all[64];
  TEST_ASSERT(nranks <= 64);
  TEST_OK(symcomm_allgather(&mine, all, 1, SYMCOMM_INT64, comm, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
  for (int r = 0; r < nranks; r++)
    TEST_ASSERT(all[r] == (int64_t)td_mix(99, r, (uint64_t)i), "eager all-gather %d: rank %d", i, r);
}

static void replay(replay_t *c) {
  sc_coll_call_t call;
  memset(&call, 0, sizeof(call));
  call.kind = c->kind;
  call.sendbuf = c->send;
  call.recvbuf = c->recv;
  call.count = c->count;
  call.dtype = (int)c->t;
  call.op = (int)c->op;
  call.root = c->root;
  call.elem = td_dtype_size(c->t);
  sc_coll_launch_t launch;
  TEST_OK(sc_coll_prepare(comm->coll, &call, &launch));
  sc_launch_t how = {launch.blocks, comm->status, false, 0};
  for (int i = 0; i < LAUNCHES; i++) {
    if (i % nranks == rank)
      usleep(1000 + 500 * (unsigned)(i % 3)); /* late: the others reach the barrier first */
    write_input(c, i);
    if (c->recv != c->send)
      td_reset(c->recv, out_elems(c) * td_dtype_size(c->t));
    TEST_OK(comm->ops->launch(stream->stream, SC_PROGRAM_COLL, &launch.args,
                              sc_coll_args_bytes(&launch.args), &how));
    TEST_OK(symcomm_stream_synchronize(stream));
    check_output(c, i);
    if (i % 25 == 24)
      eager_allgather(i);
  }
  if (rank == 0)
    printf("%s: %d launches of one argument block (%u block%s), all right\n", c->what, LAUNCHES,
           launch.blocks, launch.blocks == 1 ? "" : "s");
}

int main(void) {
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &nranks));
  TEST_OK(symcomm_stream_create(comm, &stream));
  TEST_ASSERT(comm->coll != NULL, "run it on several ranks of one host");
  enum { BIG = 70001 }; /* two-shot, and several rounds with a small scratch */
  size_t cap = (size_t)BIG * 8 * (size_t)nranks;
  char *a = malloc(cap), *b = malloc(cap);
  TEST_ASSERT(a != NULL && b != NULL);
  symcomm_window_t win;
  TEST_OK(symcomm_window_alloc(comm, (size_t)BIG * 8 * (size_t)nranks, &win));
  char *w = symcomm_window_local(win);

  replay_t cases[] = {
      {SC_COLL_ALLREDUCE, SYMCOMM_INT32, SYMCOMM_SUM, 1000, 0, a, b, "all-reduce one-shot"},
      {SC_COLL_ALLREDUCE, SYMCOMM_BFLOAT16, SYMCOMM_MAX, BIG, 0, a, b, "all-reduce two-shot"},
      {SC_COLL_ALLREDUCE, SYMCOMM_FLOAT32, SYMCOMM_SUM, BIG, 0, w, w, "all-reduce in place on a window"},
      {SC_COLL_ALLTOALL, SYMCOMM_UINT8, SYMCOMM_SUM, 3001, 0, a, b, "all-to-all"},
      {SC_COLL_BROADCAST, SYMCOMM_FLOAT64, SYMCOMM_SUM, 5003, 1 % nranks, a, b, "broadcast"},
      {SC_COLL_REDUCESCATTER, SYMCOMM_INT64, SYMCOMM_PROD, 2000, 0, a, b, "reduce-scatter"},
      {SC_COLL_ALLTOALL, SYMCOMM_UINT32, SYMCOMM_SUM, 30001, 0, a, w, "all-to-all into a window"},
      {SC_COLL_REDUCESCATTER, SYMCOMM_INT32, SYMCOMM_SUM, 30001, 0, w, b, "reduce-scatter from a window"},
      {SC_COLL_ALLTOALL, SYMCOMM_UINT32, SYMCOMM_SUM, 30001, 0, w, w, "all-to-all in place in a window"},
  };
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
    replay(&cases[k]);

  TEST_OK(symcomm_window_free(win));
  free(a);
  free(b);
  TEST_OK(symcomm_stream_destroy(stream));
  TEST_OK(symcomm_comm_destroy(comm));
  if (rank == 0)
    printf("test_coll_replay: passed on %d ranks\n", nranks);
  return 0;
}
