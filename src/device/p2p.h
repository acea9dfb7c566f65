/* The P2P program: a batch of sends and receives between ranks of one host,
 * over each rank's p2p window. Each group of `lanes` blocks of a launch runs
 * the ops of one peer (op.block), its sends and its receives advancing
 * together; the group's first block is the lead, the others its lanes.
 *
 * Memory. Every rank has a p2p window (mapped by its host's other ranks): a
 * pad, then one eager slot per peer (device/p2p_eager.h), then one staging
 * ring per peer for the data that peer sends it: `slots` chunks of
 * `chunk_bytes`, slots / lanes of them for each lane. In rank R's pad, the
 * lines about peer P (index = P's local rank) are:
 *   ready[l]   chunks P has put in lane l of R's ring for P   written by P
 *   ack[l]     chunks of lane l of R's that P has taken out   written by P
 *   cts        receives P has posted for R's sends      written by P
 *   cts_bytes  size of P's newest posted receive         written by P
 *   err_bytes  size of P's send when P refused R's receive   written by P
 *   gave_up    why P marked the pair failed (a relay mark)   written by P
 *   eager_ack  R's eager messages P took (or refused)       written by P
 *   sends_done, recvs_done   R's own completed sends to / receives from P
 * Counters only grow; SC_SLOT_ERROR in one marks the exchange as failed.
 * R's device memory (the descriptor, sc_p2p_desc_t) holds its tickets, its
 * lanes' chunk counters and the message in progress of each pair and
 * direction (sc_p2p_queue_t).
 *
 * A message. The n-th send from S to R that runs meets the n-th receive from
 * S that runs on R: an op's lead takes its number n (`msg`) from the queue's
 * ticket when it starts, so the same arguments launched again exchange the
 * next message. It runs in `parts` parts (one per lane_bytes, at most
 * `lanes`): part p on lane p's block and lane p's share of the ring, in
 * max(1, ceil(part bytes / chunk_bytes)) chunks numbered on from that lane's
 * earlier chunks (queue.chunks[p], read once the message's turn has come).
 *   receive: post cts_bytes, then cts = msg + 1 in S's pad (rendezvous); for
 *            each chunk g of lane p: wait ready[p] >= g + 1, copy it out of
 *            the lane's slot, set ack[p] = g + 1 in S's pad.
 *   send:    wait cts >= msg + 1; if cts_bytes differs from this send's size,
 *            put err_bytes and ready |= ERROR in R's pad and fail (R's wait
 *            sees the error and fails too: both sides learn, naming both
 *            sizes); for each chunk g of lane p: wait ack[p] >= g + 1 - the
 *            lane's slots (the slot is free), copy into R's slot, set
 *            ready[p] = g + 1.
 * A message of at most eager_bytes goes eagerly instead: no rendezvous, no
 * ring, its data pushed with flags into the receiver's eager slot for the
 * sender, and the send ends there (device/p2p_eager.h, which also says how
 * sizes that differ across the threshold fail, and when the sender learns).
 * A receive into a window (its id and offset in the communicator's window
 * table) says so with its size; the send then copies straight into that
 * buffer, once, and raises each lane's ready past its part's chunks at once.
 * Every store that another rank waits for is followed by a ring of that
 * rank's doorbell. Operations on one pair and direction run in number order
 * even from different streams: each first waits for the previous one to
 * finish (sends_done / recvs_done), so the ring's order is never broken.
 * When a block fails, the pairs it left half-done are marked failed on both
 * sides, so that later use fails at once instead of hanging.
 *
 * Lanes. A message of one part is the lead's alone. Of several, the lead
 * publishes it once its turn has come (after the rendezvous, with the
 * receiver's window buffer for a send) and runs part 0; lane p claims the
 * queue's lane ticket p as the lead claims its own, so its n-th claim is the
 * n-th message, waits for that message to be published, checks it is its own
 * launch's op (launches on one pair and direction that the host did not
 * order would otherwise mix their parts: SC_DEV_P2P_CROSSED), and runs part
 * p. Whichever part ends last marks the message done. No block waits for a
 * later block of its launch (the simulated backend runs them one after
 * another): lanes wait for their lead, and the host never puts two ops of one
 * pair and direction in a launch with lanes (the lead's second would wait for
 * its first's lanes). A launch whose messages are all of one part has groups
 * of one block (args.width): its leads take the lanes' tickets for them.
 *
 * Threads: the leader claims, waits and stores flags; its verdicts reach the
 * block through sc_dev_share, and all threads copy. */
#ifndef SC_DEVICE_P2P_H
#define SC_DEVICE_P2P_H

#include "device/p2p_eager.h"
#include "device/p2p_layout.h"
#include "device/runtime.h"
#include "device/status.h"

enum {
  SC_P2P_PHASE_CLAIM = 0,
  SC_P2P_PHASE_ORDER,     /* the lead: the previous message of the queue is done */
  SC_P2P_PHASE_HANDSHAKE, /* the lead: the rendezvous */
  SC_P2P_PHASE_PUBLISHED, /* a lane: its message is published */
  SC_P2P_PHASE_EAGER,     /* an eager receive: its lines awaited (device/p2p_eager.h) */
  SC_P2P_PHASE_CHUNKS,
  SC_P2P_PHASE_FINISH
};

/* A block's progress through its ops of one direction (they run one after
 * another), in the program's local variables: never in its arguments. */
typedef struct sc_p2p_cursor {
  uint32_t op;    /* the current op; nops once none is left */
  uint32_t phase;
  uint64_t msg;   /* its message number (the leader's) */
  uint32_t flag;  /* an eager message's LL flag, sc_ll_flag(msg) (every thread's) */
  uint64_t base;  /* its part's first chunk on the lane */
  uint64_t chunk; /* chunks done */
  uint64_t at, len; /* its part of the message */
  uint32_t parts;
  int eager;      /* the message goes eagerly (its size, device/p2p_eager.h) */
  char *direct;   /* send: the receiver's window buffer, when it asked for one */
} sc_p2p_cursor_t;

/* What a block works with, read from the descriptor once: the protocol's
 * stores and atomics carry a memory clobber, after which the compiler would
 * read the descriptor's fields again, each read a trip to memory (a group
 * has one peer, so its pads and slots are known from the start). */
typedef struct sc_p2p_here {
  sc_p2p_pad_t *my_pad, *peer_pad;
  sc_p2p_peer_lines_t *mine, *theirs; /* my lines about the peer, the peer's about me */
  uint64_t *slot_here;  /* the peer's eager slot in my window */
  uint64_t *slot_there; /* mine in the peer's */
  char *ring_here;      /* the peer's ring in my window */
  char *ring_there;     /* mine in the peer's */
  uint64_t chunk_bytes, lane_bytes, eager_bytes;
  uint32_t slots, lanes, spl; /* spl: slots of a lane */
} sc_p2p_here_t;

SC_DEV_FN void sc_p2p_here_read(const sc_p2p_args_t *a, int peer, sc_p2p_here_t *h) {
  const sc_p2p_desc_t *d = a->desc;
  int me = d->local_rank;
  h->my_pad = a->my_pad; /* d->pads[me], without waiting for `me` */
  h->peer_pad = d->pads[peer];
  h->mine = &h->my_pad->peer[peer];
  h->theirs = &h->peer_pad->peer[me];
  h->slot_here = sc_p2p_eager_slot(d, h->my_pad, peer);
  h->slot_there = sc_p2p_eager_slot(d, h->peer_pad, me);
  h->chunk_bytes = d->chunk_bytes;
  h->lane_bytes = d->lane_bytes;
  h->eager_bytes = d->eager_bytes;
  h->slots = d->slots;
  h->lanes = d->lanes;
  h->spl = d->lanes > 0 ? d->slots / d->lanes : 0;
  uint64_t ring_bytes = d->chunk_bytes * d->slots;
  h->ring_here = (char *)h->my_pad + d->ring_offset + (uint64_t)peer * ring_bytes;
  h->ring_there = (char *)h->peer_pad + d->ring_offset + (uint64_t)me * ring_bytes;
}

SC_DEV_FN uint64_t sc_p2p_count(uint64_t line) { return line & ~SC_SLOT_ERROR; }

/* The first op at or after `from` of this group and kind (nops: none). */
SC_DEV_FN uint32_t sc_p2p_next(const sc_p2p_args_t *a, uint32_t group, int kind, uint32_t from) {
  while (from < a->nops && (a->ops[from].block != group || a->ops[from].kind != kind))
    from++;
  return from;
}

/* Which op of the launch a published message is, as far as a lane can tell
 * (its own op must give the same). */
SC_DEV_FN uint64_t sc_p2p_print(const sc_p2p_args_t *a, uint32_t i) {
  const sc_p2p_op_t *op = &a->ops[i];
  uint64_t h = (uint64_t)(uintptr_t)op->buf * 0x9e3779b97f4a7c15ull;
  h ^= (op->bytes + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
  h ^= ((uint64_t)i << 40 | (uint64_t)op->window << 8 | op->kind) * 0x94d049bb133111ebull;
  return h ^ op->offset;
}

/* A ticket, widened to 64 bits against the queue's done counter, which is
 * within 2^31 of it (ahead of it only for a lane whose message ended). */
SC_DEV_FN uint64_t sc_p2p_widen(uint32_t t, uint64_t done) {
  return done + (uint64_t)(int64_t)(int32_t)(t - (uint32_t)done);
}

/* The number of ticket t of a queue whose done counter reads `done`. */
SC_DEV_FN uint64_t sc_p2p_number(uint32_t t, uint64_t done) {
  return sc_p2p_widen(t, sc_p2p_count(done));
}

/* A number for the op starting now on a queue: its ticket, widened. Only
 * this GPU's blocks take tickets and write done: this GPU's scope. */
SC_DEV_FN uint64_t sc_p2p_claim(uint32_t *tickets, const uint64_t *done) {
  uint32_t t = sc_dev_ticket_own32(tickets);
  return sc_p2p_number(t, sc_dev_load_own(done));
}

/* The number the next op of a pair and direction would take (for a
 * sentence: it takes none). */
SC_DEV_FN uint64_t sc_p2p_peek(const sc_p2p_desc_t *d, const sc_p2p_op_t *op) {
  const sc_p2p_queue_t *q = &d->pair[op->peer].queue[op->kind];
  const sc_p2p_peer_lines_t *mine = &d->pads[d->local_rank]->peer[op->peer];
  int send = op->kind == SC_P2P_SEND;
  uint64_t done = sc_p2p_count(sc_dev_load(send ? &mine->sends_done.value : &mine->recvs_done.value));
  return sc_p2p_widen(sc_dev_load32(&q->tickets), done);
}

SC_DEV_FN void sc_p2p_fail(const sc_p2p_desc_t *d, sc_dev_error_t *err, int kind,
                           const sc_p2p_op_t *op, uint64_t msg, int64_t c) {
  err->kind = kind;
  err->a = d->ranks[op->peer];
  err->b = kind == SC_DEV_SIZE_MISMATCH ? (int64_t)op->bytes : (int64_t)msg;
  err->c = c;
  err->d = op->kind;
  err->e = 0;
}

/* Marks a pair and direction that an op left half-done as failed, here and
 * at the peer (atomically: other streams of the pair may store to the same
 * lines), on every lane, and tells the peer why (`mark`, 0: nothing to
 * relay). */
SC_DEV_FN void sc_p2p_poison(const sc_p2p_desc_t *d, int peer, int kind, uint64_t mark) {
  sc_p2p_pad_t *my_pad = d->pads[d->local_rank], *peer_pad = d->pads[peer];
  sc_p2p_peer_lines_t *mine = &my_pad->peer[peer];
  sc_p2p_peer_lines_t *theirs = &peer_pad->peer[d->local_rank];
  uint32_t lanes = d->lanes < SC_P2P_MAX_LANES ? d->lanes : SC_P2P_MAX_LANES;
  if (mark != 0)
    sc_dev_store(&theirs->gave_up.value, mark); /* before the marks the peer sees */
  if (kind == SC_P2P_SEND) {
    sc_dev_or(&mine->sends_done.value, SC_SLOT_ERROR);
    for (uint32_t l = 0; l < lanes; l++)
      sc_dev_or(&theirs->ready[l].value, SC_SLOT_ERROR);
  } else {
    sc_dev_or(&mine->recvs_done.value, SC_SLOT_ERROR);
    for (uint32_t l = 0; l < lanes; l++)
      sc_dev_or(&theirs->ack[l].value, SC_SLOT_ERROR);
    sc_dev_or(&theirs->cts.value, SC_SLOT_ERROR);
  }
  sc_dev_ring(&my_pad->bell);
  sc_dev_ring(&peer_pad->bell);
}

/* The block gave up: each direction with ops left marks its pair failed (leader). */
SC_DEV_FN void sc_p2p_poison_pending(const sc_p2p_args_t *a, const sc_p2p_cursor_t *c, int peer,
                                     uint64_t mark) {
  for (int kind = SC_P2P_SEND; kind <= SC_P2P_RECV; kind++)
    if (c[kind].op < a->nops)
      sc_p2p_poison(a->desc, peer, kind, mark);
}

/* The pair is marked failed: this rank's own stop if it has one, else what
 * the peer relayed (the stop it heard of, as if heard here), else the pair's
 * earlier failure. Returns -1 (err filled). */
SC_DEV_FN int sc_p2p_peer_failed(sc_dev_ctx_t *ctx, const sc_p2p_desc_t *d,
                                 const sc_p2p_peer_lines_t *mine, const sc_p2p_op_t *op,
                                 uint64_t msg, sc_dev_error_t *err) {
  if (sc_dev_stopped(ctx)) {
    sc_p2p_fail(d, err, SC_DEV_ABORTED, op, msg, (int64_t)op->bytes);
    return -1;
  }
  sc_p2p_fail(d, err, SC_DEV_PEER_FAILED, op, msg, 0);
  int timed_out, waited_for;
  sc_dev_relay_read(sc_dev_load(&mine->gave_up.value), err, &timed_out, &waited_for);
  return -1;
}

/* A receive finds ERROR in ready: the sender refused this message's size
 * (it left its own size in err_bytes), or the pair failed before. */
SC_DEV_FN int sc_p2p_refused(sc_dev_ctx_t *ctx, const sc_p2p_desc_t *d,
                             const sc_p2p_peer_lines_t *mine, const sc_p2p_op_t *op, uint64_t msg,
                             sc_dev_error_t *err) {
  /* A refusal for size carries the sender's size with the ERROR bit set;
   * anything else means the sender failed for another reason. */
  uint64_t refusal = sc_dev_load(&mine->err_bytes.value);
  if (!(refusal & SC_SLOT_ERROR))
    return sc_p2p_peer_failed(ctx, d, mine, op, msg, err);
  sc_p2p_fail(d, err, SC_DEV_SIZE_MISMATCH, op, msg, (int64_t)(refusal & ~SC_SLOT_ERROR));
  return -1;
}

/* ERROR in a send's cts or eager_ack (leader): the receiver refused this
 * message for its size (device/p2p_eager.h), or the pair failed. Returns -1
 * (err filled). */
SC_DEV_FN int sc_p2p_send_failed(sc_dev_ctx_t *ctx, const sc_p2p_desc_t *d,
                                 const sc_p2p_peer_lines_t *mine, const sc_p2p_op_t *op,
                                 uint64_t msg, sc_dev_error_t *err) {
  uint64_t want = 0;
  if (!sc_dev_stopped(ctx) && sc_p2p_eager_refused(mine, msg, &want)) {
    sc_p2p_fail(d, err, SC_DEV_SIZE_MISMATCH, op, msg, (int64_t)want);
    return -1;
  }
  return sc_p2p_peer_failed(ctx, d, mine, op, msg, err);
}

/* The leader's verdict on the block: 1 go on, 0 wait, -1 failed. */
#define SC_P2P_VERDICT(ctx, r)                                                                     \
  do {                                                                                             \
    int verdict_ = sc_dev_share((ctx), (r));                                                       \
    if (verdict_ <= 0)                                                                             \
      return verdict_ < 0 ? -1 : moved;                                                            \
  } while (0)

/* The sender's handshake (leader): the receive is posted and agrees on the
 * size; where it asked for its window, c->direct is that buffer. */
SC_DEV_FN int sc_p2p_send_handshake(sc_dev_ctx_t *ctx, const sc_p2p_desc_t *d,
                                    const sc_p2p_peer_lines_t *mine, sc_p2p_peer_lines_t *theirs,
                                    const sc_p2p_op_t *op, sc_p2p_cursor_t *c,
                                    sc_dev_error_t *err) {
  uint64_t cts = sc_dev_load(&mine->cts.value);
  if (cts & SC_SLOT_ERROR)
    return sc_p2p_send_failed(ctx, d, mine, op, c->msg, err);
  if (cts < c->msg + 1)
    return 0;
  /* What the receiver stored before cts, which the acquire above made visible. */
  uint64_t want = sc_dev_load_poll(&mine->cts_bytes.value);
  if (want != op->bytes) {
    sc_dev_store(&theirs->err_bytes.value, op->bytes | SC_SLOT_ERROR);
    sc_p2p_fail(d, err, SC_DEV_SIZE_MISMATCH, op, c->msg, (int64_t)want);
    return -1; /* the block poisons the pair: the receiver sees ERROR in ready */
  }
  uint64_t window = sc_dev_load_poll(&mine->cts_window.value);
  if (window != 0) {
    uint64_t offset = sc_dev_load_poll(&mine->cts_offset.value);
    const sc_dev_window_t *w = window <= SC_MAX_WINDOWS ? &d->windows[window - 1] : 0;
    char *base = w != 0 && w->bytes > 0 && w->peer != 0 ? (char *)w->peer[d->ranks[op->peer]] : 0;
    if (base == 0 || offset > w->bytes || op->bytes > w->bytes - offset) {
      err->kind = SC_DEV_BAD_ARGS; /* a window freed while still in use */
      err->a = SC_PROGRAM_P2P;
      return -1;
    }
    c->direct = base + offset;
  }
  return 1;
}

/* An eager receive's verdict: the pair is marked failed, and the block
 * must look at the slot once more before it may fail (below). */
#define SC_P2P_LOOK_AGAIN 2
/* ... and its leader's word that the message's header is there with its
 * size, a data line not yet: look again at once (sc_p2p_eager_take). */
#define SC_P2P_QUICK_LOOK 3

/* An eager receive's verdict when its message was not there whole and of
 * its size at every thread's look (leader), from the header's size (`sent`,
 * UINT64_MAX: not there yet): not yet (0), or failed (-1: another size,
 * refused here; or the pair failed). A message that comes whole is taken
 * even if the pair failed since: it was put, and its send ended
 * (device/p2p_eager.h). The look came before the load of the pair's mark,
 * so a message put just before the sender failed a later op may have
 * landed between them: on a first sight of the mark the block acquires and
 * looks again (SC_P2P_LOOK_AGAIN); after that (`looked_again`) it fails
 * (sc_p2p_eager_take's quick looks at a message whose header is there may
 * come first). */
SC_DEV_FN int sc_p2p_eager_verdict(sc_dev_ctx_t *ctx, const sc_p2p_desc_t *d,
                                   sc_p2p_peer_lines_t *mine, sc_p2p_peer_lines_t *theirs,
                                   const sc_p2p_op_t *op, uint64_t msg, uint64_t sent,
                                   int looked_again, sc_dev_error_t *err) {
  if (sent != UINT64_MAX && sent != op->bytes) {
    sc_p2p_eager_refuse(theirs, op->bytes, msg);
    sc_p2p_fail(d, err, SC_DEV_SIZE_MISMATCH, op, msg, (int64_t)sent);
    return -1;
  }
  sc_dev_test_point(SC_TEST_POINT_EAGER_MARK);
  if (sc_dev_load_poll(&mine->ready[0].value) & SC_SLOT_ERROR) {
    /* The mark, and what the sender put before it (the refusal's size, the
     * message's lines), seen by the look that follows the block's share. */
    sc_dev_acquire();
    return looked_again ? sc_p2p_refused(ctx, d, mine, op, msg, err) : SC_P2P_LOOK_AGAIN;
  }
  return 0;
}

/* An eager receive takes its message if it came whole (every thread): the
 * block's verdict; on 1 the data is in the buffer and the ack on its way.
 * A verdict of 0 or -1 leaves the buffer as it was, and -1's stores (a
 * refusal) may be made again by a later look. */
SC_DEV_FN int sc_p2p_eager_take(sc_dev_ctx_t *ctx, const sc_p2p_desc_t *d, const sc_p2p_here_t *h,
                                const sc_p2p_op_t *op, const sc_p2p_cursor_t *c,
                                sc_dev_error_t *err) {
  int leader = sc_dev_leader(ctx), r = 0;
  uint64_t sent = UINT64_MAX, *slot = h->slot_here, v;
  /* The header first, alone: one line, the quickest look. */
  for (int i = 0; leader && i < SC_DEV_QUICK_POLLS; i++)
    if (sc_ll_read(sc_p2p_eager_line(slot, 0), c->flag, &v))
      break;
  /* Whole and of this size: taken after the one vote (a share fewer on the
   * way of every small message: 0.2 us of 7 on the proxy, session 23 k3).
   * Else a quick look again, or the leader's verdict: one share for
   * either. */
  int quick = 0, looked_again = 0;
  while (!sc_p2p_eager_arrived(ctx, slot, op->bytes, c->flag, &sent)) {
    /* Its header is there with this size, a data line not yet: the lines
     * are stores of their own, on their way; look again at once rather
     * than wait for the bell (from 16 bytes, about 1.2 us a call on
     * NVLink, docs/PERFORMANCE.md session 24). The simulated backend never
     * does. */
    if (leader)
      r = quick < SC_DEV_QUICK_POLLS && sent == op->bytes
              ? SC_P2P_QUICK_LOOK
              : sc_p2p_eager_verdict(ctx, d, h->mine, h->theirs, op, c->msg, sent, looked_again, err);
    r = sc_dev_share(ctx, r);
    if (r == SC_P2P_QUICK_LOOK) {
      quick++;
      continue;
    }
    if (r != SC_P2P_LOOK_AGAIN)
      return r;
    looked_again = 1;
  }
  sc_p2p_eager_copy(ctx, slot, op->buf, op->bytes);
  sc_dev_sync(ctx);
  if (leader) {
    /* The slot is read: the sender may reuse it. No fence: nothing this
     * rank wrote must reach the sender first. Relaxed, after the block-wide
     * sync: each thread's loads of the slot feed its stores to the buffer
     * before that sync, which keeps them ahead of the ack in practice (the
     * PTX model alone does not promise it). */
    sc_dev_store_relaxed(&h->theirs->eager_ack.value, c->msg + 1);
    sc_dev_ring(&h->peer_pad->bell);
  }
  return 1;
}

/* A lane waits for its message (leader): published (1), not yet (0), or failed (-1: the pair failed, or the message
 * published under its number is another launch's op). */
SC_DEV_FN int sc_p2p_lane_wait(sc_dev_ctx_t *ctx, const sc_p2p_args_t *a, const sc_p2p_queue_t *q,
                               const sc_p2p_peer_lines_t *mine, const uint64_t *done,
                               sc_p2p_cursor_t *c, sc_dev_error_t *err) {
  const sc_p2p_desc_t *d = a->desc;
  const sc_p2p_op_t *op = &a->ops[c->op];
  uint64_t go = sc_dev_load_own_acquire(&q->go);
  if (go == c->msg + 1 && sc_dev_load_own(&q->print) == sc_p2p_print(a, c->op))
    return 1;
  uint64_t v = sc_dev_load_own_acquire(done);
  if (v & SC_SLOT_ERROR)
    return sc_p2p_peer_failed(ctx, d, mine, op, c->msg, err);
  if (go < c->msg + 1 && sc_p2p_count(v) <= c->msg)
    return 0;
  /* Published as another op, or ended without this part: another launch's. */
  sc_p2p_fail(d, err, SC_DEV_P2P_CROSSED, op, c->msg, (int64_t)op->bytes);
  return -1;
}

/* A part ended (leader): the lane's chunks counted, and the message marked
 * done by whichever part ends last. */
SC_DEV_FN void sc_p2p_part_done(sc_p2p_queue_t *q, uint32_t lane, const sc_p2p_cursor_t *c,
                                int send, uint64_t bytes, uint64_t nchunks, uint64_t *done,
                                sc_p2p_pad_t *my_pad) {
  if (c->eager && send) { /* put, not acked yet: the next send on the queue waits for the ack */
    sc_dev_store_own(&q->eager_unacked, c->msg + 1);
    sc_dev_store_own(&q->eager_unacked_bytes, bytes);
    sc_dev_store_own_release(done, c->msg + 1);
    sc_dev_ring(&my_pad->bell);
    return;
  }
  if (c->eager) { /* one part, no ring: nothing another block reads is ordered by done */
    sc_dev_store_own(done, c->msg + 1);
    sc_dev_ring(&my_pad->bell);
    return;
  }
  sc_dev_store_own(&q->chunks[lane], c->base + nchunks); /* before the count's release */
  if (c->parts > 1 && sc_dev_count_down_own32(&q->parts_left) != 1)
    return;
  sc_dev_store_own_release(done, c->msg + 1); /* only this GPU's blocks read it */
  sc_dev_ring(&my_pad->bell);
}

/* ERROR in cts or eager_ack when a send's turn came (leader): the receiver
 * refused the pair's last eager message, whose send ended once put, for its
 * size (device/p2p_eager.h): this op fails naming that message and both
 * sizes; or this message was refused, or the pair failed. Returns -1 (err
 * filled). */
SC_DEV_FN int sc_p2p_earlier_refused(sc_dev_ctx_t *ctx, const sc_p2p_desc_t *d,
                                     const sc_p2p_peer_lines_t *mine, const sc_p2p_queue_t *q,
                                     const sc_p2p_op_t *op, uint64_t msg, sc_dev_error_t *err) {
  uint64_t unacked = sc_dev_load_own(&q->eager_unacked), want = 0;
  if (unacked != 0 && !sc_dev_stopped(ctx) && sc_p2p_eager_refused(mine, unacked - 1, &want)) {
    sc_p2p_fail(d, err, SC_DEV_SIZE_MISMATCH, op, unacked - 1, (int64_t)want);
    err->b = (int64_t)sc_dev_load_own(&q->eager_unacked_bytes);
    err->e = (int64_t)unacked; /* an earlier message's: its number + 1 */
    return -1;
  }
  return sc_p2p_send_failed(ctx, d, mine, op, msg, err);
}

/* A send's turn came (leader): the pair's last eager message, put, must be
 * acked before this one touches the slot the receiver reads it from; and
 * the pair must not have failed at the receiver since (which a send that
 * ends at its put would not otherwise see). 1 go on, 0 wait, -1 failed.
 * cts first: the receiver stores its refusal before it marks cts failed. */
SC_DEV_FN int sc_p2p_earlier_acked(sc_dev_ctx_t *ctx, const sc_p2p_desc_t *d,
                                   const sc_p2p_peer_lines_t *mine, const sc_p2p_queue_t *q,
                                   const sc_p2p_op_t *op, const sc_p2p_cursor_t *c,
                                   sc_dev_error_t *err) {
  uint64_t unacked = sc_dev_load_own(&q->eager_unacked); /* done's acquire ordered it */
  uint64_t cts = sc_dev_load(&mine->cts.value);
  uint64_t ack = sc_dev_load(&mine->eager_ack.value);
  if ((cts | ack) & SC_SLOT_ERROR)
    return sc_p2p_earlier_refused(ctx, d, mine, q, op, c->msg, err);
  return ack >= unacked;
}

/* A rendezvous receive waits for its first chunk (leader of lane 0): the
 * sender may have gone eagerly with another size, its send ended at the put
 * (device/p2p_eager.h). Its header in the slot is refused as a sender
 * refuses a receive of another size (its size in err_bytes, ERROR in every
 * lane's ready, so that this receive's lanes fail naming both sizes too),
 * with a refusal in eager_ack for the sender's next op: -1 (err filled).
 * 0: no such header, the wait goes on. */
SC_DEV_FN int sc_p2p_eager_instead(const sc_p2p_desc_t *d, const sc_p2p_here_t *h,
                                   const sc_p2p_op_t *op, uint64_t msg, sc_dev_error_t *err) {
  if (h->eager_bytes == 0)
    return 0; /* no send writes a header */
  uint64_t sent = sc_p2p_eager_sent(h->slot_here, sc_ll_flag(msg));
  if (sent == UINT64_MAX || sent == op->bytes)
    return 0; /* none yet, or a rendezvous send's of this size */
  sc_dev_store(&h->mine->err_bytes.value, sent | SC_SLOT_ERROR);
  for (uint32_t l = 0; l < h->lanes && l < SC_P2P_MAX_LANES; l++)
    sc_dev_or(&h->mine->ready[l].value, SC_SLOT_ERROR);
  sc_p2p_eager_refuse(h->theirs, op->bytes, msg);
  sc_p2p_fail(d, err, SC_DEV_SIZE_MISMATCH, op, msg, (int64_t)sent);
  return -1;
}

/* A launch of groups of one block claimed a message (every thread, thread t
 * for lane t + 1: one warp's instruction in blocks of 128 threads and more,
 * where the leader alone issued 31 one after another): no lane comes for its
 * ticket, so each lane's ticket is skipped, that the lanes' n-th claims stay
 * the n-th messages. With the leader's 31, the start of a small batch up to
 * its put took 1.6-1.7 us, 1.26 with one lane (no skips); with this and the
 * one fence of sc_p2p_eager_start, 1.27-1.32 (2 H200s, docs/PERFORMANCE.md
 * session 27). */
SC_DEV_FN void sc_p2p_skip_lanes(sc_dev_ctx_t *ctx, const sc_p2p_here_t *h, sc_p2p_queue_t *q) {
  uint32_t lanes = h->lanes < SC_P2P_MAX_LANES ? h->lanes : SC_P2P_MAX_LANES;
  for (uint32_t l = 1 + sc_dev_thread(ctx); l < lanes; l += sc_dev_threads(ctx))
    sc_dev_skip_own32(&q->lane_tickets[l]);
}

/* Advances the cursor of one direction as far as it can go without waiting,
 * on every thread alike. Returns 1 if it moved, 0 if it must wait, -1 on
 * failure (err filled by the leader). */
SC_DEV_FN int sc_p2p_advance(sc_dev_ctx_t *ctx, const sc_p2p_args_t *a, const sc_p2p_here_t *h,
                             uint32_t group, uint32_t lane, int kind, sc_p2p_cursor_t *c,
                             sc_dev_error_t *err) {
  sc_p2p_desc_t *d = a->desc;
  int leader = sc_dev_leader(ctx);
  int send = kind == SC_P2P_SEND;
  int moved = 0;
  sc_p2p_pad_t *my_pad = h->my_pad, *peer_pad = h->peer_pad;
  sc_p2p_peer_lines_t *mine = h->mine, *theirs = h->theirs;
  uint64_t *done = send ? &mine->sends_done.value : &mine->recvs_done.value;
  uint32_t spl = h->spl;
  while (c->op < a->nops) {
    const sc_p2p_op_t *op = &a->ops[c->op];
    sc_p2p_queue_t *q = &d->pair[op->peer].queue[kind];
    uint64_t nchunks = sc_p2p_chunks(c->len, h->chunk_bytes);
    int r = 1;
    if (c->phase == SC_P2P_PHASE_CLAIM) {
      c->parts = sc_p2p_parts(op->bytes, h->lane_bytes, h->lanes);
      sc_p2p_part(op->bytes, lane, c->parts, &c->at, &c->len);
      c->chunk = 0;
      c->direct = 0;
      c->eager = sc_p2p_eager(op->bytes, h->eager_bytes);
      if (leader)
        c->msg = sc_p2p_claim(lane == 0 ? &q->tickets : &q->lane_tickets[lane], done);
      if (a->width == 1)
        sc_p2p_skip_lanes(ctx, h, q);
      /* Every thread puts or checks some of an eager message's lines. */
      if (c->eager)
        c->flag = (uint32_t)sc_dev_share(ctx, (int)sc_ll_flag(c->msg));
      if (lane > 0 && lane >= c->parts) { /* the ticket taken, nothing to move */
        c->op = sc_p2p_next(a, group, kind, c->op + 1);
        moved = 1;
        continue;
      }
      c->phase = lane == 0 ? SC_P2P_PHASE_ORDER : SC_P2P_PHASE_PUBLISHED;
    } else if (c->phase == SC_P2P_PHASE_ORDER) {
      if (leader) {
        uint64_t v = sc_dev_load_own_acquire(done);
        r = (v & SC_SLOT_ERROR) ? sc_p2p_peer_failed(ctx, d, mine, op, c->msg, err)
                                : v >= c->msg;
        if (r == 1 && send)
          r = sc_p2p_earlier_acked(ctx, d, mine, q, op, c, err);
      }
      SC_P2P_VERDICT(ctx, r);
      if (c->eager && c->flag == 0) /* from sc_p2p_eager_start, its turn not come there */
        c->flag = (uint32_t)sc_dev_share(ctx, (int)sc_ll_flag(c->msg));
      /* A rendezvous send's header, for a receive that went eagerly. */
      if (leader && send && !c->eager && h->eager_bytes > 0) {
        sc_p2p_eager_header(h->slot_there, op->bytes, sc_ll_flag(c->msg));
        sc_dev_ring(&peer_pad->bell);
      }
      c->phase = SC_P2P_PHASE_HANDSHAKE;
    } else if (c->phase == SC_P2P_PHASE_HANDSHAKE && c->eager) {
      if (send) { /* the send ends at its put (device/p2p_eager.h) */
        sc_p2p_eager_put(ctx, h->slot_there, op->buf, op->bytes, c->flag);
        sc_dev_ring(&peer_pad->bell);
      }
      c->phase = send ? SC_P2P_PHASE_FINISH : SC_P2P_PHASE_EAGER;
    } else if (c->phase == SC_P2P_PHASE_EAGER) {
      r = sc_p2p_eager_take(ctx, d, h, op, c, err);
      if (r <= 0)
        return r < 0 ? -1 : moved;
      c->phase = SC_P2P_PHASE_FINISH;
    } else if (c->phase == SC_P2P_PHASE_HANDSHAKE) {
      if (leader && !send) {
        /* One release, cts's, orders the three before it: each release at
         * system scope waits for every earlier store to land. */
        sc_dev_store_relaxed(&theirs->cts_bytes.value, op->bytes);
        sc_dev_store_relaxed(&theirs->cts_window.value, op->window);
        sc_dev_store_relaxed(&theirs->cts_offset.value, op->offset);
        sc_dev_store(&theirs->cts.value, c->msg + 1);
        sc_dev_ring(&peer_pad->bell);
      } else if (leader) {
        r = sc_p2p_send_handshake(ctx, d, mine, theirs, op, c, err);
        if (r == 1) /* where the block's threads (and the lanes) find it */
          sc_dev_store_own(&q->direct, (uint64_t)(uintptr_t)c->direct);
      }
      if (leader && r == 1 && c->parts > 1) { /* publish: the lanes may start */
        q->parts_left = c->parts; /* ordered before the lanes' counts by go's release */
        sc_dev_store_own(&q->print, sc_p2p_print(a, c->op));
        sc_dev_store_own_release(&q->go, c->msg + 1);
        sc_dev_ring(&my_pad->bell);
      }
      SC_P2P_VERDICT(ctx, r);
      c->phase = SC_P2P_PHASE_PUBLISHED;
    } else if (c->phase == SC_P2P_PHASE_PUBLISHED) {
      /* The lead comes here published; a lane waits for it. Then every
       * thread reads what the leader's acquire made visible (the barrier of
       * the verdict orders it): fewer block-wide syncs than sharing it. */
      if (leader && lane > 0)
        r = sc_p2p_lane_wait(ctx, a, q, mine, done, c, err);
      SC_P2P_VERDICT(ctx, r);
      c->base = sc_dev_load_own(&q->chunks[lane]);
      if (send)
        c->direct = (char *)(uintptr_t)sc_dev_load_own(&q->direct);
      c->phase = SC_P2P_PHASE_CHUNKS;
    } else if (c->phase == SC_P2P_PHASE_FINISH || c->chunk == nchunks) {
      if (leader)
        sc_p2p_part_done(q, lane, c, send, op->bytes, nchunks, done, my_pad);
      c->op = sc_p2p_next(a, group, kind, c->op + 1);
      c->phase = SC_P2P_PHASE_CLAIM;
      c->len = 0;
    } else if (c->direct != 0 || op->window != 0) {
      /* Straight into the receiver's window: one copy, all chunks at once. */
      uint64_t last = c->base + nchunks;
      if (send) {
        if (c->len > 0)
          sc_dev_copy(ctx, c->direct + c->at, (const char *)op->buf + c->at, c->len);
        sc_dev_sync(ctx);
        if (leader) {
          sc_dev_store(&theirs->ready[lane].value, last);
          sc_dev_ring(&peer_pad->bell);
        }
      } else {
        if (leader) {
          /* What arrived is whole even if the sender failed since. */
          uint64_t ready = sc_dev_load(&mine->ready[lane].value);
          if (sc_p2p_count(ready) < last && (ready & SC_SLOT_ERROR))
            r = sc_p2p_refused(ctx, d, mine, op, c->msg, err);
          else
            r = ready >= last;
          if (r == 0 && lane == 0)
            r = sc_p2p_eager_instead(d, h, op, c->msg, err);
          if (r == 1) {
            sc_dev_store(&theirs->ack[lane].value, last);
            sc_dev_ring(&peer_pad->bell);
          }
        }
        SC_P2P_VERDICT(ctx, r);
      }
      c->chunk = nchunks;
      c->phase = SC_P2P_PHASE_FINISH;
    } else {
      uint64_t g = c->base + c->chunk;
      uint64_t cb = h->chunk_bytes;
      uint64_t offset = c->chunk * cb;
      uint64_t len = c->len - offset < cb ? c->len - offset : cb;
      char *slot = (send ? h->ring_there : h->ring_here) + ((uint64_t)lane * spl + g % spl) * cb;
      char *buf = (char *)op->buf + c->at + offset;
      if (leader && send) {
        uint64_t ack = sc_dev_load(&mine->ack[lane].value);
        if (ack & SC_SLOT_ERROR)
          r = sc_p2p_peer_failed(ctx, d, mine, op, c->msg, err);
        else if (g + 1 > spl && sc_p2p_count(ack) < g + 1 - spl)
          r = 0;
      } else if (leader) {
        uint64_t ready = sc_dev_load(&mine->ready[lane].value);
        if (sc_p2p_count(ready) < g + 1 && (ready & SC_SLOT_ERROR))
          r = sc_p2p_refused(ctx, d, mine, op, c->msg, err);
        else if (sc_p2p_count(ready) < g + 1)
          r = lane == 0 && c->chunk == 0 ? sc_p2p_eager_instead(d, h, op, c->msg, err) : 0;
      }
      SC_P2P_VERDICT(ctx, r);
      if (send && len > 0)
        sc_dev_copy(ctx, slot, buf, len);
      else if (len > 0)
        sc_dev_copy(ctx, buf, slot, len);
      sc_dev_sync(ctx);
      if (leader) {
        sc_dev_store(send ? &theirs->ready[lane].value : &theirs->ack[lane].value, g + 1);
        sc_dev_ring(&peer_pad->bell);
      }
      c->chunk++;
    }
    moved = 1;
  }
  return moved;
}

/* A launch of one-part messages (groups of one block) starts the first op
 * of each direction that goes eagerly in one turn instead of the general
 * loop's three (claim, order, put), each ended by a block-wide verdict: the
 * leader's ticket atomics and the loads that decide the order are in flight
 * together, two shares tell the block (the LL flag, the verdict), and a send
 * pushes its message at once and ends. An op whose turn has not come, whose
 * pair failed, or whose send has not yet seen the ack of the pair's last
 * eager message goes on in the general loop (sc_p2p_advance) from ORDER,
 * its ticket taken; so does everything after. */
SC_DEV_FN void sc_p2p_eager_start(sc_dev_ctx_t *ctx, const sc_p2p_args_t *a, const sc_p2p_here_t *h,
                                  sc_p2p_cursor_t *c) {
  sc_p2p_desc_t *d = a->desc;
  int leader = sc_dev_leader(ctx);
  uint32_t ticket[2] = {0, 0};
  uint64_t done[2] = {0, 0}, unacked = 0, ack = 0, cts = 0;
  int eager[2];
  for (int kind = SC_P2P_SEND; kind <= SC_P2P_RECV; kind++) {
    eager[kind] = c[kind].op < a->nops && sc_p2p_eager(a->ops[c[kind].op].bytes, h->eager_bytes);
    if (!eager[kind])
      continue;
    sc_p2p_queue_t *q = &d->pair[a->ops[c[kind].op].peer].queue[kind];
    if (leader)
      ticket[kind] = sc_dev_ticket_own32(&q->tickets);
    sc_p2p_skip_lanes(ctx, h, q);
  }
  if (eager[SC_P2P_SEND] && leader) {
    /* Relaxed looks that only decide whether the turn has come (ERROR in
     * either leaves the op to the general loop's checks); the put that reuses
     * the slot follows the ack's load through a block-wide share of it. */
    ack = sc_dev_load_poll(&h->mine->eager_ack.value);
    cts = sc_dev_load_poll(&h->mine->cts.value);
  }
  /* eager_unacked with the rest, not after done's acquire (which orders it):
   * read early it may be older than done says only if the message before
   * ended meanwhile on another stream. It is current if it names that
   * message (== this one's number, the common case: eager after eager);
   * otherwise the op takes the general loop, which reads it after done. */
  if (eager[SC_P2P_SEND] && leader)
    unacked = sc_dev_load_own(&d->pair[a->ops[c[SC_P2P_SEND].op].peer].queue[SC_P2P_SEND].eager_unacked);
  /* Both done counters' loads in flight at once, one fence after them,
   * where an acquire load each held the next back for its trip. */
  for (int kind = SC_P2P_SEND; kind <= SC_P2P_RECV && leader; kind++)
    if (eager[kind])
      done[kind] = sc_dev_load_own_poll(kind == SC_P2P_SEND ? &h->mine->sends_done.value
                                                             : &h->mine->recvs_done.value);
  if (leader && (eager[SC_P2P_SEND] || eager[SC_P2P_RECV]))
    sc_dev_acquire_own();
  for (int kind = SC_P2P_SEND; kind <= SC_P2P_RECV; kind++) {
    if (!eager[kind])
      continue;
    sc_p2p_cursor_t *k = &c[kind];
    const sc_p2p_op_t *op = &a->ops[k->op];
    int go = 0;
    if (leader) {
      k->msg = sc_p2p_number(ticket[kind], done[kind]);
      go = !(done[kind] & SC_SLOT_ERROR) && sc_p2p_count(done[kind]) >= k->msg &&
           (kind == SC_P2P_RECV ||
            (!((cts | ack) & SC_SLOT_ERROR) && unacked == k->msg && ack >= unacked));
    }
    /* One share: the flag (never 0) where the turn has come, else 0, the
     * flag then shared once the general loop's order check passed. */
    k->flag = (uint32_t)sc_dev_share(ctx, go ? (int)sc_ll_flag(k->msg) : 0);
    k->parts = 1;
    k->at = 0;
    k->len = op->bytes;
    k->eager = 1;
    k->phase = k->flag != 0 ? SC_P2P_PHASE_EAGER : SC_P2P_PHASE_ORDER;
    if (k->phase == SC_P2P_PHASE_EAGER && kind == SC_P2P_SEND) { /* put: the send ends */
      sc_p2p_eager_put(ctx, h->slot_there, op->buf, op->bytes, k->flag);
      sc_dev_ring(&h->peer_pad->bell);
      k->phase = SC_P2P_PHASE_FINISH;
    }
  }
}

/* Blocks from `first_block` on will not run (their stream stopped before
 * reaching the batch, or an earlier block of the launch failed on a backend
 * that runs blocks one after another): every pair they hold is marked
 * failed, so that the peers fail at once instead of waiting for messages
 * that will never come, and later ops on those pairs fail too. With `why`,
 * the peers learn the failure that stopped them. Host code. */
SC_DEV_FN void sc_dev_p2p_abandon(const sc_p2p_args_t *a, uint32_t first_block,
                                  const sc_dev_error_t *why) {
  uint64_t mark = why != 0 ? sc_dev_relay_mark(why, a->desc->rank, (int)why->a) : 0;
  uint32_t lanes = a->width > 0 ? a->width : 1;
  for (uint32_t i = 0; i < a->nops && i < SC_P2P_MAX_OPS; i++)
    if (((uint32_t)a->ops[i].block + 1) * lanes > first_block)
      sc_p2p_poison(a->desc, a->ops[i].peer, a->ops[i].kind, mark);
}

/* A send stuck at its turn (leader): if what it waits for is the ack of the
 * pair's last eager message (whose send ended at its put), that message is
 * the one not taken: the sentence names it (*msg, *bytes) instead, and 1 is
 * returned. */
SC_DEV_FN int sc_p2p_not_taken(const sc_p2p_desc_t *d, const sc_p2p_here_t *h,
                               const sc_p2p_op_t *op, uint64_t *msg, uint64_t *bytes) {
  const sc_p2p_queue_t *q = &d->pair[op->peer].queue[SC_P2P_SEND];
  uint64_t done = sc_p2p_count(sc_dev_load(&h->mine->sends_done.value));
  uint64_t unacked = sc_dev_load_own(&q->eager_unacked);
  if (*msg == 0 || unacked != *msg || done < *msg)
    return 0; /* it waits for its turn */
  if (sc_p2p_count(sc_dev_load(&h->mine->eager_ack.value)) >= unacked)
    return 0;
  *msg = unacked - 1;
  *bytes = sc_dev_load_own(&q->eager_unacked_bytes);
  return 1;
}

/* The cursor that the block is stuck on, for the sentence of its failure. */
SC_DEV_FN int sc_p2p_stuck(const sc_p2p_args_t *a, const sc_p2p_cursor_t *c) {
  return c[SC_P2P_SEND].op < a->nops ? SC_P2P_SEND : SC_P2P_RECV;
}

SC_DEV_FN void sc_dev_p2p_run(sc_dev_ctx_t *ctx, const sc_p2p_args_t *a, sc_dev_error_t *err) {
  sc_p2p_desc_t *d = a->desc;
  uint32_t lanes = a->width, block = sc_dev_block(ctx);
  uint32_t group = lanes > 0 ? block / lanes : 0, lane = lanes > 0 ? block % lanes : 0;
  int leader = sc_dev_leader(ctx);
  sc_guard_t guard = d->guard;
  if (a->call != 0) { /* a step of a collective: its failure names the collective */
    guard.call = a->call;
    guard.seq = a->seq;
  }
  /* The group's peer from the arguments, then what the block reads of the
   * descriptor, which never changes after setup: read while the kernel
   * ahead of this one on the stream may still run (a GPU may start this one
   * early: sc_dev_start_next below), all in flight at once. Everything else
   * (the stop word's copy, the counters, the send buffers) comes after the
   * wait for that kernel. The host word itself, 1 us away, is read only
   * when the copy says the communicator stopped (for the sentence): a
   * launch that starts between the stop and the copy's arrival runs as one
   * that started before the stop, and its waits look at the word. */
  int peer = -1, bad = a->nops > SC_P2P_MAX_OPS;
  for (uint32_t i = 0; i < a->nops && !bad; i++) {
    if (a->ops[i].block != group)
      continue;
    bad = (peer >= 0 && a->ops[i].peer != peer) || a->ops[i].peer >= SC_MAX_LOCAL_RANKS ||
          a->ops[i].kind > SC_P2P_RECV;
    peer = a->ops[i].peer;
  }
  sc_p2p_here_t h = {0}; /* read below where the block has a peer; else unused */
  if (!bad && peer >= 0)
    sc_p2p_here_read(a, peer, &h);
  sc_dev_wait_previous(ctx);
  uint32_t stop_copy = a->stopped != 0 ? sc_dev_load_poll32(a->stopped) : 0;
  sc_dev_enter(ctx, &guard);
  int stopped = sc_dev_share(ctx, stop_copy != 0 && leader ? sc_dev_stopped(ctx) : 0);
  sc_p2p_cursor_t c[2];
  if (!bad && peer >= 0) {
    bad = h.chunk_bytes == 0 || h.lanes < 1 || h.lanes > SC_P2P_MAX_LANES || h.slots < h.lanes ||
          (lanes != 1 && lanes != h.lanes) || h.eager_bytes > h.lane_bytes ||
          peer == d->local_rank;
    /* Groups of one block hold messages of one part only. */
    for (uint32_t i = 0; i < a->nops && !bad && lanes == 1; i++)
      bad = sc_p2p_parts(a->ops[i].bytes, h.lane_bytes, h.lanes) > 1;
  }
  if (bad) {
    if (leader) {
      err->kind = SC_DEV_BAD_ARGS;
      err->a = SC_PROGRAM_P2P;
    }
    return;
  }
  if (peer < 0)
    return; /* nothing for this block */
  for (int kind = SC_P2P_SEND; kind <= SC_P2P_RECV; kind++) {
    c[kind].op = sc_p2p_next(a, group, kind, 0);
    c[kind].phase = SC_P2P_PHASE_CLAIM;
    c[kind].msg = c[kind].base = c[kind].chunk = c[kind].at = c[kind].len = 0;
    c[kind].flag = 0;
    c[kind].parts = 1;
    c[kind].eager = 0;
    c[kind].direct = 0;
  }
  sc_p2p_pad_t *my_pad = h.my_pad;
  if (stopped) { /* the communicator failed before: none of these will meet their peers */
    if (leader) {
      const sc_p2p_op_t *op = &a->ops[c[sc_p2p_stuck(a, c)].op];
      sc_p2p_fail(d, err, SC_DEV_ABORTED, op, sc_p2p_peek(d, op), (int64_t)op->bytes);
      sc_dev_publish_early(ctx, err);
      sc_p2p_poison_pending(a, c, peer, sc_dev_relay_mark(err, d->rank, -1));
    }
    return;
  }
  if (a->width == 1)
    sc_p2p_eager_start(ctx, a, &h, c);
  uint64_t departed = 0; /* ranks that left, once a sleep said so (leader) */
  for (;;) {
    uint32_t seen = leader ? sc_dev_bell_read(&my_pad->bell) : 0;
    int moved = 0;
    for (int kind = SC_P2P_SEND; kind <= SC_P2P_RECV; kind++) {
      int r = sc_p2p_advance(ctx, a, &h, group, lane, kind, &c[kind], err);
      if (r < 0) {
        if (leader) { /* recorded before the poison can reach another stream's wait */
          sc_dev_publish_early(ctx, err);
          sc_p2p_poison_pending(a, c, peer, sc_dev_relay_mark(err, d->rank, d->ranks[peer]));
        }
        return;
      }
      moved |= r;
    }
    if (c[SC_P2P_SEND].op >= a->nops && c[SC_P2P_RECV].op >= a->nops) {
      /* Past its waits: the next kernel on the stream may start (it waits
       * for this one before it reads what this one wrote). One started
       * before the waits would hold an SM that a peer's block may need. */
      sc_dev_start_next(ctx);
      return;
    }
    if (moved) {
      if (leader)
        sc_dev_progress(ctx);
      continue;
    }
    /* Stuck after the departures were read: the peer left, having done all
     * it will ever do. */
    int why = 0;
    if (leader)
      why = (departed >> peer & 1) ? -1 : sc_dev_sleep(ctx, &my_pad->bell, seen);
    why = sc_dev_share(ctx, why);
    if (why == SC_DEV_PEER_LEFT) {
      if (leader)
        departed = sc_dev_departed(ctx); /* advance once more, then look */
      continue;
    }
    if (why == 0)
      continue;
    if (leader) {
      const sc_p2p_cursor_t *stuck = &c[sc_p2p_stuck(a, c)];
      const sc_p2p_op_t *op = &a->ops[stuck->op];
      uint64_t msg = stuck->msg, bytes = op->bytes;
      int untaken = stuck == &c[SC_P2P_SEND] && stuck->phase == SC_P2P_PHASE_ORDER &&
                    sc_p2p_not_taken(d, &h, op, &msg, &bytes);
      if (why < 0) {
        sc_p2p_fail(d, err, SC_DEV_PEER_LEFT, op, msg, (int64_t)bytes);
        err->e = d->ranks[peer];
        err->untaken = untaken;
      } else {
        sc_p2p_fail(d, err, why == SC_DEV_TIMEOUT ? SC_DEV_P2P_TIMEOUT : why, op, msg,
                    (int64_t)bytes);
        err->e = d->guard.timeout_ms;
      }
      sc_dev_publish_early(ctx, err);
      sc_p2p_poison_pending(a, c, peer, sc_dev_relay_mark(err, d->rank, d->ranks[peer]));
    }
    return;
  }
}

#endif
