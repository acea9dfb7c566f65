#include "transport/p2p.h"

#include <stdlib.h>
#include <string.h>

#include "bootstrap/bootstrap.h"
#include "util/log.h"
#include "util/param.h"

_Static_assert(sizeof(sc_p2p_args_t) <= SC_LAUNCH_ARGS_MAX,
               "a full P2P batch must fit a launch's arguments");
_Static_assert(SC_MAX_LOCAL_RANKS <= 64 && 2 * SC_MAX_LOCAL_RANKS <= 255,
               "ops name peers and groups (up to 2 per peer) in a byte");

struct sc_p2p {
  sc_comm_view_t *view;
  sc_window_t *win;    /* buffer: the pad, then an eager slot and a ring per local peer */
  sc_p2p_desc_t *desc; /* device memory */
  uint32_t lanes;      /* blocks per group in a launch of messages of several parts */
  uint64_t lane_bytes; /* a part of a message */
  bool split;          /* a group per peer and direction (blocks run at once) */
  bool early_start;    /* SYMCOMM_P2P_EARLY_START */
  /* For sc_p2p_order_event: one per local peer and direction ([kind][peer]),
   * so that each event is recorded along one queue's chain of streams only,
   * where every record ends after the one before it. One event shared by
   * all queues would be recorded on unrelated streams, whose records may end
   * in another order than they were made: where a wait is satisfied by a
   * newer record's end (the simulated backend's events), a stream would stop
   * waiting for the one it follows (tests/mp/test_p2p_lanes.c order). */
  sc_event_t *order[2][SC_MAX_LOCAL_RANKS];
};

/* The ring's layout and how messages split into lanes: the same on every
 * rank (each writes into the others' rings where they expect it). */
typedef struct sc_p2p_settings {
  long long chunk_bytes, slots, lanes, lane_bytes, eager_bytes;
} sc_p2p_settings_t;

static sc_result_t sc_p2p_params(const sc_comm_view_t *view, sc_p2p_settings_t *s) {
  const sc_backend_ops_t *ops = view->ops;
  bool slots_set, lanes_set;
  SC_CHECK(sc_param_int_or(SC_PARAM_P2P_CHUNK_BYTES, (long long)ops->p2p_chunk_bytes,
                           &s->chunk_bytes, NULL));
  SC_CHECK(sc_param_int_or(SC_PARAM_P2P_SLOTS, ops->p2p_slots, &s->slots, &slots_set));
  SC_CHECK(sc_param_int_or(SC_PARAM_P2P_LANES, ops->p2p_lanes, &s->lanes, &lanes_set));
  SC_CHECK(sc_param_int_or(SC_PARAM_P2P_LANE_BYTES, (long long)ops->p2p_lane_bytes,
                           &s->lane_bytes, NULL));
  bool eager_set;
  SC_CHECK(sc_param_int_or(SC_PARAM_P2P_EAGER_BYTES, (long long)ops->p2p_eager_bytes,
                           &s->eager_bytes, &eager_set));
  /* A launch has a group of lanes per peer (and direction, where blocks run
   * at once): by default no more than 128 blocks in all, which a GPU of 128
   * SMs or more (H100 SXM, H200: 132) keeps resident together. A lane waits
   * for its lead and its peer's lane only, never for a later block, so on a
   * GPU with fewer SMs the blocks that do not fit start as others end. */
  long long groups = (view->max_local_size > 1 ? view->max_local_size - 1 : 1) *
                     (ops->blocks_at_once ? 2 : 1);
  if (!lanes_set && s->lanes * groups > 128)
    s->lanes = 128 / groups > 1 ? 128 / groups : 1;
  /* A default gives way to the setting it must fit: every lane needs two
   * slots to keep a chunk in flight while the other is copied out (up to the
   * most a ring has: too many lanes are then refused as such, not as slots
   * the caller did not set). */
  if (!slots_set && s->slots < 2 * s->lanes)
    s->slots = 2 * s->lanes < 64 ? 2 * s->lanes : 64;
  if (!lanes_set && s->lanes > s->slots)
    s->lanes = s->slots;
  if (s->chunk_bytes < 4096 || s->chunk_bytes > (1ll << 30) || s->chunk_bytes % 64 != 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P,
                    "SYMCOMM_P2P_CHUNK_BYTES=%lld: use a multiple of 64 from 4096 to 1 GiB",
                    s->chunk_bytes);
  if (s->slots < 1 || s->slots > 64)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P, "SYMCOMM_P2P_SLOTS=%lld is not 1..64",
                    s->slots);
  if (s->lanes < 1 || s->lanes > SC_P2P_MAX_LANES || s->lanes > s->slots)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P,
                    "SYMCOMM_P2P_LANES=%lld is not 1..%d or exceeds SYMCOMM_P2P_SLOTS=%lld (each "
                    "lane needs a slot of the ring)",
                    s->lanes, SC_P2P_MAX_LANES, s->slots);
  if (s->lane_bytes < 4096 || s->lane_bytes > (1ll << 40))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P,
                    "SYMCOMM_P2P_LANE_BYTES=%lld is not 4096 to 1 TiB", s->lane_bytes);
  /* An eager message is one part (device/p2p_eager.h): a default gives way
   * to smaller parts. */
  if (!eager_set && s->eager_bytes > s->lane_bytes)
    s->eager_bytes = s->lane_bytes;
  if (s->eager_bytes < 0 || s->eager_bytes > s->lane_bytes || s->eager_bytes > (1ll << 20))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P,
                    "SYMCOMM_P2P_EAGER_BYTES=%lld is not 0 to 1 MiB and at most "
                    "SYMCOMM_P2P_LANE_BYTES=%lld (an eager message is one part)",
                    s->eager_bytes, s->lane_bytes);
  return SYMCOMM_OK;
}

static sc_result_t sc_p2p_agree(sc_comm_view_t *view, const sc_p2p_settings_t *mine) {
  sc_bootstrap_t *boot = view->boot;
  int n = boot->client.nranks, me = boot->client.rank;
  sc_p2p_settings_t *all = malloc(sizeof(*all) * (size_t)n);
  if (all == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_P2P, "no memory for the send/recv settings");
  sc_result_t res = sc_bootstrap_allgather(boot, "p2p:settings", mine, sizeof(*mine), all);
  for (int r = 0; res == SYMCOMM_OK && r < n; r++)
    if (memcmp(&all[r], mine, sizeof(*mine)) != 0)
      res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_P2P,
                     "ranks set send/recv apart: rank %d has SYMCOMM_P2P_CHUNK_BYTES=%lld "
                     "SYMCOMM_P2P_SLOTS=%lld SYMCOMM_P2P_LANES=%lld SYMCOMM_P2P_LANE_BYTES=%lld "
                     "SYMCOMM_P2P_EAGER_BYTES=%lld, rank %d has %lld, %lld, %lld, %lld and %lld "
                     "(set them alike on every rank)",
                     me, mine->chunk_bytes, mine->slots, mine->lanes, mine->lane_bytes,
                     mine->eager_bytes, r, all[r].chunk_bytes, all[r].slots, all[r].lanes,
                     all[r].lane_bytes, all[r].eager_bytes);
  free(all);
  return res;
}

/* Where things are in a p2p window: the pad, one eager slot per peer (the
 * header line and the lines of the largest eager message), one ring per peer. */
typedef struct sc_p2p_window_layout {
  size_t eager_offset, eager_stride, ring_offset, bytes;
} sc_p2p_window_layout_t;

static void sc_p2p_window_layout(const sc_p2p_settings_t *set, size_t peers,
                                 sc_p2p_window_layout_t *at) {
  at->eager_offset = (sizeof(sc_p2p_pad_t) + 255) / 256 * 256;
  at->eager_stride =
      set->eager_bytes > 0
          ? ((size_t)sc_p2p_eager_lines((uint64_t)set->eager_bytes) * SC_LL_LINE_BYTES + 255) /
                256 * 256
          : 0;
  at->ring_offset = (at->eager_offset + peers * at->eager_stride + 4095) / 4096 * 4096;
  at->bytes = at->ring_offset + peers * (size_t)set->chunk_bytes * (size_t)set->slots;
}

/* What the program works from: the windows of this host's ranks as mapped
 * here, and zeroed counters. */
static sc_result_t sc_p2p_make_desc(sc_p2p_t *p, const sc_p2p_settings_t *set,
                                    const sc_p2p_window_layout_t *at) {
  const sc_comm_view_t *view = p->view;
  sc_p2p_desc_t *host = calloc(1, sizeof(*host));
  if (host == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_P2P, "no memory for the send/recv descriptor");
  host->guard = view->guard;
  host->guard.call = SC_CALL_P2P;
  host->windows = view->dev_windows;
  for (int l = 0; l < view->local_size; l++) {
    int r = view->local_rank_to_rank[l];
    host->pads[l] = (sc_p2p_pad_t *)p->win->peer[r];
    host->ranks[l] = r;
  }
  host->chunk_bytes = (uint64_t)set->chunk_bytes;
  host->ring_offset = at->ring_offset;
  host->eager_offset = at->eager_offset;
  host->eager_stride = at->eager_stride;
  host->eager_bytes = (uint64_t)set->eager_bytes;
  host->slots = (uint32_t)set->slots;
  host->lanes = (uint32_t)set->lanes;
  host->lane_bytes = (uint64_t)set->lane_bytes;
  host->rank = view->rank;
  host->local_rank = view->local_rank;
  void *dev = NULL;
  sc_result_t res = view->ops->dev_alloc(view->device, sizeof(*host), &dev);
  if (res == SYMCOMM_OK) {
    p->desc = dev;
    res = view->ops->upload(view->device, dev, host, sizeof(*host));
  }
  free(host);
  return res;
}

sc_result_t sc_p2p_create(sc_comm_view_t *view, sc_p2p_t **out) {
  sc_p2p_t *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_P2P, "no memory for send/recv state");
  sc_result_t res;
  sc_p2p_settings_t set;
  memset(&set, 0, sizeof(set));
  SC_CHECK_GOTO(sc_p2p_params(view, &set), res, fail);
  SC_CHECK_GOTO(sc_p2p_agree(view, &set), res, fail);
  long long early = 1;
  SC_CHECK_GOTO(sc_param_int(SC_PARAM_P2P_EARLY_START, &early, NULL), res, fail);
  if (early != 0 && early != 1) {
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P,
                   "SYMCOMM_P2P_EARLY_START=%lld: use 1 (on) or 0 (off)", early);
    goto fail;
  }
  p->early_start = early == 1;
  p->view = view;
  p->lanes = (uint32_t)set.lanes;
  p->lane_bytes = (uint64_t)set.lane_bytes;
  p->split = view->ops->blocks_at_once;
  SC_INFO(SC_P2P,
          "send/recv within the host: up to %lld bytes eagerly, else %lld lanes a peer, a part "
          "per %lld bytes, a ring of %lld chunks of %lld bytes a peer",
          set.eager_bytes, set.lanes, set.lane_bytes, set.slots, set.chunk_bytes);
  /* Every rank's window has the same size (windows are collective): slots
   * and rings for as many peers as the largest host has, its own unused
   * one among them. On GPUs a window is device memory committed whole
   * (2 ranks with the defaults: 32 MiB of rings a communicator). */
  sc_p2p_window_layout_t at;
  sc_p2p_window_layout(&set, (size_t)view->max_local_size, &at);
  SC_CHECK_GOTO(sc_window_create(view, at.bytes, NULL, 0, false, &p->win), res, fail);
  SC_CHECK_GOTO(sc_p2p_make_desc(p, &set, &at), res, fail);
  for (int kind = 0; kind < 2; kind++)
    for (int l = 0; l < view->local_size; l++)
      if (l != view->local_rank)
        SC_CHECK_GOTO(view->ops->event_create(view->device, &p->order[kind][l]), res, fail);
  *out = p;
  return SYMCOMM_OK;
fail:
  sc_p2p_destroy(p);
  return res;
}

void sc_p2p_destroy(sc_p2p_t *p) {
  if (p == NULL)
    return;
  for (int kind = 0; kind < 2; kind++)
    for (int l = 0; l < SC_MAX_LOCAL_RANKS; l++)
      if (p->order[kind][l] != NULL)
        p->view->ops->event_destroy(p->order[kind][l]);
  if (p->desc != NULL)
    p->view->ops->dev_free(p->view->device, p->desc);
  sc_window_release(p->win);
  free(p);
}

sc_event_t *sc_p2p_order_event(const sc_p2p_t *p, int kind, int peer) {
  return p->order[kind][peer];
}

void sc_p2p_op_make(const sc_p2p_t *p, int kind, int peer, void *buf, size_t bytes,
                    sc_p2p_op_t *op) {
  const sc_comm_view_t *view = p->view;
  memset(op, 0, sizeof(*op));
  op->kind = (uint8_t)kind;
  op->peer = (uint8_t)view->local_of[peer];
  op->buf = buf;
  op->bytes = bytes;
  uint32_t id;
  size_t offset;
  /* A receive whose whole buffer lies in one of this rank's windows can take
   * the data straight from the sender. */
  if (kind == SC_P2P_RECV && sc_window_find(view, 0, buf, bytes, &id, &offset)) {
    op->window = id + 1;
    op->offset = offset;
  }
  SC_TRACE(SC_P2P, "%s %s rank %d: %zu bytes%s", kind == SC_P2P_SEND ? "send" : "recv",
           kind == SC_P2P_SEND ? "to" : "from", peer, bytes, op->window != 0 ? " into a window" : "");
}

/* Blocks: a group of `lanes` per peer (block g x lanes + l is lane l of
 * group g; op.block names the group). A backend may run a launch's blocks one after
 * another (the simulated one does), so a block must never wait for a later
 * block of its launch, on this rank or, through a chain of pairs, on any
 * other. Ordering each rank's peers by a key that both sides of a pair
 * compute alike, (local rank + peer's local rank) mod max_local_size, rules
 * that out: a rank waiting in the block of key k waits for a peer that will
 * reach key k after blocks of smaller keys only, so every chain of waits
 * ends at two ranks working on the same pair. For one rank the key differs
 * from peer to peer, so a group has one peer; there its sends and receives
 * advance together. Where blocks run at once (CUDA) nothing waits for a block
 * to start, and each direction of a peer has a group of its own: a block
 * that copies its sends and its receives in turn moves each at half speed.
 * A launch whose messages are all of one part has groups of one block (the
 * lanes would only take their tickets and leave). */
/* An op's place in the order of groups: its key, then (split) its direction. */
static uint32_t sc_p2p_group_key(const sc_p2p_t *p, const sc_p2p_op_t *op) {
  const sc_comm_view_t *view = p->view;
  uint32_t key = (uint32_t)(view->local_rank + op->peer) % (uint32_t)view->max_local_size;
  return p->split ? key * 2 + op->kind : key;
}

void sc_p2p_build(const sc_p2p_t *p, const sc_p2p_op_t *ops, int n, sc_p2p_args_t *args,
                  size_t *args_bytes, uint32_t *blocks) {
  uint32_t keys = (uint32_t)p->view->max_local_size * (p->split ? 2 : 1), width = 1;
  bool present[2 * SC_MAX_LOCAL_RANKS] = {false};
  for (int i = 0; i < n; i++) {
    present[sc_p2p_group_key(p, &ops[i])] = true;
    if (sc_p2p_parts(ops[i].bytes, p->lane_bytes, p->lanes) > 1)
      width = p->lanes;
  }
  args->desc = p->desc;
  args->nops = (uint32_t)n;
  args->call = 0;
  args->seq = 0;
  args->width = width;
  args->reserved = 0;
  args->stopped = p->view->dev_stop;
  args->my_pad = (sc_p2p_pad_t *)p->win->peer[p->view->rank];
  uint8_t group_of[2 * SC_MAX_LOCAL_RANKS];
  uint32_t groups = 0;
  for (uint32_t k = 0; k < keys; k++)
    group_of[k] = (uint8_t)(present[k] ? groups++ : 0);
  for (int i = 0; i < n; i++) {
    args->ops[i] = ops[i];
    args->ops[i].block = group_of[sc_p2p_group_key(p, &ops[i])];
  }
  *args_bytes = (size_t)sc_p2p_args_bytes((uint32_t)n);
  *blocks = groups * width;
}

/* Threads of a launch's blocks, by its largest message: with 512 a thread
 * has only a line or two (8 data bytes each) to move at these sizes, and the
 * block spends its time in its block-wide syncs and votes; fewer threads
 * move 4-8 lines each, faster here. Sendrecv on 2 H200s
 * (NVLink, docs/PERFORMANCE.md session 26, k2), us: 2 KiB 8.0 with 512
 * threads, 6.7-7.6 with 128; 4 KiB 8.7 against 7.3-7.6 (128) and 7.7-8.0
 * (256); 8 KiB 9.2 against 8.0-8.1 (256) and 8.4-8.9 (128); 16 KiB 9.2
 * against 8.8 (256) and 11.1 (128); 32 KiB best with 512 (11.7 against 12.2
 * with 256); 1 KiB and less best with 128 (6.7 against 7.2-7.6 with 256).
 * 0: the program's own (512). */
static uint32_t sc_p2p_threads(uint64_t largest_bytes) {
  return largest_bytes <= (4 << 10) ? 128 : largest_bytes <= (16 << 10) ? 256 : 0;
}

sc_result_t sc_p2p_launch(const sc_p2p_t *p, sc_stream_t *stream, const sc_p2p_args_t *args,
                          size_t args_bytes, uint32_t blocks) {
  uint64_t largest_bytes = 0;
  for (uint32_t i = 0; i < args->nops && i < SC_P2P_MAX_OPS; i++)
    if (args->ops[i].bytes > largest_bytes)
      largest_bytes = args->ops[i].bytes;
  const sc_launch_t how = {.blocks = blocks > 0 ? blocks : 1,
                           .status = p->view->status,
                           .early = p->early_start,
                           .threads = sc_p2p_threads(largest_bytes)};
  return p->view->ops->launch(stream, SC_PROGRAM_P2P, args, args_bytes, &how);
}

/* A group larger than one launch goes in rounds: round k holds, of every
 * queue (peer and direction), its ops k * q .. k * q + q - 1 in posting
 * order. q depends only on the communicator, so a peer whose group matches
 * (its receives from us in one group, as our sends to it) puts each
 * counterpart in the round of the same number: round k on every rank needs
 * nothing from rounds after k anywhere, whatever the directions mix. */
sc_result_t sc_p2p_launch_group(const sc_p2p_t *p, sc_stream_t *stream, const sc_p2p_op_t *ops,
                                int n, int call, uint64_t seq) {
  int queues = 2 * (p->view->max_local_size - 1);
  uint32_t q = queues > 0 && SC_P2P_MAX_OPS / queues > 0 ? (uint32_t)(SC_P2P_MAX_OPS / queues) : 1;
  /* With lanes, an op's lead never meets a second op of its queue in the
   * same launch: it would wait for the first one's lanes, later blocks. */
  if (p->lanes > 1)
    q = 1;
  sc_p2p_args_t args;
  for (uint32_t round = 0;; round++) {
    uint32_t pos[2][SC_MAX_LOCAL_RANKS] = {{0}};
    sc_p2p_op_t batch[SC_P2P_MAX_OPS];
    int m = 0;
    bool later = false;
    for (int i = 0; i < n; i++) {
      uint32_t r = pos[ops[i].kind][ops[i].peer]++ / q;
      if (r == round)
        batch[m++] = ops[i];
      later |= r > round;
    }
    if (m > 0) {
      size_t bytes = 0;
      uint32_t blocks = 0;
      sc_p2p_build(p, batch, m, &args, &bytes, &blocks);
      args.call = call;
      args.seq = seq;
      SC_CHECK(sc_p2p_launch(p, stream, &args, bytes, blocks));
    }
    if (!later)
      return SYMCOMM_OK;
  }
}
