/* The collectives that only move data: broadcast, all-gather, all-to-all.
 * Each rank stages what others need from it; after the barrier, each copies
 * what it needs straight from the peers' staging areas. */
#include "coll/coll_internal.h"

#include "util/log.h"

sc_result_t sc_coll_broadcast(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                              uint64_t tag) {
  const sc_comm_view_t *v = c->view;
  size_t per = c->area / call->elem;
  bool root = v->rank == call->root;
  sc_coll_log_choice(c, SC_COLL_BROADCAST, SC_ALGO_DIRECT, call->count * call->elem);
  for (size_t off = 0; off < call->count; off += per) {
    size_t n = call->count - off < per ? call->count - off : per;
    size_t at = off * call->elem, bytes = n * call->elem;
    int half = sc_coll_next_half(c);
    if (root) {
      SC_CHECK(sc_coll_copy(c, s, sc_coll_stage(c, v->rank, half), (const char *)call->sendbuf + at,
                            bytes));
      SC_CHECK(sc_coll_copy(c, s, (char *)call->recvbuf + at, (const char *)call->sendbuf + at,
                            bytes));
    }
    SC_CHECK(sc_coll_barrier(c, s, off == 0 ? tag : 0));
    if (!root)
      SC_CHECK(sc_coll_copy(c, s, (char *)call->recvbuf + at, sc_coll_stage(c, call->root, half),
                            bytes));
  }
  return SYMCOMM_OK;
}

sc_result_t sc_coll_allgather(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                              uint64_t tag) {
  size_t per = c->area / call->elem;
  sc_coll_log_choice(c, SC_COLL_ALLGATHER, SC_ALGO_DIRECT,
                     call->count * call->elem * (size_t)c->view->nranks);
  for (size_t off = 0; off < call->count; off += per) {
    size_t chunk = call->count - off < per ? call->count - off : per;
    int half = sc_coll_next_half(c);
    SC_CHECK(sc_coll_stage_input(c, s, call, off, chunk, half, tag));
    SC_CHECK(sc_coll_gather_blocks(c, s, call, off, chunk, half, 0));
  }
  return SYMCOMM_OK;
}

sc_result_t sc_coll_alltoall(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                             uint64_t tag) {
  const sc_comm_view_t *v = c->view;
  size_t per = c->area / call->elem / (size_t)v->nranks; /* elements of each block per round */
  sc_coll_log_choice(c, SC_COLL_ALLTOALL, SC_ALGO_DIRECT, call->count * call->elem * (size_t)v->nranks);
  for (size_t off = 0; off < call->count; off += per) {
    size_t chunk = call->count - off < per ? call->count - off : per;
    int half = sc_coll_next_half(c);
    SC_CHECK(sc_coll_stage_blocks(c, s, call, off, chunk, half, tag));
    /* Rank r staged the block meant for this rank at rank * chunk. */
    SC_CHECK(sc_coll_gather_blocks(c, s, call, off, chunk, half, (size_t)v->rank * chunk));
  }
  return SYMCOMM_OK;
}
