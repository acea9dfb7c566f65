/* The collectives that reduce: all-reduce (one-shot, two-shot), reduce to a
 * root, and reduce-scatter. Every rank reduces its sources in rank order, so
 * every rank computes the same bits. */
#include "coll/coll_internal.h"

#include "util/log.h"

/* The part of [0, n) that rank r of `ranks` handles: balanced, in order. */
static size_t sc_coll_share_start(size_t n, int r, int ranks) {
  /* n * r / ranks, without the product (which can pass SIZE_MAX) */
  return n / (size_t)ranks * (size_t)r + n % (size_t)ranks * (size_t)r / (size_t)ranks;
}

static void sc_coll_share(size_t n, int r, int ranks, size_t *lo, size_t *hi) {
  *lo = sc_coll_share_start(n, r, ranks);
  *hi = sc_coll_share_start(n, r + 1, ranks);
}

/* One-shot: stage the input; every rank reduces all of the peers' inputs. */
static sc_result_t sc_allreduce_oneshot(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                                        uint64_t tag) {
  const sc_comm_view_t *v = c->view;
  size_t per = c->area / call->elem;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  for (size_t off = 0; off < call->count; off += per) {
    size_t n = call->count - off < per ? call->count - off : per;
    int half = sc_coll_next_half(c);
    SC_CHECK(sc_coll_stage_input(c, s, call, off, n, half, tag));
    for (int r = 0; r < v->nranks; r++)
      srcs[r] = sc_coll_stage(c, r, half);
    SC_CHECK(sc_coll_reduce(c, s, (char *)call->recvbuf + off * call->elem, srcs, v->nranks, n,
                            call->dtype, call->op));
  }
  return SYMCOMM_OK;
}

/* Two-shot: stage the input; each rank reduces its share of every peer's
 * input into its result area; then every rank gathers all the shares. */
static sc_result_t sc_allreduce_twoshot(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                                        uint64_t tag) {
  const sc_comm_view_t *v = c->view;
  int n = v->nranks;
  size_t per = c->area / call->elem;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  void *dst[SC_MAX_LOCAL_RANKS];
  const void *from[SC_MAX_LOCAL_RANKS];
  size_t bytes[SC_MAX_LOCAL_RANKS];
  for (size_t off = 0; off < call->count; off += per) {
    size_t chunk = call->count - off < per ? call->count - off : per;
    char *out = (char *)call->recvbuf + off * call->elem;
    int half = sc_coll_next_half(c);
    SC_CHECK(sc_coll_stage_input(c, s, call, off, chunk, half, tag));
    size_t lo, hi;
    sc_coll_share(chunk, v->rank, n, &lo, &hi);
    for (int r = 0; r < n; r++)
      srcs[r] = sc_coll_stage(c, r, half) + lo * call->elem;
    SC_CHECK(sc_coll_reduce(c, s, sc_coll_result(c, v->rank, half) + lo * call->elem, srcs, n,
                            hi - lo, call->dtype, call->op));
    SC_CHECK(sc_coll_barrier(c, s, 0));
    for (int r = 0; r < n; r++) {
      sc_coll_share(chunk, r, n, &lo, &hi);
      dst[r] = out + lo * call->elem;
      from[r] = sc_coll_result(c, r, half) + lo * call->elem;
      bytes[r] = (hi - lo) * call->elem;
    }
    SC_CHECK(sc_coll_copies(c, s, dst, from, bytes, n));
  }
  return SYMCOMM_OK;
}

/* Two-shot on buffers that are windows: each rank reduces its share straight
 * from every rank's input into its own output, then gathers the other shares
 * from the other ranks' outputs. Nothing is staged; a last barrier keeps every
 * rank from reusing its buffers while another still reads them. The first
 * barrier's tag covers the windows and offsets, which must agree. */
static sc_result_t sc_allreduce_windows(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                                        uint64_t tag, const sc_dev_window_t *in, size_t in_off,
                                        const sc_dev_window_t *out, size_t out_off) {
  const sc_comm_view_t *v = c->view;
  int n = v->nranks;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  void *dst[SC_MAX_LOCAL_RANKS];
  const void *from[SC_MAX_LOCAL_RANKS];
  size_t bytes[SC_MAX_LOCAL_RANKS];
  size_t lo, hi;
  SC_CHECK(sc_coll_barrier(c, s, tag));
  sc_coll_share(call->count, v->rank, n, &lo, &hi);
  for (int r = 0; r < n; r++)
    srcs[r] = (const char *)in->peer[r] + in_off + lo * call->elem;
  SC_CHECK(sc_coll_reduce(c, s, (char *)call->recvbuf + lo * call->elem, srcs, n, hi - lo,
                          call->dtype, call->op));
  SC_CHECK(sc_coll_barrier(c, s, 0));
  for (int r = 0; r < n; r++) {
    sc_coll_share(call->count, r, n, &lo, &hi);
    dst[r] = (char *)call->recvbuf + lo * call->elem;
    from[r] = (const char *)out->peer[r] + out_off + lo * call->elem;
    bytes[r] = r == v->rank ? 0 : (hi - lo) * call->elem;
  }
  SC_CHECK(sc_coll_copies(c, s, dst, from, bytes, n));
  return sc_coll_barrier(c, s, 0);
}

sc_result_t sc_coll_allreduce(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                              uint64_t tag) {
  size_t total = call->count * call->elem;
  sc_coll_algo_t algo = c->forced[SC_COLL_ALLREDUCE];
  if (algo == SC_ALGO_AUTO) {
    /* One-shot reads everything from every peer: worth it while that is
     * little, and less so where some pairs of GPUs lack NVLink. */
    size_t limit = c->oneshot_max;
    if (c->view->topo_class != SYMCOMM_TOPO_FULLY_CONNECTED)
      limit /= 4;
    algo = total <= limit / (size_t)c->view->nranks ? SC_ALGO_ONESHOT : SC_ALGO_TWOSHOT;
  }
  uint32_t in_id, out_id;
  size_t in_off, out_off;
  if (algo == SC_ALGO_TWOSHOT &&
      sc_window_find(c->view, 0, call->sendbuf, total, &in_id, &in_off) &&
      sc_window_find(c->view, 0, call->recvbuf, total, &out_id, &out_off)) {
    sc_coll_log_choice(c, SC_COLL_ALLREDUCE, SC_ALGO_WINDOWS, total);
    uint64_t where[5] = {SC_ALGO_WINDOWS, in_id, in_off, out_id, out_off};
    return sc_allreduce_windows(c, call, s, sc_coll_tag_with(tag, where, 5),
                                &c->view->windows[in_id], in_off, &c->view->windows[out_id],
                                out_off);
  }
  sc_coll_log_choice(c, SC_COLL_ALLREDUCE, algo, total);
  /* Ranks that chose differently (their own SYMCOMM_ALGO or threshold) must
   * not run different steps against each other. */
  uint64_t chosen = (uint64_t)algo;
  tag = sc_coll_tag_with(tag, &chosen, 1);
  return algo == SC_ALGO_ONESHOT ? sc_allreduce_oneshot(c, call, s, tag)
                                 : sc_allreduce_twoshot(c, call, s, tag);
}

/* Reduce: stage; the root reduces everyone's input into its output. */
sc_result_t sc_coll_reduce_root(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                                uint64_t tag) {
  const sc_comm_view_t *v = c->view;
  size_t per = c->area / call->elem;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  sc_coll_log_choice(c, SC_COLL_REDUCE, SC_ALGO_ONESHOT, call->count * call->elem);
  for (size_t off = 0; off < call->count; off += per) {
    size_t n = call->count - off < per ? call->count - off : per;
    int half = sc_coll_next_half(c);
    SC_CHECK(sc_coll_stage_input(c, s, call, off, n, half, tag));
    if (v->rank != call->root)
      continue;
    for (int r = 0; r < v->nranks; r++)
      srcs[r] = sc_coll_stage(c, r, half);
    SC_CHECK(sc_coll_reduce(c, s, (char *)call->recvbuf + off * call->elem, srcs, v->nranks, n,
                            call->dtype, call->op));
  }
  return SYMCOMM_OK;
}

/* Reduce-scatter: stage every block of the input; each rank reduces its own
 * block from every peer into its output. */
sc_result_t sc_coll_reducescatter(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                                  uint64_t tag) {
  const sc_comm_view_t *v = c->view;
  int n = v->nranks;
  size_t per = c->area / call->elem / (size_t)n; /* elements of each block per round */
  const void *srcs[SC_MAX_LOCAL_RANKS];
  sc_coll_log_choice(c, SC_COLL_REDUCESCATTER, SC_ALGO_DIRECT, call->count * call->elem * (size_t)n);
  for (size_t off = 0; off < call->count; off += per) {
    size_t chunk = call->count - off < per ? call->count - off : per;
    int half = sc_coll_next_half(c);
    SC_CHECK(sc_coll_stage_blocks(c, s, call, off, chunk, half, tag));
    for (int r = 0; r < n; r++)
      srcs[r] = sc_coll_stage(c, r, half) + (size_t)v->rank * chunk * call->elem;
    SC_CHECK(sc_coll_reduce(c, s, (char *)call->recvbuf + off * call->elem, srcs, n, chunk,
                            call->dtype, call->op));
  }
  return SYMCOMM_OK;
}
