/* A communicator's collective state: the scratch window with its sync block,
 * the device descriptor and counters, SYMCOMM_ALGO and SYMCOMM_COLL_BLOCKS,
 * the INFO lines and the tags. */
#include "coll/coll_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bootstrap/bootstrap.h"
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
  case SC_ALGO_WINDOWS: return "on the windows, nothing staged";
  case SC_ALGO_LL: return "ll";
  case SC_ALGO_SPLIT: return "split";
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
      for (int a = SC_ALGO_ONESHOT; a <= SC_ALGO_SPLIT; a++)
        if (strcasecmp(eq + 1, sc_coll_algo_name((sc_coll_algo_t)a)) == 0)
          algo = (sc_coll_algo_t)a;
    }
    bool known = (kind == SC_COLL_ALLREDUCE &&
                  (algo == SC_ALGO_ONESHOT || algo == SC_ALGO_TWOSHOT || algo == SC_ALGO_LL)) ||
                 (kind == SC_COLL_BROADCAST &&
                  (algo == SC_ALGO_DIRECT || algo == SC_ALGO_SPLIT || algo == SC_ALGO_LL)) ||
                 ((kind == SC_COLL_ALLGATHER || kind == SC_COLL_REDUCESCATTER ||
                   kind == SC_COLL_ALLTOALL) &&
                  (algo == SC_ALGO_DIRECT || algo == SC_ALGO_LL)) ||
                 (kind == SC_COLL_REDUCE &&
                  (algo == SC_ALGO_ONESHOT || algo == SC_ALGO_SPLIT || algo == SC_ALGO_LL));
    if (!known)
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                      "SYMCOMM_ALGO='%s': '%s%s%s' is not an algorithm symcomm has (allreduce=oneshot, "
                      "allreduce=twoshot, allreduce=ll, allgather, reducescatter or alltoall=direct "
                      "or =ll, broadcast=direct, broadcast=split, broadcast=ll, reduce=oneshot, "
                      "reduce=split or reduce=ll)",
                      spec, tok, eq != NULL ? "=" : "", eq != NULL ? eq + 1 : "");
    c->forced[kind] = algo;
  }
  return SYMCOMM_OK;
}

sc_coll_sync_t *sc_coll_sync_of(const sc_coll_t *c, int r) {
  return (sc_coll_sync_t *)(void *)((char *)c->scratch->peer[r] + 4 * c->area);
}

/* The descriptor every launch points to: where each rank's scratch and sync
 * block are mapped here, and what bounds the waits. */
static void sc_coll_describe(const sc_coll_t *c, sc_coll_desc_t *d) {
  const sc_comm_view_t *v = c->view;
  memset(d, 0, sizeof(*d));
  d->nranks = v->nranks;
  d->me = v->rank;
  d->area = c->area;
  for (int r = 0; r < v->nranks; r++) {
    d->scratch[r] = c->scratch->peer[r];
    d->sync[r] = sc_coll_sync_of(c, r);
  }
  d->state = c->state;
  d->failed = c->failed;
  d->guard = v->guard;
  if (c->ll_max > 0) {
    d->ll_lines = SC_COLL_MAX_BLOCKS + c->ll_max / SC_LL_LINE_DATA;
    for (int r = 0; r < v->nranks; r++)
      d->ll[r] = (uint64_t *)(void *)((char *)c->scratch->peer[r] + c->ll_offset);
  }
}

/* Bytes of a rank's LL region: two halves of a part per source rank. */
static size_t sc_coll_ll_bytes(const sc_coll_t *c) {
  if (c->ll_max == 0)
    return 0;
  return 2 * (size_t)c->view->nranks * (SC_COLL_MAX_BLOCKS + c->ll_max / SC_LL_LINE_DATA) *
         SC_LL_LINE_BYTES;
}

/* The device side: counters, the failure word, the event, then this rank's
 * sync block zeroed and the descriptor uploaded. */
static sc_result_t sc_coll_attach(sc_coll_t *c) {
  const sc_comm_view_t *v = c->view;
  const sc_backend_ops_t *ops = v->ops;
  void *p = NULL;
  SC_CHECK(ops->dev_alloc(v->device, sizeof(sc_coll_state_t), &p));
  c->state = p;
  SC_CHECK(ops->host_alloc(v->device, sizeof(uint64_t), &p));
  c->failed = p;
  *c->failed = 0;
  SC_CHECK(ops->dev_alloc(v->device, sizeof(sc_coll_desc_t), &p));
  c->desc = p;
  SC_CHECK(ops->event_create(v->device, &c->order));
  sc_coll_desc_t *d = calloc(1, sizeof(*d) > sizeof(sc_coll_sync_t) ? sizeof(*d) : sizeof(sc_coll_sync_t));
  if (d == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_COLL, "no memory for a collective descriptor");
  /* Zeros first: epochs start at 0 (device memory need not come zeroed). */
  sc_result_t res = ops->upload(v->device, (char *)c->scratch->peer[v->rank] + 4 * c->area, d,
                                sizeof(sc_coll_sync_t));
  /* And no LL line may carry a flag before it is written. */
  size_t ll = sc_coll_ll_bytes(c), piece = ll < (1u << 20) ? ll : (1u << 20);
  void *zeros = piece > 0 ? calloc(1, piece) : NULL;
  if (res == SYMCOMM_OK && piece > 0 && zeros == NULL)
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_COLL, "no memory to clear the LL region");
  for (size_t at = 0; res == SYMCOMM_OK && at < ll; at += piece) {
    size_t part = ll - at < piece ? ll - at : piece;
    res = ops->upload(v->device, (char *)c->scratch->peer[v->rank] + c->ll_offset + at, zeros, part);
  }
  free(zeros);
  if (res == SYMCOMM_OK) {
    sc_coll_describe(c, d);
    res = ops->upload(v->device, c->desc, d, sizeof(*d));
  }
  free(d);
  return res;
}

/* How a setting's value came about, for the sentence below. */
static const char *sc_coll_how(long long set) { return set ? "" : " (the backend's default)"; }

/* The settings that lay out every rank's scratch window (and so where each
 * rank writes into the others'), the same on every rank of the job; `set`:
 * bit 0 the scratch, bit 1 the LL limit given by the environment rather
 * than the backend's defaults (which may differ with the rank count). */
static sc_result_t sc_coll_agree(sc_comm_view_t *view, long long scratch, long long ll,
                                 long long set) {
  sc_bootstrap_t *boot = view->boot;
  int n = boot->client.nranks, me = boot->client.rank;
  long long mine[3] = {scratch, ll, set}, (*all)[3] = malloc(sizeof(*all) * (size_t)n);
  if (all == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_COLL, "no memory for the collective settings");
  sc_result_t res = sc_bootstrap_allgather(boot, "coll:settings", mine, sizeof(mine), all);
  for (int r = 0; res == SYMCOMM_OK && r < n; r++)
    if (all[r][0] != scratch || all[r][1] != ll)
      res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_COLL,
                     "ranks set the collectives' scratch apart: rank %d has "
                     "SYMCOMM_COLL_SCRATCH_BYTES=%lld%s SYMCOMM_LL_MAX_BYTES=%lld%s, rank %d has "
                     "%lld%s and %lld%s (set them alike on every rank)",
                     me, scratch, sc_coll_how(set & 1), ll, sc_coll_how(set & 2), r, all[r][0],
                     sc_coll_how(all[r][2] & 1), all[r][1], sc_coll_how(all[r][2] & 2));
  free(all);
  return res;
}

sc_result_t sc_coll_scratch_param(const sc_comm_view_t *view, long long *bytes, bool *is_set) {
  return sc_param_int_or(SC_PARAM_COLL_SCRATCH_BYTES, (long long)view->ops->scratch_bytes, bytes,
                         is_set);
}

sc_result_t sc_coll_create(sc_comm_view_t *view, sc_coll_t **out) {
  long long scratch = 0, oneshot = 0, blocks = 0, max_blocks = 0, ll = 0, early = 1;
  bool scratch_set = false, ll_set = false;
  SC_CHECK(sc_coll_scratch_param(view, &scratch, &scratch_set));
  SC_CHECK(sc_param_int_or(SC_PARAM_ONESHOT_MAX_BYTES, (long long)view->ops->oneshot_max_bytes,
                           &oneshot, NULL));
  SC_CHECK(sc_param_int_or(SC_PARAM_LL_MAX_BYTES, (long long)view->ops->ll_max_bytes(view->nranks),
                           &ll, &ll_set));
  if (ll < 0 || ll > (1 << 20))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                    "SYMCOMM_LL_MAX_BYTES=%lld is not between 0 (off) and 1 MiB", ll);
  SC_CHECK(sc_param_int(SC_PARAM_COLL_BLOCKS, &blocks, NULL));
  SC_CHECK(sc_param_int(SC_PARAM_COLL_MAX_BLOCKS, &max_blocks, NULL));
  SC_CHECK(sc_param_int(SC_PARAM_COLL_EARLY_START, &early, NULL));
  if (early != 0 && early != 1)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                    "SYMCOMM_COLL_EARLY_START=%lld: use 1 (on) or 0 (off)", early);
  if (scratch < (64 << 10) || scratch > (1ll << 36))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                    "SYMCOMM_COLL_SCRATCH_BYTES=%lld is not between 64 KiB and 64 GiB", scratch);
  if (oneshot < 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL, "SYMCOMM_ONESHOT_MAX_BYTES=%lld", oneshot);
  if (blocks < 0 || blocks > SC_COLL_MAX_BLOCKS)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                    "SYMCOMM_COLL_BLOCKS=%lld: use 0 (chosen by size) or 1 to %d", blocks,
                    SC_COLL_MAX_BLOCKS);
  if (max_blocks < 0 || max_blocks > SC_COLL_MAX_BLOCKS)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                    "SYMCOMM_COLL_MAX_BLOCKS=%lld: use 0 (up to %d) or 1 to %d", max_blocks,
                    SC_COLL_MAX_BLOCKS, SC_COLL_MAX_BLOCKS);
  SC_CHECK(sc_coll_agree(view, scratch, ll, (scratch_set ? 1 : 0) | (ll_set ? 2 : 0)));
  sc_coll_t *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_COLL, "no memory for collective state");
  c->view = view;
  c->area = (size_t)scratch / 4 / 64 * 64;
  c->oneshot_max = (size_t)oneshot;
  c->blocks = (uint32_t)blocks;
  /* The communicator's own cap (config.max_blocks) before the process's. */
  if (view->max_blocks > 0)
    max_blocks = view->max_blocks;
  c->max_blocks = max_blocks > 0 ? (uint32_t)max_blocks : SC_COLL_MAX_BLOCKS;
  c->early_start = early == 1;
  c->ll_max = view->nranks <= SC_LL_MAX_RANKS ? (size_t)ll / SC_LL_LINE_DATA * SC_LL_LINE_DATA : 0;
  c->ll_offset = (4 * c->area + sizeof(sc_coll_sync_t) + 63) / 64 * 64;
  sc_result_t res = sc_coll_parse_algo(c);
  if (res == SYMCOMM_OK)
    res = sc_window_create(view, c->ll_offset + sc_coll_ll_bytes(c), NULL, 0, false, &c->scratch);
  if (res == SYMCOMM_OK)
    res = sc_coll_attach(c);
  /* Every rank's sync block is zero before any rank's first collective. */
  if (c->scratch != NULL) {
    sc_result_t met = sc_bootstrap_barrier(view->boot, "coll:ready");
    if (res == SYMCOMM_OK)
      res = met;
  }
  if (res != SYMCOMM_OK) {
    sc_coll_destroy(c);
    return res;
  }
  *out = c;
  return SYMCOMM_OK;
}

void sc_coll_destroy(sc_coll_t *c) {
  if (c == NULL)
    return;
  const sc_backend_ops_t *ops = c->view->ops;
  if (c->order != NULL)
    ops->event_destroy(c->order);
  if (c->desc != NULL)
    ops->dev_free(c->view->device, c->desc);
  if (c->failed != NULL)
    ops->host_free(c->view->device, c->failed);
  if (c->state != NULL)
    ops->dev_free(c->view->device, c->state);
  sc_window_release(c->scratch);
  free(c);
}

sc_event_t *sc_coll_order_event(sc_coll_t *c) { return c->order; }

bool sc_coll_failed(const sc_coll_t *c, uint64_t *which) {
  uint64_t failed = c != NULL ? __atomic_load_n(c->failed, __ATOMIC_ACQUIRE) : 0;
  if (failed == 0)
    return false;
  *which = failed - 1;
  return true;
}

void sc_coll_log_choice(sc_coll_t *c, sc_coll_kind_t kind, sc_coll_algo_t algo, size_t bytes,
                        uint32_t blocks) {
  /* logged_blocks has a column per algorithm up to SC_ALGO_SPLIT, the last. */
  if ((unsigned)kind >= SC_COLL_KIND_COUNT || (unsigned)algo > SC_ALGO_SPLIT)
    return;
  uint32_t *last = &c->logged_blocks[kind][algo];
  bool changed = *last != blocks;
  *last = blocks;
  if (!sc_log_enabled(changed ? SC_LOG_INFO : SC_LOG_TRACE, SC_COLL))
    return;
  sc_log(changed ? SC_LOG_INFO : SC_LOG_TRACE, SC_COLL, __FILE__, __LINE__,
         "%s of %zu bytes on %d ranks (%s): %s, %u block%s%s", sc_coll_kind_name(kind), bytes,
         c->view->nranks, symcomm_topo_class_string((symcomm_topo_class_t)c->view->topo_class),
         sc_coll_algo_name(algo), blocks, blocks == 1 ? "" : "s",
         c->forced[kind] != SC_ALGO_AUTO ? " (forced by SYMCOMM_ALGO)" : "");
}

uint64_t sc_coll_tag(const sc_coll_t *c, const sc_coll_call_t *call) {
  /* The area size too: it sets how operations are cut into rounds. */
  uint64_t parts[7] = {c->calls, (uint64_t)call->kind, call->count, (uint64_t)call->dtype,
                       (uint64_t)call->op, (uint64_t)(int64_t)call->root, c->area};
  return sc_hash64(parts, sizeof(parts), SC_HASH_SEED) | 1;
}

uint64_t sc_coll_tag_with(uint64_t tag, const uint64_t *extra, int n) {
  return sc_hash64(extra, sizeof(uint64_t) * (size_t)n, tag) | 1;
}
