/* The P2P program: a batch of sends and receives between ranks of one host,
 * advanced together (a group), over each rank's p2p window.
 *
 * Memory. Every rank has a p2p window (mapped by its host's other ranks): a
 * pad, then one staging ring per peer for the data that peer sends it:
 * `slots` chunks of `chunk_bytes`. In rank R's pad, the lines about peer P
 * (index = P's local rank) are:
 *   ready      chunks P has put in R's ring for P       written by P
 *   ack        chunks of R's that P has taken out       written by P
 *   cts        receives P has posted for R's sends      written by P
 *   cts_bytes  size of P's newest posted receive         written by P
 *   err_bytes  size of P's send when P refused R's receive   written by P
 *   gave_up    why P marked the pair failed (a relay mark)   written by P
 *   sends_done, recvs_done   R's own completed sends to / receives from P
 * Counters only grow; SC_SLOT_ERROR in one marks the exchange as failed.
 *
 * A message. The n-th send from S to R meets the n-th receive R posts from
 * S (n = `msg`, counted on the host by both sides). It travels in
 * max(1, ceil(bytes / chunk_bytes)) chunks; `chunk_base` counts the chunks of
 * earlier messages on that pair.
 *   receive: post cts_bytes, then cts = msg + 1 in S's pad (rendezvous); for
 *            each chunk g: wait ready >= g + 1, copy it out of the ring slot
 *            g % slots, set ack = g + 1 in S's pad.
 *   send:    wait cts >= msg + 1; if cts_bytes differs from this send's size,
 *            put err_bytes and ready |= ERROR in R's pad and fail (R's wait
 *            sees the error and fails too: both sides learn, naming both
 *            sizes); for each chunk g: wait ack >= g + 1 - slots (the slot is
 *            free), copy into R's ring slot g % slots, set ready = g + 1.
 * A receive into a window (its id and offset in the communicator's window
 * table) says so with its size; the send then copies straight into that
 * buffer, once, and raises ready past all of the message's chunks at once.
 * Every store that another rank waits for is followed by a ring of that
 * rank's doorbell. Operations on one pair and direction run in message order
 * even from different streams: each first waits for the previous one to
 * finish (sends_done / recvs_done), so the ring's order is never broken.
 * When a batch fails, every pair it left half-done is marked failed on both
 * sides, so that later use fails at once instead of hanging. */
#ifndef SC_DEVICE_P2P_H
#define SC_DEVICE_P2P_H

#include "device/p2p_layout.h"
#include "device/runtime.h"
#include "device/status.h"

SC_DEV_FN uint64_t sc_p2p_count(uint64_t line) { return line & ~SC_SLOT_ERROR; }

SC_DEV_FN void sc_p2p_fail(sc_dev_error_t *err, int kind, const sc_p2p_op_t *op, int64_t c) {
  err->kind = kind;
  err->a = op->peer;
  err->b = kind == SC_DEV_SIZE_MISMATCH ? (int64_t)op->bytes : (int64_t)op->msg;
  err->c = c;
  err->d = op->kind;
  err->e = 0;
}

/* Marks a pair that an op left half-done as failed, here and at the peer
 * (atomically: other streams of the pair may store to the same lines), and
 * tells the peer why (`mark`, 0: nothing to relay). */
SC_DEV_FN void sc_p2p_poison(const sc_p2p_args_t *a, const sc_p2p_op_t *op, uint64_t mark) {
  sc_p2p_peer_lines_t *mine = &a->my_pad->peer[op->peer_index];
  sc_p2p_peer_lines_t *theirs = &op->peer_pad->peer[op->my_index];
  if (mark != 0)
    sc_dev_store(&theirs->gave_up.value, mark); /* before the marks the peer sees */
  if (op->kind == SC_P2P_SEND) {
    sc_dev_or(&mine->sends_done.value, SC_SLOT_ERROR);
    sc_dev_or(&theirs->ready.value, SC_SLOT_ERROR);
  } else {
    sc_dev_or(&mine->recvs_done.value, SC_SLOT_ERROR);
    sc_dev_or(&theirs->ack.value, SC_SLOT_ERROR);
    sc_dev_or(&theirs->cts.value, SC_SLOT_ERROR);
  }
  sc_dev_ring(&a->my_pad->bell);
  sc_dev_ring(&op->peer_pad->bell);
}

/* The batch gave up: every op it left half-done marks its pair failed. */
SC_DEV_FN void sc_p2p_poison_pending(const sc_p2p_args_t *a, uint64_t mark) {
  for (uint32_t j = 0; j < a->nops; j++)
    if (a->ops[j].phase != SC_P2P_PHASE_DONE)
      sc_p2p_poison(a, &a->ops[j], mark);
}

/* The pair is marked failed: this rank's own stop if it has one, else what
 * the peer relayed (the stop it heard of, as if heard here), else the pair's
 * earlier failure. Returns -1 (err filled). */
SC_DEV_FN int sc_p2p_peer_failed(sc_dev_ctx_t *ctx, const sc_p2p_peer_lines_t *mine,
                                 const sc_p2p_op_t *op, sc_dev_error_t *err) {
  if (sc_dev_stopped(ctx)) {
    sc_p2p_fail(err, SC_DEV_ABORTED, op, (int64_t)op->bytes);
    return -1;
  }
  sc_p2p_fail(err, SC_DEV_PEER_FAILED, op, 0);
  int timed_out, waited_for;
  sc_dev_relay_read(sc_dev_load(&mine->gave_up.value), err, &timed_out, &waited_for);
  return -1;
}

/* A receive finds ERROR in ready: the sender refused this message's size
 * (it left its own size in err_bytes), or the pair failed before. */
SC_DEV_FN int sc_p2p_refused(sc_dev_ctx_t *ctx, const sc_p2p_peer_lines_t *mine,
                             const sc_p2p_op_t *op, sc_dev_error_t *err) {
  /* A refusal for size carries the sender's size with the ERROR bit set;
   * anything else means the sender failed for another reason. */
  uint64_t refusal = sc_dev_load(&mine->err_bytes.value);
  if (!(refusal & SC_SLOT_ERROR))
    return sc_p2p_peer_failed(ctx, mine, op, err);
  sc_p2p_fail(err, SC_DEV_SIZE_MISMATCH, op, (int64_t)(refusal & ~SC_SLOT_ERROR));
  return -1;
}

/* Advances one op as far as it can go without waiting. Returns 1 if it moved,
 * 0 if it must wait, -1 on failure (err filled). */
SC_DEV_FN int sc_p2p_step(sc_dev_ctx_t *ctx, const sc_p2p_args_t *a, sc_p2p_op_t *op,
                          sc_dev_error_t *err) {
  sc_p2p_peer_lines_t *mine = &a->my_pad->peer[op->peer_index];
  sc_p2p_peer_lines_t *theirs = &op->peer_pad->peer[op->my_index];
  uint64_t nchunks = sc_p2p_chunks(op->bytes, a->chunk_bytes);
  int moved = 0;
  for (;;) {
    if (op->phase == SC_P2P_PHASE_ORDER) {
      uint64_t done = sc_dev_load(op->kind == SC_P2P_SEND ? &mine->sends_done.value
                                                          : &mine->recvs_done.value);
      if (done & SC_SLOT_ERROR)
        return sc_p2p_peer_failed(ctx, mine, op, err);
      if (done < op->msg)
        return moved;
      op->phase = SC_P2P_PHASE_HANDSHAKE;
      moved = 1;
    } else if (op->phase == SC_P2P_PHASE_HANDSHAKE) {
      if (op->kind == SC_P2P_RECV) {
        sc_dev_store(&theirs->cts_bytes.value, op->bytes);
        sc_dev_store(&theirs->cts_window.value, op->window);
        sc_dev_store(&theirs->cts_offset.value, op->offset);
        sc_dev_store(&theirs->cts.value, op->msg + 1);
        sc_dev_ring(&op->peer_pad->bell);
      } else {
        uint64_t cts = sc_dev_load(&mine->cts.value);
        if (cts & SC_SLOT_ERROR)
          return sc_p2p_peer_failed(ctx, mine, op, err);
        if (cts < op->msg + 1)
          return moved;
        uint64_t want = sc_dev_load(&mine->cts_bytes.value);
        if (want != op->bytes) {
          sc_dev_store(&theirs->err_bytes.value, op->bytes | SC_SLOT_ERROR);
          sc_p2p_fail(err, SC_DEV_SIZE_MISMATCH, op, (int64_t)want);
          return -1; /* the batch poisons the pair: the receiver sees ERROR in ready */
        }
        uint64_t window = sc_dev_load(&mine->cts_window.value);
        if (window != 0) {
          uint64_t offset = sc_dev_load(&mine->cts_offset.value);
          const sc_dev_window_t *w = window <= SC_MAX_WINDOWS ? &a->windows[window - 1] : 0;
          char *base = w != 0 && w->bytes > 0 && w->peer != 0 ? (char *)w->peer[op->peer] : 0;
          if (base == 0 || offset > w->bytes || op->bytes > w->bytes - offset) {
            err->kind = SC_DEV_BAD_ARGS; /* a window freed while still in use */
            err->a = SC_PROGRAM_P2P;
            return -1;
          }
          op->direct = base + offset;
        }
      }
      op->phase = SC_P2P_PHASE_CHUNKS;
      moved = 1;
    } else if (op->phase == SC_P2P_PHASE_CHUNKS) {
      if (op->chunk == nchunks) {
        uint64_t *done = op->kind == SC_P2P_SEND ? &mine->sends_done.value : &mine->recvs_done.value;
        sc_dev_store(done, op->msg + 1);
        sc_dev_ring(&a->my_pad->bell);
        op->phase = SC_P2P_PHASE_DONE;
        return 1;
      }
      if (op->direct != 0 || op->window != 0) {
        /* Straight into the receiver's window: one copy, all chunks at once. */
        uint64_t last = op->chunk_base + nchunks;
        if (op->kind == SC_P2P_SEND) {
          if (op->bytes > 0)
            sc_dev_copy(ctx, op->direct, op->buf, op->bytes);
          sc_dev_store(&theirs->ready.value, last);
        } else {
          /* What arrived is whole even if the sender failed since. */
          uint64_t ready = sc_dev_load(&mine->ready.value);
          if (sc_p2p_count(ready) < last && (ready & SC_SLOT_ERROR))
            return sc_p2p_refused(ctx, mine, op, err);
          if (ready < last)
            return moved;
          sc_dev_store(&theirs->ack.value, last);
        }
        sc_dev_ring(&op->peer_pad->bell);
        op->chunk = (uint32_t)nchunks;
        moved = 1;
        continue;
      }
      uint64_t g = op->chunk_base + op->chunk;
      uint64_t offset = (uint64_t)op->chunk * a->chunk_bytes;
      uint64_t len = op->bytes - offset < a->chunk_bytes ? op->bytes - offset : a->chunk_bytes;
      char *slot = op->ring + (g % a->slots) * a->chunk_bytes;
      if (op->kind == SC_P2P_SEND) {
        uint64_t ack = sc_dev_load(&mine->ack.value);
        if (ack & SC_SLOT_ERROR)
          return sc_p2p_peer_failed(ctx, mine, op, err);
        if (g + 1 > a->slots && sc_p2p_count(ack) < g + 1 - a->slots)
          return moved;
        if (len > 0)
          sc_dev_copy(ctx, slot, (const char *)op->buf + offset, len);
        sc_dev_store(&theirs->ready.value, g + 1);
        sc_dev_ring(&op->peer_pad->bell);
      } else {
        uint64_t ready = sc_dev_load(&mine->ready.value);
        if (sc_p2p_count(ready) < g + 1 && (ready & SC_SLOT_ERROR))
          return sc_p2p_refused(ctx, mine, op, err);
        if (sc_p2p_count(ready) < g + 1)
          return moved;
        if (len > 0)
          sc_dev_copy(ctx, (char *)op->buf + offset, slot, len);
        sc_dev_store(&theirs->ack.value, g + 1);
        sc_dev_ring(&op->peer_pad->bell);
      }
      op->chunk++;
      moved = 1;
    } else {
      return 0;
    }
  }
}

/* The batch will not run (its stream stopped before reaching it): every op's
 * pair is marked failed, so that the peers fail at once instead of waiting
 * for messages that will never come, and later ops on those pairs fail too. */
SC_DEV_FN void sc_dev_p2p_abandon(const sc_p2p_args_t *a) {
  for (uint32_t i = 0; i < a->nops; i++)
    sc_p2p_poison(a, &a->ops[i], 0);
}

SC_DEV_FN void sc_dev_p2p_run(sc_dev_ctx_t *ctx, const sc_p2p_args_t *args, sc_dev_error_t *err) {
  /* The launch owns this copy of the arguments; progress is kept in it. */
  sc_p2p_args_t *a = (sc_p2p_args_t *)args;
  int stopped = sc_dev_begin(ctx, &a->guard);
  err->kind = SC_DEV_OK;
  if (a->chunk_bytes == 0 || a->slots == 0) {
    err->kind = SC_DEV_BAD_ARGS;
    err->a = SC_PROGRAM_P2P;
    return;
  }
  if (stopped) { /* the communicator failed before: none of these will meet their peers */
    err->kind = SC_DEV_ABORTED;
    if (a->nops > 0)
      sc_p2p_fail(err, SC_DEV_ABORTED, &a->ops[0], (int64_t)a->ops[0].bytes);
    uint64_t mark = sc_dev_relay_mark(err, a->rank, -1);
    for (uint32_t i = 0; i < a->nops; i++)
      sc_p2p_poison(a, &a->ops[i], mark);
    return;
  }
  uint64_t departed = 0; /* ranks that left, once a sleep said so */
  for (;;) {
    uint32_t seen = sc_dev_bell_read(&a->my_pad->bell);
    int moved = 0, pending = 0;
    for (uint32_t i = 0; i < a->nops; i++) {
      sc_p2p_op_t *op = &a->ops[i];
      if (op->phase == SC_P2P_PHASE_DONE)
        continue;
      /* Ops on one pair and direction go in order within the batch too. */
      int blocked = 0;
      for (uint32_t j = 0; j < i && !blocked; j++)
        blocked = a->ops[j].phase != SC_P2P_PHASE_DONE && a->ops[j].kind == op->kind &&
                  a->ops[j].peer_index == op->peer_index;
      if (blocked) {
        pending = 1;
        continue;
      }
      int r = sc_p2p_step(ctx, a, op, err);
      if (r < 0) {
        sc_p2p_poison_pending(a, sc_dev_relay_mark(err, a->rank, op->peer));
        return;
      }
      moved |= r;
      pending |= op->phase != SC_P2P_PHASE_DONE;
    }
    if (!pending)
      return;
    if (moved) {
      sc_dev_progress(ctx);
      continue;
    }
    /* Stuck after the departures were read: an op whose peer left waits for
     * what it never did (a peer finishes its work before it leaves). */
    for (uint32_t i = 0; i < a->nops && departed != 0; i++) {
      sc_p2p_op_t *op = &a->ops[i];
      if (op->phase == SC_P2P_PHASE_DONE || !(departed >> op->peer_index & 1))
        continue;
      sc_p2p_fail(err, SC_DEV_PEER_LEFT, op, (int64_t)op->bytes);
      err->e = op->peer;
      sc_p2p_poison_pending(a, sc_dev_relay_mark(err, a->rank, op->peer));
      return;
    }
    int why = sc_dev_sleep(ctx, &a->my_pad->bell, seen);
    if (why == SC_DEV_PEER_LEFT) {
      departed = sc_dev_departed(ctx); /* step every op once more, then look */
      continue;
    }
    if (why != 0) {
      for (uint32_t j = 0; j < a->nops; j++) {
        sc_p2p_op_t *op = &a->ops[j];
        if (op->phase == SC_P2P_PHASE_DONE)
          continue;
        if (err->kind == SC_DEV_OK) {
          sc_p2p_fail(err, why == SC_DEV_TIMEOUT ? SC_DEV_P2P_TIMEOUT : why, op, (int64_t)op->bytes);
          err->e = a->guard.timeout_ms;
        }
        sc_p2p_poison(a, op, sc_dev_relay_mark(err, a->rank, op->peer));
      }
      return;
    }
  }
}

#endif
