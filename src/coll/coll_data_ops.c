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
  const sc_comm_view_t *v = c->view;
  int n = v->nranks;
  size_t per = c->area / call->elem;
  void *dst[SC_BARRIER_MAX_RANKS];
  const void *from[SC_BARRIER_MAX_RANKS];
  size_t bytes[SC_BARRIER_MAX_RANKS];
  sc_coll_log_choice(c, SC_COLL_ALLGATHER, SC_ALGO_DIRECT, call->count * call->elem * (size_t)n);
  for (size_t off = 0; off < call->count; off += per) {
    size_t chunk = call->count - off < per ? call->count - off : per;
    int half = sc_coll_next_half(c);
    SC_CHECK(sc_coll_copy(c, s, sc_coll_stage(c, v->rank, half),
                          (const char *)call->sendbuf + off * call->elem, chunk * call->elem));
    SC_CHECK(sc_coll_barrier(c, s, off == 0 ? tag : 0));
    for (int r = 0; r < n; r++) {
      dst[r] = (char *)call->recvbuf + ((size_t)r * call->count + off) * call->elem;
      from[r] = sc_coll_stage(c, r, half);
      bytes[r] = chunk * call->elem;
    }
    SC_CHECK(sc_coll_copies(c, s, dst, from, bytes, n));
  }
  return SYMCOMM_OK;
}

sc_result_t sc_coll_alltoall(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                             uint64_t tag) {
  const sc_comm_view_t *v = c->view;
  int n = v->nranks;
  size_t per = c->area / call->elem / (size_t)n; /* elements of each block per round */
  void *dst[SC_BARRIER_MAX_RANKS];
  const void *from[SC_BARRIER_MAX_RANKS];
  size_t bytes[SC_BARRIER_MAX_RANKS];
  sc_coll_log_choice(c, SC_COLL_ALLTOALL, SC_ALGO_DIRECT, call->count * call->elem * (size_t)n);
  for (size_t off = 0; off < call->count; off += per) {
    size_t chunk = call->count - off < per ? call->count - off : per;
    int half = sc_coll_next_half(c);
    char *stage = sc_coll_stage(c, v->rank, half);
    for (int b = 0; b < n; b++) {
      dst[b] = stage + (size_t)b * chunk * call->elem;
      from[b] = (const char *)call->sendbuf + ((size_t)b * call->count + off) * call->elem;
      bytes[b] = chunk * call->elem;
    }
    SC_CHECK(sc_coll_copies(c, s, dst, from, bytes, n));
    SC_CHECK(sc_coll_barrier(c, s, off == 0 ? tag : 0));
    for (int r = 0; r < n; r++) {
      dst[r] = (char *)call->recvbuf + ((size_t)r * call->count + off) * call->elem;
      from[r] = sc_coll_stage(c, r, half) + (size_t)v->rank * chunk * call->elem;
      bytes[r] = chunk * call->elem;
    }
    SC_CHECK(sc_coll_copies(c, s, dst, from, bytes, n));
  }
  return SYMCOMM_OK;
}
