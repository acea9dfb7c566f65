/* A call becomes one launch: the algorithm (LL for small calls; all-reduce:
 * one-shot or two-shot; broadcast and reduce: whole or split; all-reduce's
 * two-shot, all-gather, reduce-scatter and all-to-all straight on window
 * buffers where they are windows), the number of blocks, the tag, and the
 * argument block of the COLL program. */
#include "coll/coll_internal.h"

#include <string.h>

/* Blocks for a call moving `bytes` in all: SYMCOMM_COLL_BLOCKS, else the
 * backend's rule up to SYMCOMM_COLL_MAX_BLOCKS. Every rank decides alike
 * (the tag carries it). */
static uint32_t sc_coll_blocks(const sc_coll_t *c, size_t bytes) {
  if (c->blocks > 0)
    return c->blocks;
  uint32_t b = c->view->ops->coll_blocks(bytes);
  return b < 1 ? 1 : b > c->max_blocks ? c->max_blocks : b;
}

#define SC_COLL_PAIR_WINDOWS_MIN ((size_t)8 << 20)

/* LL: SYMCOMM_COLL_BLOCKS, else the backend's rule for `one` bytes pushed
 * to each peer, up to SYMCOMM_COLL_MAX_BLOCKS. */
static uint32_t sc_coll_ll_blocks(const sc_coll_t *c, size_t one) {
  if (c->blocks > 0)
    return c->blocks;
  uint32_t b = c->view->ops->ll_blocks(one, c->view->nranks);
  return b < 1 ? 1 : b > c->max_blocks ? c->max_blocks : b;
}

/* LL while the pushed lines fit (they are twice the data) and are few; then
 * one-shot, which reads everything from every peer: worth it while that is
 * little, and less so where some pairs of GPUs lack NVLink. SYMCOMM_ALGO's
 * allreduce=ll applies where the LL region holds the call. */
static sc_coll_algo_t sc_coll_allreduce_algo(const sc_coll_t *c, size_t total) {
  sc_coll_algo_t algo = c->forced[SC_COLL_ALLREDUCE];
  bool ll_fits = c->ll_max > 0 && total <= c->ll_max;
  if (algo == SC_ALGO_LL && !ll_fits)
    algo = SC_ALGO_AUTO;
  if (algo != SC_ALGO_AUTO)
    return algo;
  if (ll_fits)
    return SC_ALGO_LL;
  size_t limit = c->oneshot_max;
  if (c->view->topo_class != SYMCOMM_TOPO_FULLY_CONNECTED)
    limit /= 4;
  return total <= limit / (size_t)c->view->nranks ? SC_ALGO_ONESHOT : SC_ALGO_TWOSHOT;
}

/* Broadcast and reduce read the root's data (or write the root's result)
 * once per peer through the root's link; split into a part per other rank
 * it crosses that link once, for a second barrier per round (about 15 us on
 * 4 H200s). Split from where it measured no slower there: broadcast from 4
 * MiB, reduce from 8 MiB (1 GiB: 188 and 216 GB/s, against 120 whole). */
#define SC_COLL_SPLIT_BROADCAST_MIN ((size_t)4 << 20)
#define SC_COLL_SPLIT_REDUCE_MIN ((size_t)8 << 20)

/* All-gather, reduce-scatter, all-to-all, broadcast and reduce by LL while the part
 * a rank sends each peer (`one` bytes) fits its LL region, as all-reduce: no
 * barrier. SYMCOMM_ALGO's `ll` for them applies where it fits, its `direct`
 * turns it off. */
static bool sc_coll_ll_takes(const sc_coll_t *c, sc_coll_kind_t kind, size_t one) {
  sc_coll_algo_t algo = c->forced[kind];
  return (algo == SC_ALGO_AUTO || algo == SC_ALGO_LL) && c->ll_max > 0 && one <= c->ll_max;
}

static sc_coll_algo_t sc_coll_rooted_algo(const sc_coll_t *c, sc_coll_kind_t kind, size_t total) {
  bool reduce = kind == SC_COLL_REDUCE;
  sc_coll_algo_t whole = reduce ? SC_ALGO_ONESHOT : SC_ALGO_DIRECT;
  sc_coll_algo_t algo = c->forced[kind];
  if (sc_coll_ll_takes(c, kind, total))
    return SC_ALGO_LL;
  if (algo == SC_ALGO_LL)
    algo = SC_ALGO_AUTO; /* too large for LL: as if not forced */
  if (c->view->nranks < 2) /* nobody to split among */
    return whole;
  if (algo != SC_ALGO_AUTO)
    return algo;
  size_t min = reduce ? SC_COLL_SPLIT_REDUCE_MIN : SC_COLL_SPLIT_BROADCAST_MIN;
  return c->view->nranks >= 3 && total >= min ? SC_ALGO_SPLIT : whole;
}

/* The first window holding [ptr, +bytes) whose ranks promised to use it at
 * the same offsets: peers' buffers are taken at this rank's offset. A
 * SYMCOMM_WINDOW_ANY_OFFSET window (NCCL's default kind) promises nothing
 * and is passed over, also where it overlaps a symmetric one on some ranks
 * only (which would otherwise make ranks choose differently). */
static bool sc_coll_find_window(const sc_comm_view_t *v, const void *ptr, size_t bytes, uint32_t *id,
                                size_t *off) {
  for (uint32_t from = 0; sc_window_find(v, from, ptr, bytes, id, off); from = *id + 1)
    if (sc_window_symmetric(v, *id))
      return true;
  return false;
}

/* A call runs straight on window buffers where those it touches on peers
 * are windows: all-reduce's two-shot reduces from every rank's input and
 * pushes into every rank's output (both), all-gather and all-to-all push
 * into the outputs, reduce-scatter reduces from the inputs. Every rank's
 * buffer as mapped here goes into the arguments, its window and offset into
 * the tag (they must agree). False when they are not windows, or windows
 * whose ranks may use them at different offsets. */
static bool sc_coll_on_windows(const sc_coll_t *c, const sc_coll_call_t *call, sc_coll_args_t *a,
                               uint64_t *where) {
  size_t one = call->count * call->elem, n = (size_t)c->view->nranks, in_off = 0, out_off = 0;
  size_t in_bytes = call->kind == SC_COLL_REDUCESCATTER || call->kind == SC_COLL_ALLTOALL ? one * n : one;
  size_t out_bytes = call->kind == SC_COLL_ALLGATHER || call->kind == SC_COLL_ALLTOALL ? one * n : one;
  bool need_in = call->kind == SC_COLL_ALLREDUCE || call->kind == SC_COLL_REDUCESCATTER;
  bool need_out = call->kind != SC_COLL_REDUCESCATTER;
  uint32_t in_id = 0, out_id = 0;
  const sc_comm_view_t *v = c->view;
  /* Buffers that overlap. All-to-all: a peer would write this rank's block
   * for it (its output) before this rank pushed that block (its input) away.
   * Reduce-scatter: this rank would write its result into a block of its
   * input a peer still reduces from (rank 0 cannot tell sendbuf == recvbuf
   * from NCCL's in-place form, so either stages). All-gather copies its input
   * into its own block first (no peer writes it): fine where the input is
   * that block or outside it. */
  const char *in = call->sendbuf, *out = call->recvbuf;
  const char *own = out + (size_t)v->rank * one;
  bool overlap = in < out + out_bytes && out < in + in_bytes;
  if (overlap && (call->kind == SC_COLL_ALLTOALL || call->kind == SC_COLL_REDUCESCATTER))
    return false;
  if (call->kind == SC_COLL_ALLGATHER && in != own && in < own + one && own < in + one)
    return false;
  if ((need_in && !sc_coll_find_window(v, call->sendbuf, in_bytes, &in_id, &in_off)) ||
      (need_out && !sc_coll_find_window(v, call->recvbuf, out_bytes, &out_id, &out_off)))
    return false;
  for (int r = 0; r < v->nranks; r++) {
    if (need_in)
      a->peer[r].in = (const char *)v->windows[in_id].peer[r] + in_off;
    if (need_out)
      a->peer[r].out = (char *)v->windows[out_id].peer[r] + out_off;
  }
  a->npeers = (uint32_t)v->nranks;
  where[0] = need_in ? in_id : UINT32_MAX;
  where[1] = in_off;
  where[2] = need_out ? out_id : UINT32_MAX;
  where[3] = out_off;
  return true;
}

sc_result_t sc_coll_prepare(sc_coll_t *c, const sc_coll_call_t *call, sc_coll_launch_t *launch) {
  const sc_comm_view_t *v = c->view;
  size_t n = (size_t)v->nranks, one = call->count * call->elem;
  bool blockwise = call->kind == SC_COLL_REDUCESCATTER || call->kind == SC_COLL_ALLTOALL;
  size_t total = blockwise || call->kind == SC_COLL_ALLGATHER ? one * n : one;
  sc_coll_args_t *a = &launch->args;
  memset(a, 0, sizeof(*a));
  a->desc = c->desc;
  a->state = c->state;
  a->sync = sc_coll_sync_of(c, v->rank);
  a->stopped = v->dev_stop;
  a->kind = (int32_t)call->kind;
  a->dtype = call->dtype;
  a->op = call->op;
  a->root = call->root;
  a->elem = (uint32_t)call->elem;
  a->count = call->count;
  a->sendbuf = call->sendbuf;
  a->recvbuf = call->recvbuf;
  uint64_t extra[6] = {0};
  int nextra = 2;
  sc_coll_algo_t algo = SC_ALGO_DIRECT;
  if (call->kind == SC_COLL_ALLREDUCE) {
    algo = sc_coll_allreduce_algo(c, total);
    /* 2 ranks on a backend with pair_oneshot: one-shot (one barrier) beat
     * two-shot on windows (then three barriers, now two: not measured again)
     * below 8 MiB (2 H200s). */
    bool pair = algo == SC_ALGO_TWOSHOT && v->nranks == 2 && v->ops->pair_oneshot &&
                c->forced[SC_COLL_ALLREDUCE] == SC_ALGO_AUTO;
    if (algo == SC_ALGO_TWOSHOT && !(pair && total < SC_COLL_PAIR_WINDOWS_MIN) &&
        sc_coll_on_windows(c, call, a, &extra[2])) {
      algo = SC_ALGO_WINDOWS;
      nextra = 6;
    } else if (pair) {
      algo = SC_ALGO_ONESHOT;
    }
  } else if (call->kind == SC_COLL_REDUCE || call->kind == SC_COLL_BROADCAST) {
    algo = sc_coll_rooted_algo(c, call->kind, total);
  } else if (sc_coll_ll_takes(c, call->kind, one)) { /* all-gather, reduce-scatter, all-to-all */
    algo = SC_ALGO_LL;
  } else if (c->forced[call->kind] != SC_ALGO_DIRECT && sc_coll_on_windows(c, call, a, &extra[2])) {
    algo = SC_ALGO_WINDOWS;
    nextra = 6;
  }
  a->algo = (int32_t)algo;
  a->per = sc_coll_per_max(c->area, v->nranks, sc_coll_path(a->algo, a->kind), a->elem);
  /* LL: by the bytes each rank pushes (all-gather: its part). */
  launch->blocks = algo == SC_ALGO_LL ? sc_coll_ll_blocks(c, one) : sc_coll_blocks(c, total);
  sc_coll_log_choice(c, call->kind, algo, total, launch->blocks);
  /* Ranks that chose differently (their own SYMCOMM_ALGO, threshold or
   * blocks, or buffers that are windows on some ranks only) must not run
   * different steps against each other. */
  extra[0] = (uint64_t)algo;
  extra[1] = launch->blocks;
  a->tag = sc_coll_tag_with(sc_coll_tag(c, call), extra, nextra);
  c->calls++;
  return SYMCOMM_OK;
}

sc_result_t sc_coll_enqueue(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *stream) {
  sc_coll_launch_t launch;
  SC_CHECK(sc_coll_prepare(c, call, &launch));
  sc_launch_t how = {launch.blocks, c->view->status, c->early_start, 0};
  return c->view->ops->launch(stream, SC_PROGRAM_COLL, &launch.args,
                              sc_coll_args_bytes(&launch.args), &how);
}
