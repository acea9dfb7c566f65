/* Collective state, SYMCOMM_ALGO, the steps algorithms are made of, and the
 * entry that orders collectives across streams. */
#include "coll/coll_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/hash.h"
#include "util/log.h"
#include "util/param.h"

_Static_assert(SC_CALL_COLL + SC_COLL_KIND_COUNT <= SC_CALL_P2P,
               "device error sentences name each collective kind");

static const char *const sc_coll_names[SC_COLL_KIND_COUNT] = {
    "allreduce", "reduce", "broadcast", "allgather", "reducescatter", "alltoall"};

const char *sc_coll_kind_name(sc_coll_kind_t kind) {
  return (unsigned)kind < SC_COLL_KIND_COUNT ? sc_coll_names[kind] : "unknown";
}

static const char *sc_coll_algo_name(sc_coll_algo_t algo) {
  switch (algo) {
  case SC_ALGO_AUTO: return "auto";
  case SC_ALGO_ONESHOT: return "oneshot";
  case SC_ALGO_TWOSHOT: return "twoshot";
  case SC_ALGO_DIRECT: return "direct";
  case SC_ALGO_WINDOWS: return "twoshot in place in windows";
  }
  return "?";
}

/* SYMCOMM_ALGO="allreduce=twoshot,..." */
static sc_result_t sc_coll_parse_algo(sc_coll_t *c) {
  const char *spec = sc_param_string(SC_PARAM_ALGO);
  if (spec == NULL)
    return SYMCOMM_OK;
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", spec);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    int kind = -1;
    sc_coll_algo_t algo = SC_ALGO_AUTO;
    if (eq != NULL) {
      *eq = '\0';
      for (int k = 0; k < SC_COLL_KIND_COUNT; k++)
        if (strcasecmp(tok, sc_coll_names[k]) == 0)
          kind = k;
      for (int a = SC_ALGO_ONESHOT; a <= SC_ALGO_TWOSHOT; a++)
        if (strcasecmp(eq + 1, sc_coll_algo_name((sc_coll_algo_t)a)) == 0)
          algo = (sc_coll_algo_t)a;
    }
    bool known = kind == SC_COLL_ALLREDUCE && (algo == SC_ALGO_ONESHOT || algo == SC_ALGO_TWOSHOT);
    if (!known)
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                      "SYMCOMM_ALGO='%s': '%s%s%s' is not an algorithm symcomm has (allreduce=oneshot "
                      "or allreduce=twoshot)",
                      spec, tok, eq != NULL ? "=" : "", eq != NULL ? eq + 1 : "");
    c->forced[kind] = algo;
  }
  return SYMCOMM_OK;
}

sc_result_t sc_coll_create(sc_comm_view_t *view, sc_coll_t **out) {
  long long scratch = 0, oneshot = 0;
  SC_CHECK(sc_param_int(SC_PARAM_COLL_SCRATCH_BYTES, &scratch, NULL));
  SC_CHECK(sc_param_int(SC_PARAM_ONESHOT_MAX_BYTES, &oneshot, NULL));
  if (scratch < (64 << 10) || scratch > (1ll << 36))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                    "SYMCOMM_COLL_SCRATCH_BYTES=%lld is not between 64 KiB and 64 GiB", scratch);
  if (oneshot < 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL, "SYMCOMM_ONESHOT_MAX_BYTES=%lld", oneshot);
  sc_coll_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_COLL, "no memory for collective state");
  c->view = view;
  c->area = (size_t)scratch / 4 / 64 * 64;
  c->oneshot_max = (size_t)oneshot;
  sc_result_t res = sc_coll_parse_algo(c);
  if (res == SYMCOMM_OK)
    res = sc_window_create(view, 4 * c->area, NULL, 0, &c->scratch);
  if (res != SYMCOMM_OK) {
    free(c);
    return res;
  }
  *out = c;
  return SYMCOMM_OK;
}

void sc_coll_destroy(sc_coll_t *c) {
  if (c == NULL)
    return;
  sc_window_release(c->scratch);
  free(c);
}

char *sc_coll_stage(const sc_coll_t *c, int r, int half) {
  return (char *)c->scratch->peer[r] + (size_t)half * 2 * c->area;
}

char *sc_coll_result(const sc_coll_t *c, int r, int half) {
  return sc_coll_stage(c, r, half) + c->area;
}

int sc_coll_next_half(sc_coll_t *c) { return (int)(c->rounds++ % 2); }

sc_result_t sc_coll_copy(sc_coll_t *c, sc_stream_t *s, void *dst, const void *src, size_t bytes) {
  if (bytes == 0 || dst == src)
    return SYMCOMM_OK;
  return c->view->ops->copy(s, dst, src, bytes);
}

sc_result_t sc_coll_barrier(sc_coll_t *c, sc_stream_t *s, uint64_t tag) {
  const sc_comm_view_t *v = c->view;
  sc_barrier_args_t a;
  memset(&a, 0, sizeof(a));
  /* Tags alternate between two slots: a rank two barriers ahead cannot
   * overwrite a tag a slow rank is still comparing. */
  int tag_slot = SC_COLL_SLOT_TAG + (int)(c->barriers % 2);
  for (int r = 0; r < v->nranks; r++) {
    sc_window_pad_t *pad = c->scratch->pads[r];
    a.slot[r] = &pad->slots[SC_COLL_SLOT_BARRIER];
    a.bell[r] = &pad->bell;
    a.arrived[r] = &pad->slots[SC_COLL_SLOT_ARRIVED];
    a.tag[r] = tag != 0 ? &pad->slots[tag_slot] : NULL;
  }
  a.n = v->nranks;
  a.me = v->rank;
  a.target = ++c->barriers * (uint64_t)v->nranks;
  a.value = tag;
  a.guard = c->guard;
  return v->ops->launch(s, SC_PROGRAM_BARRIER, &a, sizeof(a), SC_LAUNCH_ONE(v->status));
}

sc_result_t sc_coll_reduce(sc_coll_t *c, sc_stream_t *s, void *dst, const void *const *srcs,
                           int nsrcs, size_t count, int dtype, int op) {
  if (count == 0)
    return SYMCOMM_OK;
  sc_reduce_args_t a;
  memset(&a, 0, sizeof(a));
  a.dst = dst;
  for (int i = 0; i < nsrcs; i++)
    a.srcs[i] = srcs[i];
  a.nsrcs = nsrcs;
  a.count = count;
  a.dtype = dtype;
  a.op = op;
  a.avg_divisor = c->view->nranks;
  return c->view->ops->launch(s, SC_PROGRAM_REDUCE, &a, sizeof(a), SC_LAUNCH_ONE(c->view->status));
}

sc_result_t sc_coll_copies(sc_coll_t *c, sc_stream_t *s, void *const *dst, const void *const *src,
                           const size_t *bytes, int n) {
  for (int first = 0; first < n; first += SC_MAX_LOCAL_RANKS) {
    sc_copies_args_t a;
    memset(&a, 0, sizeof(a));
    for (int i = first; i < n && a.n < SC_MAX_LOCAL_RANKS; i++) {
      if (bytes[i] == 0 || dst[i] == src[i])
        continue;
      a.dst[a.n] = dst[i];
      a.src[a.n] = src[i];
      a.bytes[a.n] = bytes[i];
      a.n++;
    }
    if (a.n > 0)
      SC_CHECK(c->view->ops->launch(s, SC_PROGRAM_COPIES, &a, sizeof(a), SC_LAUNCH_ONE(c->view->status)));
  }
  return SYMCOMM_OK;
}

sc_result_t sc_coll_stage_input(sc_coll_t *c, sc_stream_t *s, const sc_coll_call_t *call,
                                size_t off, size_t chunk, int half, uint64_t tag) {
  SC_CHECK(sc_coll_copy(c, s, sc_coll_stage(c, c->view->rank, half),
                        (const char *)call->sendbuf + off * call->elem, chunk * call->elem));
  return sc_coll_barrier(c, s, off == 0 ? tag : 0);
}

sc_result_t sc_coll_stage_blocks(sc_coll_t *c, sc_stream_t *s, const sc_coll_call_t *call,
                                 size_t off, size_t chunk, int half, uint64_t tag) {
  int n = c->view->nranks;
  void *dst[SC_MAX_LOCAL_RANKS];
  const void *from[SC_MAX_LOCAL_RANKS];
  size_t bytes[SC_MAX_LOCAL_RANKS];
  char *stage = sc_coll_stage(c, c->view->rank, half);
  for (int b = 0; b < n; b++) {
    dst[b] = stage + (size_t)b * chunk * call->elem;
    from[b] = (const char *)call->sendbuf + ((size_t)b * call->count + off) * call->elem;
    bytes[b] = chunk * call->elem;
  }
  SC_CHECK(sc_coll_copies(c, s, dst, from, bytes, n));
  return sc_coll_barrier(c, s, off == 0 ? tag : 0);
}

sc_result_t sc_coll_gather_blocks(sc_coll_t *c, sc_stream_t *s, const sc_coll_call_t *call,
                                  size_t off, size_t chunk, int half, size_t at) {
  int n = c->view->nranks;
  void *dst[SC_MAX_LOCAL_RANKS];
  const void *from[SC_MAX_LOCAL_RANKS];
  size_t bytes[SC_MAX_LOCAL_RANKS];
  for (int r = 0; r < n; r++) {
    dst[r] = (char *)call->recvbuf + ((size_t)r * call->count + off) * call->elem;
    from[r] = sc_coll_stage(c, r, half) + at * call->elem;
    bytes[r] = chunk * call->elem;
  }
  return sc_coll_copies(c, s, dst, from, bytes, n);
}

void sc_coll_log_choice(sc_coll_t *c, sc_coll_kind_t kind, sc_coll_algo_t algo, size_t bytes) {
  bool first = !(c->logged[kind] & (1u << algo));
  c->logged[kind] |= 1u << algo;
  if (!sc_log_enabled(first ? SC_LOG_INFO : SC_LOG_TRACE, SC_COLL))
    return;
  sc_log(first ? SC_LOG_INFO : SC_LOG_TRACE, SC_COLL, __FILE__, __LINE__,
         "%s of %zu bytes on %d ranks (%s): %s%s", sc_coll_kind_name(kind), bytes, c->view->nranks,
         symcomm_topo_class_string((symcomm_topo_class_t)c->view->topo_class),
         sc_coll_algo_name(algo), c->forced[kind] != SC_ALGO_AUTO ? " (forced by SYMCOMM_ALGO)" : "");
}

/* What every rank must agree on for a call: its place in the sequence, the
 * operation, the count, the type, the reduction, the root, and how it is cut
 * into rounds; an algorithm that chooses among several mixes its choice in
 * (sc_coll_tag_with). Never 0. */
static uint64_t sc_coll_tag(const sc_coll_t *c, const sc_coll_call_t *call) {
  /* The area size too: it sets how operations are cut into rounds. */
  uint64_t parts[7] = {c->calls, (uint64_t)call->kind, call->count, (uint64_t)call->dtype,
                       (uint64_t)call->op, (uint64_t)(int64_t)call->root, c->area};
  return sc_hash64(parts, sizeof(parts), SC_HASH_SEED) | 1;
}

uint64_t sc_coll_tag_with(uint64_t tag, const uint64_t *extra, int n) {
  return sc_hash64(extra, sizeof(uint64_t) * (size_t)n, tag) | 1;
}

sc_result_t sc_coll_enqueue(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *stream) {
  const sc_comm_view_t *v = c->view;
  sc_window_pad_t *pad = c->scratch->pads[v->rank];
  c->guard = v->guard;
  c->guard.call = SC_CALL_COLL + (int32_t)call->kind;
  c->guard.seq = c->calls;
  /* Collectives of one communicator share its scratch, so they run in call
   * order even on different streams: one on another stream than the last
   * waits for it to finish. */
  if (c->last_stream != NULL && c->last_stream != stream) {
    sc_wait_args_t w = {.slot = &pad->slots[SC_COLL_SLOT_ORDER], .value = c->calls,
                        .cmp = SC_CMP_OP_GE, .bell = &pad->bell,
                        .guard = c->guard};
    SC_CHECK(v->ops->launch(stream, SC_PROGRAM_WAIT, &w, sizeof(w), SC_LAUNCH_ONE(v->status)));
  }
  c->last_stream = stream;
  uint64_t tag = sc_coll_tag(c, call);
  sc_result_t res;
  switch (call->kind) {
  case SC_COLL_ALLREDUCE: res = sc_coll_allreduce(c, call, stream, tag); break;
  case SC_COLL_REDUCE: res = sc_coll_reduce_root(c, call, stream, tag); break;
  case SC_COLL_BROADCAST: res = sc_coll_broadcast(c, call, stream, tag); break;
  case SC_COLL_ALLGATHER: res = sc_coll_allgather(c, call, stream, tag); break;
  case SC_COLL_REDUCESCATTER: res = sc_coll_reducescatter(c, call, stream, tag); break;
  case SC_COLL_ALLTOALL: res = sc_coll_alltoall(c, call, stream, tag); break;
  default: res = SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_COLL, "unknown collective %d", (int)call->kind);
  }
  c->calls++;
  sc_signal_args_t done = {.slot = &pad->slots[SC_COLL_SLOT_ORDER], .value = c->calls,
                           .op = SC_SIGNAL_OP_SET, .bell = &pad->bell};
  sc_result_t r2 = v->ops->launch(stream, SC_PROGRAM_SIGNAL, &done, sizeof(done), SC_LAUNCH_ONE(v->status));
  return res != SYMCOMM_OK ? res : r2;
}
