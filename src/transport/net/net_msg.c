/* Messages of the network engine: SIZE records both ways (so both sides of a
 * disagreement can say both sizes), GRANT records from the receiver as it has
 * room, chunks out on the least-loaded data connection, chunks in checked
 * against the grants, small messages eagerly (EAGER records, their bytes
 * behind them on the control connection: no grant's round trip), finishing in
 * order, and the deadlines: no progress for timeout_ms, or a closed
 * connection. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/net/net_internal.h"
#include "util/clock.h"

static net_queue_t *net_queue_of(net_peer_t *p, int kind) { return kind == SC_NET_SEND ? &p->sendq : &p->recvq; }

void net_queue_free(net_queue_t *q) {
  for (size_t i = 0; i < q->n_early; i++)
    free(q->early[i].data);
  free(q->early);
  q->early = NULL;
  q->n_early = q->cap_early = 0;
}

static void net_put_rec(sc_net_endpoint_t *ep, net_conn_t *c, uint32_t type, uint64_t seq, uint64_t a, uint64_t b) {
  sc_net_rec_t rec = {.type = type, .seq = seq, .a = a, .b = b};
  if (net_buf_put(&c->out, &rec, sizeof(rec)) != SYMCOMM_OK)
    net_fail(ep, SYMCOMM_ERR_OUT_OF_MEMORY, "no memory for a control record to rank %d", c->peer->rank);
}

/* Send m's EAGER record and bytes, if the receiver has room for them (it
 * posted all but fewer than its window of the messages up to m; windows may
 * differ between ranks, so until its first SIZE record says its window, only
 * one message goes ahead) and they are staged; false: not yet. Its bytes are
 * copied: they have left. */
static bool net_send_eager(sc_net_endpoint_t *ep, net_queue_t *q, net_conn_t *ctrl, sc_net_msg_t *m) {
  struct sc_net_msg_engine *e = &m->engine;
  uint64_t room = ctrl->peer->peer_window > 0 ? ctrl->peer->peer_window : 1;
  if (e->seq >= q->peer_seq + room)
    return false;
  const uint8_t *ptr = m->chunk_ptr(m, 0);
  if (ptr == NULL)
    return false;
  net_put_rec(ep, ctrl, SC_NET_REC_EAGER, e->seq, m->bytes, 0);
  if (ep->failed == SYMCOMM_OK && net_buf_put(&ctrl->out, ptr, m->bytes) != SYMCOMM_OK)
    net_fail(ep, SYMCOMM_ERR_OUT_OF_MEMORY, "no memory for the %llu bytes of a message to rank %d",
             (unsigned long long)m->bytes, m->peer);
  if (ep->failed != SYMCOMM_OK)
    return false;
  e->granted = e->dispatched = e->done = 1;
  q->progress_ms = net_now_ms();
  m->chunk_done(m, 0);
  return true;
}

static void net_send_sizes(sc_net_endpoint_t *ep, net_queue_t *q, net_conn_t *ctrl) {
  if (ctrl->state != NET_CONN_OPEN)
    return;
  sc_net_msg_t *m = q->size_next;
  for (; m != NULL && ep->failed == SYMCOMM_OK; m = m->engine.next) {
    if (m->kind == SC_NET_SEND && net_eager(ep, m->bytes)) {
      if (!net_send_eager(ep, q, ctrl, m))
        break; /* the later ones wait: the records go in order */
    } else { /* a receive's SIZE says how many may come ahead of it */
      net_put_rec(ep, ctrl, SC_NET_REC_SIZE, m->engine.seq, m->bytes,
                  m->kind == SC_NET_RECV ? (uint64_t)ep->cfg.window : 0);
    }
    q->size_sent = m->engine.seq + 1;
  }
  q->size_next = m;
}

/* Both sizes of message m are known: they must agree. */
static void net_size_check(sc_net_endpoint_t *ep, sc_net_msg_t *m) {
  if (m->bytes == m->engine.peer_bytes)
    return;
  /* The peer learns our size before it sees us close (a failure flushes control
   * connections), so that it too can name both sizes. */
  net_peer_t *p = &ep->peers[m->peer];
  net_send_sizes(ep, net_queue_of(p, m->kind), m->kind == SC_NET_SEND ? &p->out[0] : &p->in[0]);
  char op[160];
  net_msg_name(m, op, sizeof(op));
  bool send = m->kind == SC_NET_SEND;
  net_fail(ep, SYMCOMM_ERR_INVALID_USAGE, "%s: this rank %s %llu bytes, but rank %d %s %llu bytes", op,
           send ? "sends" : "receives", (unsigned long long)m->bytes, m->peer, send ? "receives" : "sends",
           (unsigned long long)m->engine.peer_bytes);
}

static void net_apply_grant(sc_net_endpoint_t *ep, sc_net_msg_t *m, uint64_t first, uint64_t count) {
  struct sc_net_msg_engine *e = &m->engine;
  if (!e->peer_known || net_eager(ep, m->bytes) || first != e->granted || count == 0 ||
      count > e->nchunks - e->granted) {
    char op[160];
    net_msg_name(m, op, sizeof(op));
    net_fail(ep, SYMCOMM_ERR_REMOTE, "%s: rank %d granted chunks %llu..%llu, which do not follow its grants (%llu of %llu chunks granted)",
             op, m->peer, (unsigned long long)first, (unsigned long long)(first + count - 1),
             (unsigned long long)e->granted, (unsigned long long)e->nchunks);
    return;
  }
  e->granted += count;
}

void net_msg_attach(sc_net_endpoint_t *ep, sc_net_msg_t *m) {
  net_peer_t *p = &ep->peers[m->peer];
  net_queue_t *q = net_queue_of(p, m->kind);
  struct sc_net_msg_engine *e = &m->engine;
  e->next = NULL;
  e->seq = q->next_seq++;
  e->nchunks = m->bytes == 0 ? 0 : (m->bytes - 1) / ep->cfg.chunk_bytes + 1;
  if (q->head == NULL) {
    q->head = m;
    q->progress_ms = net_now_ms();
  } else {
    q->tail->engine.next = m;
  }
  q->tail = m;
  if (q->size_next == NULL)
    q->size_next = m;
  if (q->work_next == NULL)
    q->work_next = m;
  SC_TRACE(SC_NET, "%s: %s #%llu of %llu bytes %s rank %d posted", ep->name, m->kind == SC_NET_SEND ? "send" : "receive",
           (unsigned long long)e->seq, (unsigned long long)m->bytes, m->kind == SC_NET_SEND ? "to" : "from", m->peer);
  if (q->n_early > 0) {
    net_early_t early = q->early[0];
    e->peer_bytes = early.bytes;
    e->peer_known = true;
    memmove(q->early, q->early + 1, (q->n_early - 1) * sizeof(*q->early));
    q->n_early--;
    net_size_check(ep, m);
    if (ep->failed != SYMCOMM_OK) {
      free(early.data);
      return; /* a mismatch finished m with the failure: its owner may have freed it */
    }
    e->eager = early.data;
  }
  if (m->kind != SC_NET_SEND)
    return;
  size_t used = 0;
  while (used < p->n_grants && p->grants[used].seq == e->seq && ep->failed == SYMCOMM_OK) {
    net_apply_grant(ep, m, p->grants[used].first, p->grants[used].count);
    used++;
  }
  if (used == 0)
    return;
  memmove(p->grants, p->grants + used, (p->n_grants - used) * sizeof(*p->grants));
  p->n_grants -= used;
}

static sc_net_msg_t *net_queue_find(net_queue_t *q, uint64_t seq) {
  for (sc_net_msg_t *m = q->head; m != NULL; m = m->engine.next)
    if (m->engine.seq == seq)
      return m;
  return NULL;
}

static bool net_peer_seq_check(sc_net_endpoint_t *ep, net_peer_t *p, const net_queue_t *q, uint64_t seq) {
  if (seq == q->peer_seq)
    return true;
  net_fail(ep, SYMCOMM_ERR_REMOTE, "rank %d announced the size of its message #%llu where #%llu was next",
           p->rank, (unsigned long long)seq, (unsigned long long)q->peer_seq);
  return false;
}

/* The peer's SIZE record for its message seq, which meets our message seq of
 * queue q; data: the message's bytes when they came eagerly (taken: freed on
 * a failure). */
static void net_peer_size(sc_net_endpoint_t *ep, net_peer_t *p, int kind, uint64_t seq, uint64_t bytes,
                          uint8_t *data) {
  net_queue_t *q = net_queue_of(p, kind);
  q->progress_ms = net_now_ms();
  if (!net_peer_seq_check(ep, p, q, seq)) {
    free(data);
    return;
  }
  q->peer_seq++;
  if (seq >= q->next_seq) {
    if (!net_grow((void **)&q->early, &q->cap_early, q->n_early + 1, sizeof(*q->early))) {
      free(data);
      net_fail(ep, SYMCOMM_ERR_OUT_OF_MEMORY, "no memory for the sizes of rank %d's messages", p->rank);
      return;
    }
    q->early[q->n_early++] = (net_early_t){.bytes = bytes, .data = data};
    return;
  }
  /* Not found: a receive that finished already (its chunks came, so the sender
   * agreed). One whose bytes come eagerly has not: it waits for them. */
  sc_net_msg_t *m = net_queue_find(q, seq);
  if (m == NULL) {
    free(data);
    return;
  }
  m->engine.peer_bytes = bytes;
  m->engine.peer_known = true;
  net_size_check(ep, m);
  if (ep->failed != SYMCOMM_OK) {
    free(data);
    return;
  }
  m->engine.eager = data;
}

/* An EAGER record: its bytes follow on c; they are read into memory of
 * their own, bounded by the record's checks, and placed once the receive is
 * posted and its size agrees. */
static void net_peer_eager(sc_net_endpoint_t *ep, net_conn_t *c, uint64_t seq, uint64_t bytes) {
  net_peer_t *p = c->peer;
  net_queue_t *q = &p->recvq;
  if (!net_peer_seq_check(ep, p, q, seq))
    return;
  if (!net_eager(ep, bytes)) {
    net_fail(ep, SYMCOMM_ERR_REMOTE, "rank %d sent its message #%llu of %llu bytes without a grant: "
             "only 1 to %zu bytes may go so (SYMCOMM_NET_EAGER_BYTES)", p->rank, (unsigned long long)seq,
             (unsigned long long)bytes, ep->cfg.eager_bytes);
    return;
  }
  if (seq >= q->next_seq + (uint64_t)ep->cfg.window) {
    net_fail(ep, SYMCOMM_ERR_REMOTE, "rank %d sent its message #%llu without a grant, %d or more ahead "
             "of the %llu receives posted here", p->rank, (unsigned long long)seq, ep->cfg.window,
             (unsigned long long)q->next_seq);
    return;
  }
  c->eager = malloc(bytes);
  if (c->eager == NULL) {
    net_fail(ep, SYMCOMM_ERR_OUT_OF_MEMORY, "no memory for the %llu bytes of rank %d's message #%llu",
             (unsigned long long)bytes, p->rank, (unsigned long long)seq);
    return;
  }
  c->eager_seq = seq;
  c->eager_len = bytes;
  c->eager_got = 0;
}

void net_eager_landed(sc_net_endpoint_t *ep, net_conn_t *c) {
  uint8_t *data = c->eager;
  c->eager = NULL;
  net_peer_size(ep, c->peer, SC_NET_RECV, c->eager_seq, c->eager_len, data);
}

static void net_peer_grant(sc_net_endpoint_t *ep, net_peer_t *p, uint64_t seq, uint64_t first, uint64_t count) {
  net_queue_t *q = &p->sendq;
  q->progress_ms = net_now_ms();
  if (seq < q->next_seq) {
    sc_net_msg_t *m = net_queue_find(q, seq);
    if (m == NULL) {
      net_fail(ep, SYMCOMM_ERR_REMOTE, "rank %d granted chunks of message #%llu, which was finished", p->rank,
               (unsigned long long)seq);
      return;
    }
    net_apply_grant(ep, m, first, count);
    return;
  }
  if (!net_grow((void **)&p->grants, &p->cap_grants, p->n_grants + 1, sizeof(*p->grants))) {
    net_fail(ep, SYMCOMM_ERR_OUT_OF_MEMORY, "no memory for the grants of rank %d", p->rank);
    return;
  }
  p->grants[p->n_grants++] = (net_grant_t){.seq = seq, .first = first, .count = count};
}

void net_ctrl_records(sc_net_endpoint_t *ep, net_conn_t *c, const sc_net_rec_t *r) {
  net_peer_t *p = c->peer;
  /* On our outgoing control connection the receiver speaks of our sends, on an incoming one the sender of our receives. */
  int kind = c->dir == NET_OUT ? SC_NET_SEND : SC_NET_RECV;
  /* Its receive would wait for bytes that never come (it is never granted). */
  if (r->type == SC_NET_REC_SIZE && kind == SC_NET_RECV && net_eager(ep, r->a))
    net_fail(ep, SYMCOMM_ERR_REMOTE, "rank %d announced its message #%llu of %llu bytes without them: messages "
             "of 1 to %zu bytes come with their bytes (SYMCOMM_NET_EAGER_BYTES)", p->rank,
             (unsigned long long)r->seq, (unsigned long long)r->a, ep->cfg.eager_bytes);
  else if (r->type == SC_NET_REC_SIZE && kind == SC_NET_SEND && (r->b < 1 || r->b > 1024))
    net_fail(ep, SYMCOMM_ERR_REMOTE, "rank %d announced the size of its receive #%llu with a window of %llu "
             "(1 to 1024)", p->rank, (unsigned long long)r->seq, (unsigned long long)r->b);
  else if (r->type == SC_NET_REC_SIZE) {
    if (kind == SC_NET_SEND)
      p->peer_window = r->b;
    net_peer_size(ep, p, kind, r->seq, r->a, NULL);
  }
  else if (r->type == SC_NET_REC_EAGER && kind == SC_NET_RECV)
    net_peer_eager(ep, c, r->seq, r->a);
  else if (r->type == SC_NET_REC_GRANT && kind == SC_NET_SEND)
    net_peer_grant(ep, p, r->seq, r->a, r->b);
  else
    net_fail(ep, SYMCOMM_ERR_REMOTE, "rank %d sent a control record of type %u on its %s control connection",
             p->rank, r->type, c->dir == NET_OUT ? "outgoing" : "incoming");
}

/* ---- the turn's work for one peer */

/* Bytes that came eagerly go to their receive (m, at the head of the work),
 * once it has room for them; false: not yet. */
static bool net_place_eager(net_peer_t *p, sc_net_msg_t *m) {
  struct sc_net_msg_engine *e = &m->engine;
  if (e->eager == NULL)
    return false; /* not come yet */
  uint8_t *ptr = m->chunk_ptr(m, 0);
  if (ptr == NULL)
    return false;
  memcpy(ptr, e->eager, m->bytes);
  free(e->eager);
  e->eager = NULL;
  e->granted = e->done = 1;
  p->recvq.progress_ms = net_now_ms();
  m->chunk_done(m, 0);
  return true;
}

/* Grants chunks of the receives in order as there is room, and places the
 * bytes of small ones that came eagerly (also once the control connection
 * closed: what came before still counts). */
static void net_grant(sc_net_endpoint_t *ep, net_peer_t *p) {
  net_queue_t *q = &p->recvq;
  net_conn_t *ctrl = &p->in[0];
  sc_net_rec_t pending = {0};
  while (q->work_next != NULL && ep->failed == SYMCOMM_OK) {
    sc_net_msg_t *m = q->work_next;
    struct sc_net_msg_engine *e = &m->engine;
    if (e->seq >= q->size_sent)
      break;
    if (e->granted == e->nchunks) {
      q->work_next = e->next;
      continue;
    }
    if (net_eager(ep, m->bytes)) {
      if (!net_place_eager(p, m))
        break;
      continue;
    }
    if (ctrl->state != NET_CONN_OPEN || p->outstanding >= ep->cfg.window)
      break;
    uint8_t *ptr = m->chunk_ptr(m, e->granted);
    if (ptr == NULL)
      break;
    int s = 0;
    while (p->slots[s].m != NULL)
      s++;
    uint64_t offset = e->granted * ep->cfg.chunk_bytes;
    uint64_t left = m->bytes - offset;
    p->slots[s] = (net_slot_t){.m = m, .seq = e->seq, .chunk = e->granted, .offset = offset, .ptr = ptr,
                               .length = left < ep->cfg.chunk_bytes ? left : ep->cfg.chunk_bytes};
    if (pending.type == SC_NET_REC_GRANT && pending.seq == e->seq && pending.a + pending.b == e->granted) {
      pending.b++;
    } else {
      if (pending.type != 0)
        net_put_rec(ep, ctrl, SC_NET_REC_GRANT, pending.seq, pending.a, pending.b);
      pending = (sc_net_rec_t){.type = SC_NET_REC_GRANT, .seq = e->seq, .a = e->granted, .b = 1};
    }
    e->granted++;
    p->outstanding++;
  }
  if (pending.type != 0)
    net_put_rec(ep, ctrl, SC_NET_REC_GRANT, pending.seq, pending.a, pending.b);
}

/* The open data connection with the fewest bytes queued: one slow socket
 * holds back only what it already has. */
static net_conn_t *net_least_loaded(sc_net_endpoint_t *ep, net_peer_t *p) {
  net_conn_t *best = NULL;
  for (int i = 1; i <= ep->cfg.sockets; i++) {
    net_conn_t *c = &p->out[i];
    if (c->ring_count < c->ring_cap && (best == NULL || c->queued < best->queued))
      best = c;
  }
  return best;
}

static void net_dispatch(sc_net_endpoint_t *ep, net_peer_t *p) {
  for (int i = 0; i <= ep->cfg.sockets; i++)
    if (p->out[i].state != NET_CONN_OPEN)
      return;
  net_queue_t *q = &p->sendq;
  while (q->work_next != NULL) {
    sc_net_msg_t *m = q->work_next;
    struct sc_net_msg_engine *e = &m->engine;
    if (e->dispatched == e->nchunks) {
      q->work_next = e->next;
      continue;
    }
    if (!e->peer_known || e->dispatched >= e->granted)
      return;
    net_conn_t *c = net_least_loaded(ep, p);
    if (c == NULL)
      return;
    const uint8_t *ptr = m->chunk_ptr(m, e->dispatched);
    if (ptr == NULL)
      return;
    uint64_t offset = e->dispatched * ep->cfg.chunk_bytes;
    uint64_t left = m->bytes - offset;
    net_chunk_out_t *co = &c->ring[(c->ring_head + c->ring_count) % c->ring_cap];
    *co = (net_chunk_out_t){.ptr = ptr, .m = m,
                            .hdr = {.magic = SC_NET_CHUNK_MAGIC, .comm_id = ep->cfg.comm_id, .seq = e->seq,
                                    .chunk = e->dispatched, .offset = offset,
                                    .length = left < ep->cfg.chunk_bytes ? left : ep->cfg.chunk_bytes}};
    if (ep->fault_seq_after >= 0 && ep->chunks_sent == (uint64_t)ep->fault_seq_after) {
      co->hdr.seq++;
      SC_WARN(SC_NET, "%s: SYMCOMM_NET_FAULT=seq: chunk %llu of message #%llu to rank %d goes out as message #%llu",
              ep->name, (unsigned long long)co->hdr.chunk, (unsigned long long)e->seq, p->rank,
              (unsigned long long)co->hdr.seq);
    }
    ep->chunks_sent++;
    c->ring_count++;
    c->queued += sizeof(co->hdr) + co->hdr.length;
    e->dispatched++;
  }
}

void net_chunk_sent(sc_net_endpoint_t *ep, net_peer_t *p, net_chunk_out_t *co) {
  (void)ep;
  p->sendq.progress_ms = net_now_ms();
  co->m->engine.done++;
  co->m->chunk_done(co->m, co->hdr.chunk);
}

int net_chunk_claim(sc_net_endpoint_t *ep, net_conn_t *c, const sc_net_chunk_hdr_t *h, char *why, size_t len) {
  net_peer_t *p = c->peer;
  const net_slot_t *clash = NULL; /* the slot of that chunk, granted at another offset or length */
  bool header = h->magic == SC_NET_CHUNK_MAGIC, ours = h->comm_id == ep->cfg.comm_id;
  for (int s = 0; header && ours && s < ep->cfg.window; s++) {
    net_slot_t *sl = &p->slots[s];
    uint64_t seq = __atomic_load_n(&sl->seq, __ATOMIC_RELAXED);
    /* A claimed slot (its number UINT64_MAX until its landing is settled) is
     * no one's to claim, whatever number a header carries. */
    if (sl->m == NULL || seq == NET_SLOT_CLAIMED || seq != h->seq || sl->chunk != h->chunk)
      continue;
    if (sl->offset != h->offset || sl->length != h->length) {
      clash = sl;
      break;
    }
    /* Claimed: a second header naming the same chunk, on this connection or
     * another read at the same time, finds no slot. */
    if (__atomic_compare_exchange_n(&sl->seq, &seq, NET_SLOT_CLAIMED, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return s;
  }
  /* Only a failure pays for the sentence (this runs for every chunk). */
  char op[160];
  net_peer_op_name(p, op, sizeof(op));
  if (!header)
    snprintf(why, len, "%s: data connection %d brought bytes that are not a chunk header; nothing of them was written",
             op, c->index);
  else if (!ours)
    snprintf(why, len, "%s: data connection %d brought a chunk of communicator 0x%llx (this is 0x%llx); nothing of it was written",
             op, c->index, (unsigned long long)h->comm_id, (unsigned long long)ep->cfg.comm_id);
  else if (clash != NULL)
    snprintf(why, len, "%s: data connection %d brought message #%llu chunk %llu at offset %llu, %llu bytes, "
             "but that chunk was granted at offset %llu, %llu bytes; nothing of it was written",
             op, c->index, (unsigned long long)h->seq, (unsigned long long)h->chunk, (unsigned long long)h->offset,
             (unsigned long long)h->length, (unsigned long long)clash->offset, (unsigned long long)clash->length);
  else
    snprintf(why, len, "%s: data connection %d brought message #%llu chunk %llu (offset %llu, %llu bytes), "
             "which this rank did not grant (or another connection brought it too); nothing of it was written",
             op, c->index, (unsigned long long)h->seq, (unsigned long long)h->chunk, (unsigned long long)h->offset,
             (unsigned long long)h->length);
  return -1;
}

void net_chunk_landed(sc_net_endpoint_t *ep, net_peer_t *p, int slot) {
  (void)ep;
  net_slot_t *s = &p->slots[slot];
  sc_net_msg_t *m = s->m;
  uint64_t k = s->chunk;
  s->m = NULL;
  p->outstanding--;
  m->engine.done++;
  m->chunk_done(m, k);
}

/* Finished messages leave their queue from the head, in order. */
static void net_finish_heads(sc_net_endpoint_t *ep, net_queue_t *q) {
  sc_net_msg_t *m;
  while (ep->failed == SYMCOMM_OK && (m = q->head) != NULL) {
    struct sc_net_msg_engine *e = &m->engine;
    /* A send is over when its chunks left and the receiver said its size; a receive when its
     * chunks landed (the sender sent them: it agreed), or, with none, when the sender said 0. */
    bool peer_needed = m->kind == SC_NET_SEND || e->nchunks == 0;
    if (e->seq >= q->size_sent || e->done < e->nchunks || (peer_needed && !e->peer_known))
      return;
    q->head = e->next;
    if (q->head == NULL)
      q->tail = NULL;
    if (q->work_next == m)
      q->work_next = e->next;
    q->progress_ms = net_now_ms();
    m->finish(m, SYMCOMM_OK);
  }
}

/* Every connection of the pair is closed (or never came): nothing more can arrive. */
static bool net_peer_all_closed(sc_net_endpoint_t *ep, const net_peer_t *p) {
  bool in_all_closed = true, in_none = true;
  for (int i = 0; i <= ep->cfg.sockets; i++) {
    int so = p->out[i].state, si = p->in[i].state;
    if (so == NET_CONN_OPEN || so == NET_CONN_CONNECTING || si == NET_CONN_OPEN)
      return false;
    in_all_closed = in_all_closed && si == NET_CONN_CLOSED;
    in_none = in_none && si == NET_CONN_IDLE;
  }
  return in_all_closed || in_none;
}

static void net_deadlines(sc_net_endpoint_t *ep, net_peer_t *p, int64_t now, int64_t *wake_ms) {
  if (p->sendq.head == NULL && p->recvq.head == NULL)
    return;
  char op[160];
  if (p->closed_ms != 0) {
    int64_t last = p->closed_ms;
    if (p->sendq.head != NULL && p->sendq.progress_ms > last)
      last = p->sendq.progress_ms;
    if (p->recvq.head != NULL && p->recvq.progress_ms > last)
      last = p->recvq.progress_ms;
    if (net_peer_all_closed(ep, p) || now >= last + SC_NET_CLOSE_GRACE_MS) {
      net_peer_op_name(p, op, sizeof(op));
      net_fail(ep, SYMCOMM_ERR_REMOTE, "%s: %s", op, p->closed_why);
      return;
    }
    if (last + SC_NET_CLOSE_GRACE_MS < *wake_ms)
      *wake_ms = last + SC_NET_CLOSE_GRACE_MS;
  }
  if (ep->cfg.timeout_ms < 0)
    return;
  net_queue_t *qs[2] = {&p->recvq, &p->sendq};
  for (int i = 0; i < 2; i++) {
    if (qs[i]->head == NULL)
      continue;
    int64_t due = qs[i]->progress_ms + ep->cfg.timeout_ms;
    if (now >= due) {
      const struct sc_net_msg_engine *e = &qs[i]->head->engine;
      net_msg_name(qs[i]->head, op, sizeof(op));
      net_fail(ep, SYMCOMM_ERR_TIMEOUT, "%s: nothing moved for %.1f s (SYMCOMM_TIMEOUT; %llu of %llu chunks "
               "done, %llu granted%s): the rank is alive but silent (stopped, or its network is down), or it "
               "never posted the other side", op, (double)(now - qs[i]->progress_ms) / 1000.0,
               (unsigned long long)e->done, (unsigned long long)e->nchunks, (unsigned long long)e->granted,
               e->peer_known ? "" : ", its size not heard yet");
      return;
    }
    if (due < *wake_ms)
      *wake_ms = due;
  }
}

void net_peer_progress(sc_net_endpoint_t *ep, net_peer_t *p, int64_t now, int64_t *wake_ms) {
  net_peer_connect(ep, p, now, wake_ms);
  net_send_sizes(ep, &p->sendq, &p->out[0]);
  net_send_sizes(ep, &p->recvq, &p->in[0]);
  net_grant(ep, p);
  if (ep->failed == SYMCOMM_OK)
    net_dispatch(ep, p);
  /* Control records go at once; chunks go when the turn's poll finds their
   * data connections writable, with the other data connections' bytes, on
   * the helper threads (net_io.c). */
  if (ep->failed == SYMCOMM_OK && p->out[0].state == NET_CONN_OPEN && net_conn_wants_write(&p->out[0]))
    net_conn_flush(ep, &p->out[0]);
  if (ep->failed == SYMCOMM_OK && p->in[0].state == NET_CONN_OPEN && net_conn_wants_write(&p->in[0]))
    net_conn_flush(ep, &p->in[0]);
  if (ep->failed == SYMCOMM_OK)
    net_finish_heads(ep, &p->sendq);
  if (ep->failed == SYMCOMM_OK)
    net_finish_heads(ep, &p->recvq);
  if (ep->failed == SYMCOMM_OK)
    net_deadlines(ep, p, now, wake_ms);
}

void net_msgs_finish_all(sc_net_endpoint_t *ep, sc_result_t res) {
  for (int r = 0; r < ep->cfg.nranks; r++) {
    net_peer_t *p = &ep->peers[r];
    if (!p->remote)
      continue;
    memset(p->slots, 0, (size_t)ep->cfg.window * sizeof(*p->slots));
    p->outstanding = 0;
    for (int k = 0; k < 2; k++) {
      net_queue_t *q = k == 0 ? &p->recvq : &p->sendq;
      sc_net_msg_t *m = q->head;
      q->head = q->tail = q->size_next = q->work_next = NULL;
      for (size_t i = 0; i < q->n_early; i++) {
        free(q->early[i].data);
        q->early[i].data = NULL;
      }
      while (m != NULL) {
        sc_net_msg_t *next = m->engine.next;
        free(m->engine.eager);
        m->engine.eager = NULL;
        m->finish(m, res);
        m = next;
      }
    }
  }
}
