#include "coll/coll_hosts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/param.h"

/* One send or receive of a step. */
typedef struct sc_xfer {
  int peer;
  int kind; /* SC_P2P_SEND or SC_P2P_RECV */
  void *buf;
  size_t bytes;
} sc_xfer_t;

struct sc_coll_hosts {
  sc_comm_view_t *view;
  const sc_backend_ops_t *ops;
  sc_p2p_t *p2p; /* within a host; NULL when every host has one rank */
  sc_net_t *net; /* between hosts */
  char *scratch; /* device memory of this rank: what arrives before it is combined */
  size_t scratch_bytes;
  int nhosts;
  int *first;    /* [nhosts + 1]: host h's ranks are members[first[h] .. first[h + 1]) */
  int *members;  /* ranks by host, ascending within a host */
  int my_host, my_local, max_local;
  bool equal;    /* every host has the same number of ranks */
  uint64_t calls;  /* collectives queued so far */
  uint64_t seq;    /* the running one's number, from 0 */
  int kind;        /* ... and its kind (sc_coll_kind_t) */
  sc_event_t *order; /* marks the last collective's end on its stream */
  const void **srcs; /* [nranks + 1]: a combination's sources */
  unsigned logged; /* kinds whose plan was logged at INFO, a bit each */
  /* a step being built */
  sc_xfer_t *xfers;
  int nxfers, cap;
  int nremote; /* of them with other hosts */
  sc_p2p_op_t *p2p_ops;
  sc_net_op_t *net_ops;
};

/* ---- layout */

static int sc_hosts_size(const sc_coll_hosts_t *h, int host) {
  return h->first[host + 1] - h->first[host];
}
static int sc_hosts_rank(const sc_coll_hosts_t *h, int host, int local) {
  return h->members[h->first[host] + local];
}
/* [start, end) of part i of k parts of total (sizes differ by at most one). */
static size_t sc_part_start(size_t total, int k, int i) {
  return (size_t)((unsigned __int128)total * (unsigned)i / (unsigned)k);
}
static size_t sc_part_len(size_t total, int k, int i) {
  return sc_part_start(total, k, i + 1) - sc_part_start(total, k, i);
}

/* ---- steps */

static void sc_step_add(sc_coll_hosts_t *h, int kind, int peer, void *buf, size_t bytes) {
  if (bytes == 0)
    return; /* both sides compute the same size: both leave it out */
  h->xfers[h->nxfers++] = (sc_xfer_t){.peer = peer, .kind = kind, .buf = buf, .bytes = bytes};
  h->nremote += h->view->local_of[peer] < 0;
}

/* Queues the step's sends and receives: those within the host first (a
 * host's exchanges wait only for each other), then those between hosts. */
static sc_result_t sc_step_flush(sc_coll_hosts_t *h, sc_stream_t *stream) {
  int call = SC_CALL_COLL + h->kind;
  int n = 0, nnet = 0;
  for (int i = 0; i < h->nxfers; i++) {
    const sc_xfer_t *x = &h->xfers[i];
    if (h->view->local_of[x->peer] >= 0)
      sc_p2p_op_make(h->p2p, x->kind, x->peer, x->buf, x->bytes, &h->p2p_ops[n++]);
    else
      h->net_ops[nnet++] = sc_net_op_make(x->kind, x->peer, x->buf, x->bytes);
  }
  h->nxfers = 0;
  h->nremote = 0;
  if (n > 0)
    SC_CHECK(sc_p2p_launch_group(h->p2p, stream, h->p2p_ops, n, call, h->seq));
  if (nnet > 0)
    SC_CHECK(sc_net_launch(h->net, stream, h->net_ops, nnet, call, h->seq));
  return SYMCOMM_OK;
}

/* Distances per launch of an exchange by distance (at distance d, this rank
 * sends to rank me + d and receives from rank me - d): two ops each, at most
 * a NET launch's worth. The same on every rank, so that launch k of a rank
 * meets launch k of its peers, whatever mix of local and remote peers each has. */
#define SC_STEP_DISTANCES (SC_NET_MAX_OPS / 2)

static sc_result_t sc_step_distance_end(sc_coll_hosts_t *h, sc_stream_t *stream, int d, int last) {
  return d % SC_STEP_DISTANCES == 0 || d == last ? sc_step_flush(h, stream) : SYMCOMM_OK;
}

/* A fan in or out (one rank with many peers, each of which has this one op
 * in its step): a full NET launch goes now, the rest in the next. */
static sc_result_t sc_step_fan_room(sc_coll_hosts_t *h, sc_stream_t *stream) {
  return h->nremote >= SC_NET_MAX_OPS ? sc_step_flush(h, stream) : SYMCOMM_OK;
}

static sc_result_t sc_step_copy(sc_coll_hosts_t *h, sc_stream_t *stream, void *dst,
                                const void *src, size_t bytes) {
  if (bytes == 0 || dst == src)
    return SYMCOMM_OK;
  return h->ops->copy(stream, dst, src, bytes);
}

/* dst = srcs combined, count elements; `last`: the call's final combination
 * (AVG divides there, and sums before). More sources than a launch takes go
 * in several, each folding into dst. */
static sc_result_t sc_step_reduce(sc_coll_hosts_t *h, sc_stream_t *stream,
                                  const sc_coll_call_t *call, void *dst, const void *const *srcs,
                                  int nsrcs, size_t count, bool last) {
  if (count == 0)
    return SYMCOMM_OK;
  sc_reduce_args_t a;
  memset(&a, 0, sizeof(a));
  a.dst = dst;
  a.count = count;
  a.dtype = call->dtype;
  a.divisor = h->view->nranks;
  a.elem = (uint32_t)call->elem;
  a.guard = h->view->guard;
  a.guard.call = SC_CALL_COLL + (int32_t)call->kind;
  a.guard.seq = h->seq;
  size_t bytes = count * call->elem;
  uint32_t blocks = (uint32_t)(bytes >> 18);
  blocks = blocks < 1 ? 1 : blocks > SC_COLL_MAX_BLOCKS ? SC_COLL_MAX_BLOCKS : blocks;
  int i = 0;
  do {
    int k = 0;
    if (i > 0)
      a.srcs[k++] = dst;
    while (k < SC_REDUCE_MAX_SRCS && i < nsrcs)
      a.srcs[k++] = srcs[i++];
    a.nsrcs = k;
    a.op = call->op == SYMCOMM_AVG && !(last && i == nsrcs) ? SYMCOMM_SUM : call->op;
    SC_CHECK(h->ops->launch(stream, SC_PROGRAM_REDUCE, &a, sizeof(a),
                            &(sc_launch_t){blocks, h->view->status, false, 0}));
  } while (i < nsrcs);
  return SYMCOMM_OK;
}

/* The most elements a round may take so that need(h, call, r) bytes of
 * scratch suffice. */
typedef size_t (*sc_need_fn)(const sc_coll_hosts_t *h, size_t elem, size_t r);
static size_t sc_round_elems(const sc_coll_hosts_t *h, size_t elem, size_t total, sc_need_fn need) {
  size_t r = total;
  while (r > 1 && need(h, elem, r) > h->scratch_bytes)
    r -= r / 8 + 1;
  return need(h, elem, r) <= h->scratch_bytes ? r : 0;
}

/* Not even one element per round fits the scratch buffer. */
static sc_result_t sc_hosts_too_small(const sc_coll_hosts_t *h, const sc_coll_call_t *call) {
  return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                  "%s across %d hosts: SYMCOMM_COLL_SCRATCH_BYTES=%zu holds less than one round "
                  "of %zu-byte elements on %d ranks",
                  sc_coll_kind_name(call->kind), h->nhosts, h->scratch_bytes, call->elem,
                  h->view->nranks);
}

/* ---- all-reduce */

/* Parts per host: one per rank when the hosts are alike, else one. */
static int sc_ar_parts(const sc_coll_hosts_t *h) {
  return h->equal ? sc_hosts_size(h, h->my_host) : 1;
}

static size_t sc_ar_need(const sc_coll_hosts_t *h, size_t elem, size_t r) {
  int parts = sc_ar_parts(h);
  size_t part = (r + (size_t)parts - 1) / (size_t)parts;
  size_t within = (size_t)(h->max_local - 1) * part;
  size_t across = (size_t)(h->nhosts - 1) * ((part + (size_t)h->nhosts - 1) / (size_t)h->nhosts);
  return (within > across ? within : across) * elem;
}

/* Bytes of the other hosts' parts a rank may take in one exchange. */
#define SC_AR_ONE_EXCHANGE_BYTES ((size_t)256 << 10)

/* Whether the step across hosts is one exchange: every owner of a part
 * sends the whole part to its counterparts and combines all of them, in
 * host order, so every host gets the same bits; one NET launch instead of a
 * reduce-scatter's and an all-gather's, which is what a small call pays for
 * (each launch is a round trip through the network thread). Between 2 hosts
 * it moves as many bytes as the two steps. The same on every rank. */
static bool sc_ar_one_exchange(const sc_coll_hosts_t *h, const sc_coll_call_t *call) {
  int parts = sc_ar_parts(h);
  size_t part = (call->count + (size_t)parts - 1) / (size_t)parts;
  size_t across = (size_t)(h->nhosts - 1) * part * call->elem;
  size_t within = (size_t)(h->max_local - 1) * part * call->elem;
  return h->nhosts <= SC_REDUCE_MAX_SRCS && across <= SC_AR_ONE_EXCHANGE_BYTES &&
         across <= h->scratch_bytes && within <= h->scratch_bytes;
}

static sc_result_t sc_hosts_allreduce(sc_coll_hosts_t *h, const sc_coll_call_t *call,
                                      sc_stream_t *stream) {
  const size_t e = call->elem;
  const char *in = call->sendbuf;
  char *out = call->recvbuf;
  const int H = h->nhosts, L = sc_hosts_size(h, h->my_host), P = sc_ar_parts(h);
  const int me = h->my_local, host = h->my_host;
  const void **srcs = h->srcs;
  bool one = sc_ar_one_exchange(h, call);
  size_t round = one ? call->count : sc_round_elems(h, e, call->count, sc_ar_need);
  if (round == 0)
    return sc_hosts_too_small(h, call);
  for (size_t o = 0; o < call->count; o += round) {
    size_t r = call->count - o < round ? call->count - o : round;
    size_t mine = o + sc_part_start(r, P, me), mine_len = me < P ? sc_part_len(r, P, me) : 0;
    /* Within the host: part p onto local rank p. */
    if (L > 1) {
      for (int p = 0; p < P; p++)
        if (p != me)
          sc_step_add(h, SC_P2P_SEND, sc_hosts_rank(h, host, p),
                      (void *)(in + (o + sc_part_start(r, P, p)) * e), sc_part_len(r, P, p) * e);
      int slot = 0;
      srcs[0] = in + mine * e;
      for (int m = 0; m < L && me < P; m++)
        if (m != me) {
          srcs[1 + slot] = h->scratch + (size_t)slot * mine_len * e;
          sc_step_add(h, SC_P2P_RECV, sc_hosts_rank(h, host, m), (void *)srcs[1 + slot],
                      mine_len * e);
          slot++;
        }
      SC_CHECK(sc_step_flush(h, stream));
      if (me < P)
        SC_CHECK(sc_step_reduce(h, stream, call, out + mine * e, srcs, L, mine_len, false));
    } else {
      SC_CHECK(sc_step_copy(h, stream, out + o * e, in + o * e, r * e));
    }
    /* Across the hosts, among the owners of my part: in one exchange (srcs
     * in host order, this host's being dst itself, all in one launch), or a
     * reduce-scatter and an all-gather. */
    if (me < P && one) {
      for (int d = 1; d < H; d++) {
        int to = (host + d) % H, from = (host + H - d) % H;
        sc_step_add(h, SC_P2P_SEND, sc_hosts_rank(h, to, me), out + mine * e, mine_len * e);
        srcs[from] = h->scratch + (size_t)(d - 1) * mine_len * e;
        sc_step_add(h, SC_P2P_RECV, sc_hosts_rank(h, from, me), (void *)srcs[from], mine_len * e);
        SC_CHECK(sc_step_distance_end(h, stream, d, H - 1));
      }
      srcs[host] = out + mine * e;
      SC_CHECK(sc_step_reduce(h, stream, call, out + mine * e, srcs, H, mine_len, true));
    } else if (me < P) {
      size_t sub = mine + sc_part_start(mine_len, H, host), sub_len = sc_part_len(mine_len, H, host);
      srcs[0] = out + sub * e;
      for (int d = 1; d < H; d++) {
        int to = (host + d) % H, from = (host + H - d) % H;
        sc_step_add(h, SC_P2P_SEND, sc_hosts_rank(h, to, me),
                    out + (mine + sc_part_start(mine_len, H, to)) * e,
                    sc_part_len(mine_len, H, to) * e);
        srcs[d] = h->scratch + (size_t)(d - 1) * sub_len * e;
        sc_step_add(h, SC_P2P_RECV, sc_hosts_rank(h, from, me), (void *)srcs[d], sub_len * e);
        SC_CHECK(sc_step_distance_end(h, stream, d, H - 1));
      }
      SC_CHECK(sc_step_reduce(h, stream, call, out + sub * e, srcs, H, sub_len, true));
      for (int d = 1; d < H; d++) {
        int to = (host + d) % H, from = (host + H - d) % H;
        sc_step_add(h, SC_P2P_SEND, sc_hosts_rank(h, to, me), out + sub * e, sub_len * e);
        sc_step_add(h, SC_P2P_RECV, sc_hosts_rank(h, from, me),
                    out + (mine + sc_part_start(mine_len, H, from)) * e,
                    sc_part_len(mine_len, H, from) * e);
        SC_CHECK(sc_step_distance_end(h, stream, d, H - 1));
      }
    }
    /* Within the host again: every part from its owner. */
    if (L > 1) {
      for (int p = 0; p < P; p++)
        if (p != me)
          sc_step_add(h, SC_P2P_RECV, sc_hosts_rank(h, host, p),
                      out + (o + sc_part_start(r, P, p)) * e, sc_part_len(r, P, p) * e);
      for (int m = 0; m < L && me < P; m++)
        if (m != me)
          sc_step_add(h, SC_P2P_SEND, sc_hosts_rank(h, host, m), out + mine * e, mine_len * e);
      SC_CHECK(sc_step_flush(h, stream));
    }
  }
  return SYMCOMM_OK;
}

/* ---- reduce */

static size_t sc_reduce_need(const sc_coll_hosts_t *h, size_t elem, size_t r) {
  return (size_t)(h->max_local + h->nhosts) * r * elem;
}

static sc_result_t sc_hosts_reduce(sc_coll_hosts_t *h, const sc_coll_call_t *call,
                                   sc_stream_t *stream) {
  const size_t e = call->elem;
  const char *in = call->sendbuf;
  const int H = h->nhosts, host = h->my_host, L = sc_hosts_size(h, host), me_rank = h->view->rank;
  const int root = call->root;
  int root_host = -1;
  for (int g = 0; g < H && root_host < 0; g++)
    for (int l = 0; l < sc_hosts_size(h, g); l++)
      if (sc_hosts_rank(h, g, l) == root)
        root_host = g;
  int collector = host == root_host ? root : sc_hosts_rank(h, host, 0);
  const void **srcs = h->srcs;
  size_t round = sc_round_elems(h, e, call->count, sc_reduce_need);
  if (round == 0)
    return sc_hosts_too_small(h, call);
  for (size_t o = 0; o < call->count; o += round) {
    size_t r = call->count - o < round ? call->count - o : round, bytes = r * e;
    if (me_rank != collector) {
      sc_step_add(h, SC_P2P_SEND, collector, (void *)(in + o * e), bytes);
      SC_CHECK(sc_step_flush(h, stream));
      continue;
    }
    int n = 0;
    srcs[n++] = in + o * e;
    for (int l = 0; l < L; l++) {
      int peer = sc_hosts_rank(h, host, l);
      if (peer == me_rank)
        continue;
      srcs[n] = h->scratch + (size_t)(n - 1) * bytes;
      sc_step_add(h, SC_P2P_RECV, peer, (void *)srcs[n], bytes);
      n++;
    }
    if (me_rank == root) {
      for (int g = 0; g < H; g++) {
        if (g == host)
          continue;
        SC_CHECK(sc_step_fan_room(h, stream));
        srcs[n] = h->scratch + (size_t)(n - 1) * bytes;
        sc_step_add(h, SC_P2P_RECV, sc_hosts_rank(h, g, 0), (void *)srcs[n], bytes);
        n++;
      }
      SC_CHECK(sc_step_flush(h, stream));
      SC_CHECK(sc_step_reduce(h, stream, call, (char *)call->recvbuf + o * e, srcs, n, r, true));
      continue;
    }
    SC_CHECK(sc_step_flush(h, stream));
    const void *partial = in + o * e;
    if (n > 1) {
      partial = h->scratch + (size_t)(n - 1) * bytes;
      SC_CHECK(sc_step_reduce(h, stream, call, (void *)partial, srcs, n, r, false));
    }
    sc_step_add(h, SC_P2P_SEND, root, (void *)partial, bytes);
    SC_CHECK(sc_step_flush(h, stream));
  }
  return SYMCOMM_OK;
}

/* ---- broadcast */

static sc_result_t sc_hosts_broadcast(sc_coll_hosts_t *h, const sc_coll_call_t *call,
                                      sc_stream_t *stream) {
  const size_t bytes = call->count * call->elem;
  const int H = h->nhosts, host = h->my_host, L = sc_hosts_size(h, host), me = h->view->rank;
  const int root = call->root;
  char *out = call->recvbuf;
  bool root_here = false;
  for (int l = 0; l < L; l++)
    root_here = root_here || sc_hosts_rank(h, host, l) == root;
  int entry = root_here ? root : sc_hosts_rank(h, host, 0);
  const void *data = out;
  if (me == root) {
    data = call->sendbuf;
    for (int g = 0; g < H; g++) {
      if (g == host)
        continue;
      SC_CHECK(sc_step_fan_room(h, stream));
      sc_step_add(h, SC_P2P_SEND, sc_hosts_rank(h, g, 0), (void *)data, bytes);
    }
    SC_CHECK(sc_step_copy(h, stream, out, data, bytes));
  } else if (me == entry) {
    sc_step_add(h, SC_P2P_RECV, root, out, bytes);
    SC_CHECK(sc_step_flush(h, stream));
  } else {
    sc_step_add(h, SC_P2P_RECV, entry, out, bytes);
    return sc_step_flush(h, stream);
  }
  for (int l = 0; l < L; l++) {
    int peer = sc_hosts_rank(h, host, l);
    if (peer != me)
      sc_step_add(h, SC_P2P_SEND, peer, (void *)data, bytes);
  }
  return sc_step_flush(h, stream);
}

/* ---- reduce-scatter, all-gather, all-to-all: direct */

static size_t sc_rs_need(const sc_coll_hosts_t *h, size_t elem, size_t r) {
  return (size_t)(h->view->nranks - 1) * r * elem;
}

static sc_result_t sc_hosts_reducescatter(sc_coll_hosts_t *h, const sc_coll_call_t *call,
                                          sc_stream_t *stream) {
  const size_t e = call->elem, c = call->count;
  const int n = h->view->nranks, me = h->view->rank;
  const char *in = call->sendbuf;
  char *out = call->recvbuf;
  const void **srcs = h->srcs;
  size_t round = sc_round_elems(h, e, c, sc_rs_need);
  if (round == 0)
    return sc_hosts_too_small(h, call);
  for (size_t o = 0; o < c; o += round) {
    size_t r = c - o < round ? c - o : round;
    srcs[0] = in + ((size_t)me * c + o) * e;
    for (int d = 1; d < n; d++) {
      int to = (me + d) % n, from = (me + n - d) % n;
      sc_step_add(h, SC_P2P_SEND, to, (void *)(in + ((size_t)to * c + o) * e), r * e);
      srcs[d] = h->scratch + (size_t)(d - 1) * r * e;
      sc_step_add(h, SC_P2P_RECV, from, (void *)srcs[d], r * e);
      SC_CHECK(sc_step_distance_end(h, stream, d, n - 1));
    }
    SC_CHECK(sc_step_reduce(h, stream, call, out + o * e, srcs, n, r, true));
  }
  return SYMCOMM_OK;
}

static sc_result_t sc_hosts_allgather(sc_coll_hosts_t *h, const sc_coll_call_t *call,
                                      sc_stream_t *stream) {
  const size_t bytes = call->count * call->elem;
  const int n = h->view->nranks, me = h->view->rank;
  char *out = call->recvbuf;
  for (int d = 1; d < n; d++) {
    int to = (me + d) % n, from = (me + n - d) % n;
    sc_step_add(h, SC_P2P_SEND, to, (void *)call->sendbuf, bytes);
    sc_step_add(h, SC_P2P_RECV, from, out + (size_t)from * bytes, bytes);
    SC_CHECK(sc_step_distance_end(h, stream, d, n - 1));
  }
  return sc_step_copy(h, stream, out + (size_t)me * bytes, call->sendbuf, bytes);
}

static size_t sc_a2a_need(const sc_coll_hosts_t *h, size_t elem, size_t r) {
  return (size_t)h->view->nranks * r * elem;
}

static sc_result_t sc_hosts_alltoall(sc_coll_hosts_t *h, const sc_coll_call_t *call,
                                     sc_stream_t *stream) {
  const size_t e = call->elem, c = call->count;
  const int n = h->view->nranks, me = h->view->rank;
  const char *in = call->sendbuf;
  char *out = call->recvbuf;
  /* In place, a block may arrive before the send of the one it replaces
   * left: each round sends from copies in scratch. */
  bool in_place = call->sendbuf == call->recvbuf;
  size_t round = in_place ? sc_round_elems(h, e, c, sc_a2a_need) : c;
  if (round == 0)
    return sc_hosts_too_small(h, call);
  for (size_t o = 0; o < c; o += round) {
    size_t r = c - o < round ? c - o : round;
    const char *src = in + o * e;
    size_t stride = c * e;
    if (in_place) {
      for (int j = 0; j < n; j++)
        SC_CHECK(sc_step_copy(h, stream, h->scratch + (size_t)j * r * e, src + (size_t)j * stride,
                              r * e));
      src = h->scratch;
      stride = r * e;
    }
    for (int d = 1; d < n; d++) {
      int to = (me + d) % n, from = (me + n - d) % n;
      sc_step_add(h, SC_P2P_SEND, to, (void *)(src + (size_t)to * stride), r * e);
      sc_step_add(h, SC_P2P_RECV, from, out + ((size_t)from * c + o) * e, r * e);
      SC_CHECK(sc_step_distance_end(h, stream, d, n - 1));
    }
    SC_CHECK(sc_step_copy(h, stream, out + ((size_t)me * c + o) * e, src + (size_t)me * stride,
                          r * e));
  }
  return SYMCOMM_OK;
}

/* ---- the call */

static const char *sc_hosts_plan(const sc_coll_hosts_t *h, sc_coll_kind_t kind) {
  switch (kind) {
  case SC_COLL_ALLREDUCE:
    return h->equal ? "hierarchical: a part per rank of each host, all-reduced across hosts"
                    : "hierarchical through each host's first rank (hosts differ in size)";
  case SC_COLL_REDUCE: return "hierarchical: each host combines, then the root";
  case SC_COLL_BROADCAST: return "hierarchical: to each host's first rank, then within hosts";
  default: return "direct exchanges between every pair of ranks";
  }
}

sc_result_t sc_coll_hosts_enqueue(sc_coll_hosts_t *h, const sc_coll_call_t *call,
                                  sc_stream_t *stream) {
  if (!(h->logged & (1u << call->kind))) {
    h->logged |= 1u << call->kind;
    SC_INFO(SC_COLL, "rank %d: %s across %d hosts: %s", h->view->rank,
            sc_coll_kind_name(call->kind), h->nhosts, sc_hosts_plan(h, call->kind));
  }
  h->seq = h->calls++;
  h->kind = (int)call->kind;
  if (call->count == 0)
    return SYMCOMM_OK;
  switch (call->kind) {
  case SC_COLL_ALLREDUCE: return sc_hosts_allreduce(h, call, stream);
  case SC_COLL_REDUCE: return sc_hosts_reduce(h, call, stream);
  case SC_COLL_BROADCAST: return sc_hosts_broadcast(h, call, stream);
  case SC_COLL_REDUCESCATTER: return sc_hosts_reducescatter(h, call, stream);
  case SC_COLL_ALLGATHER: return sc_hosts_allgather(h, call, stream);
  case SC_COLL_ALLTOALL: return sc_hosts_alltoall(h, call, stream);
  case SC_COLL_KIND_COUNT: break;
  }
  return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL, "no collective of kind %d", (int)call->kind);
}

/* ---- setup */

static sc_result_t sc_hosts_layout(sc_coll_hosts_t *h, const int *host_of, int nhosts) {
  const sc_comm_view_t *v = h->view;
  h->nhosts = nhosts;
  h->first = calloc((size_t)nhosts + 1, sizeof(int));
  h->members = malloc(sizeof(int) * (size_t)v->nranks);
  if (h->first == NULL || h->members == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_COLL, "no memory for %d hosts", nhosts);
  for (int r = 0; r < v->nranks; r++)
    h->first[host_of[r] + 1]++;
  for (int g = 0; g < nhosts; g++)
    h->first[g + 1] += h->first[g];
  int *fill = calloc((size_t)nhosts, sizeof(int));
  if (fill == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_COLL, "no memory for %d hosts", nhosts);
  for (int r = 0; r < v->nranks; r++) {
    int g = host_of[r];
    if (r == v->rank) {
      h->my_host = g;
      h->my_local = fill[g];
    }
    h->members[h->first[g] + fill[g]++] = r;
  }
  free(fill);
  h->equal = true;
  h->max_local = 0;
  for (int g = 0; g < nhosts; g++) {
    int size = sc_hosts_size(h, g);
    h->equal = h->equal && size == sc_hosts_size(h, 0);
    h->max_local = size > h->max_local ? size : h->max_local;
  }
  return SYMCOMM_OK;
}

sc_result_t sc_coll_hosts_create(sc_comm_view_t *view, const int *host_of, int nhosts,
                                 sc_net_fail_fn fail, void *fail_ctx, sc_coll_hosts_t **out) {
  sc_coll_hosts_t *h = calloc(1, sizeof(*h));
  if (h == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_COLL, "no memory for collectives across hosts");
  sc_result_t res;
  h->view = view;
  h->ops = view->ops;
  SC_CHECK_GOTO(sc_hosts_layout(h, host_of, nhosts), res, fail);
  h->cap = 2 * view->nranks + 2;
  h->xfers = calloc((size_t)h->cap, sizeof(*h->xfers));
  h->p2p_ops = calloc((size_t)h->cap, sizeof(*h->p2p_ops));
  h->net_ops = calloc((size_t)h->cap, sizeof(*h->net_ops));
  h->srcs = calloc((size_t)view->nranks + 1, sizeof(*h->srcs));
  if (h->xfers == NULL || h->p2p_ops == NULL || h->net_ops == NULL || h->srcs == NULL) {
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_COLL, "no memory for collectives across hosts");
    goto fail;
  }
  long long scratch = 0;
  SC_CHECK_GOTO(sc_coll_scratch_param(view, &scratch, NULL), res, fail);
  h->scratch_bytes = (size_t)scratch;
  void *mem = NULL;
  SC_CHECK_GOTO(h->ops->dev_alloc(view->device, h->scratch_bytes, &mem), res, fail);
  h->scratch = mem;
  SC_CHECK_GOTO(h->ops->event_create(view->device, &h->order), res, fail);
  /* Transports of their own: the collectives' messages never meet the
   * caller's sends and receives on the same pairs. */
  if (view->max_local_size > 1)
    SC_CHECK_GOTO(sc_p2p_create(view, &h->p2p), res, fail);
  SC_CHECK_GOTO(sc_net_create(view, fail, fail_ctx, &h->net), res, fail);
  *out = h;
  return SYMCOMM_OK;
fail:
  sc_coll_hosts_destroy(h);
  return res;
}

void sc_coll_hosts_destroy(sc_coll_hosts_t *h) {
  if (h == NULL)
    return;
  sc_net_destroy(h->net);
  sc_p2p_destroy(h->p2p);
  if (h->order != NULL)
    h->ops->event_destroy(h->order);
  if (h->scratch != NULL)
    h->ops->dev_free(h->view->device, h->scratch);
  free(h->srcs);
  free(h->first);
  free(h->members);
  free(h->xfers);
  free(h->p2p_ops);
  free(h->net_ops);
  free(h);
}

sc_event_t *sc_coll_hosts_order_event(sc_coll_hosts_t *h) { return h->order; }
