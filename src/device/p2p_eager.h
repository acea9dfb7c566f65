/* Eager messages of the P2P program (device/p2p.h): a message of at most
 * desc->eager_bytes goes without a rendezvous, its data in LL lines
 * (device/ll_line.h) whose flags say it arrived.
 *
 * Each rank's p2p window has an eager slot per peer: a header line, then one
 * line per 8 bytes of the largest eager message. For message n from S to R:
 *   send:    once R acked the pair's last eager message, if any (eager_ack
 *            in S's pad: R has read the slot; any send waits so), put the
 *            header (the sender's size) and the data lines, all with flag
 *            sc_ll_flag(n), into R's slot for S, in any order, and end: the
 *            data is out of the send buffer and on its way, as with NCCL,
 *            whose send ends at its put.
 *   receive: wait until the header and every data line carry the flag,
 *            copy the data to the buffer, then set eager_ack = n + 1 in S's
 *            pad (the slot is free again).
 * The wait for the ack moves from a send's end to the next send's
 * start on the pair, which in a loop of exchanges has usually seen it by
 * then; one slot per pair and direction is enough, and a line still holding
 * message n - 1's flag is told from message n's.
 *
 * A message put is delivered: the receive takes one that arrived whole even
 * if the pair was marked failed since (the sender failed a later op, or left);
 * a receive that sees the mark looks at the slot again before it fails,
 * since its look may have come before the put and the mark's load after it.
 *
 * Each side picks the protocol from its own size, so sizes that differ
 * across the threshold must still meet. The receive always fails at once,
 * naming both sizes, and writes nothing; the sender, whose eager send may
 * have ended already, learns at its next send on the pair (the pair cannot be
 * used again), which fails naming the refused message and both sizes:
 *   - eager receive, header of another size (either protocol: a rendezvous
 *     send writes its header too): the receiver puts its size in cts_bytes
 *     and a refusal (SC_SLOT_ERROR | SC_P2P_EAGER_REFUSED | n + 1) in
 *     eager_ack, and fails; an eager sender finds the refusal at its next
 *     send's start, a rendezvous one in its wait for cts, which the failed
 *     receive's poison reaches.
 *   - rendezvous receive, an eager send: the receive posts cts as always;
 *     while it waits for its first chunk it also looks at the slot's header,
 *     and one of message n of another size is refused as above, the
 *     receive's own lanes told as a sender's refusal would tell them.
 * A receive that is never posted: the sender's next send on the pair
 * waits for the ack, and its timeout names the message not taken.
 * The flag repeats after 2^32 - 1 messages of a pair: a line left from a
 * message that many before would pass for the current one's if the sender's
 * store had not landed yet (as for the collectives' LL lines). */
#ifndef SC_DEVICE_P2P_EAGER_H
#define SC_DEVICE_P2P_EAGER_H

#include "device/ll_line.h"
#include "device/p2p_layout.h"

/* The eager slot for messages from local rank `from`, in `owner`'s window. */
SC_DEV_FN uint64_t *sc_p2p_eager_slot(const sc_p2p_desc_t *d, sc_p2p_pad_t *owner, int from) {
  return (uint64_t *)((char *)owner + d->eager_offset + (uint64_t)from * d->eager_stride);
}

/* Line l of a slot: 0 the header, 1 + i the data's bytes [8i, 8i + 8). */
SC_DEV_FN uint64_t *sc_p2p_eager_line(uint64_t *slot, uint64_t l) {
  return slot + l * (SC_LL_LINE_BYTES / 8);
}

/* The header alone (leader): a rendezvous send's, for an eager receive.
 * `flag`: sc_ll_flag of the message's number. */
SC_DEV_FN void sc_p2p_eager_header(uint64_t *slot, uint64_t bytes, uint32_t flag) {
  sc_ll_push(sc_p2p_eager_line(slot, 0), bytes, flag);
}

/* Lines a receiving thread with several has in flight at once: its loads
 * of a batch all issued before it uses any of them, so that it waits for one
 * round trip a batch, not one a line (a GPU issues in order and stalls at the
 * first use of a pending load). 16-64 KiB took 0.9-1.9 us less on session
 * 25's proxy (k7). Not more than 4: the P2P kernel is at its 128 registers,
 * and batches of 8 spilled (2.7 us more at 8 B, k5); nor in the put, which
 * the start inlines (batches of 4 there spill 108 bytes, ptxas -v). A thread
 * with one line at most looks at it alone: batches cost 0.5 us at 8 B-1 KiB
 * (k6). */
#define SC_P2P_EAGER_BATCH 4

/* The sender puts its message (every thread, each with the message's
 * flag): the header and the data lines in one pass, no sync between them. */
SC_DEV_FN void sc_p2p_eager_put(sc_dev_ctx_t *ctx, uint64_t *slot, const void *buf,
                                uint64_t bytes, uint32_t flag) {
  uint64_t lines = sc_p2p_eager_lines(bytes);
  for (uint64_t l = sc_dev_thread(ctx); l < lines; l += sc_dev_threads(ctx))
    sc_ll_push(sc_p2p_eager_line(slot, l), l == 0 ? bytes : sc_ll_take(buf, l - 1, bytes), flag);
}

/* The header of message `flag` in a slot, if there (leader): the
 * sender's size, else UINT64_MAX. */
SC_DEV_FN uint64_t sc_p2p_eager_sent(uint64_t *slot, uint32_t flag) {
  uint64_t v;
  return sc_ll_read(sc_p2p_eager_line(slot, 0), flag, &v) ? v : UINT64_MAX;
}

/* A thread's batch of data lines from l0 on, `step` apart (those below
 * `lines`), all loads issued before any is used. */
SC_DEV_FN void sc_p2p_eager_load_batch(uint64_t *slot, uint64_t l0, uint64_t step, uint64_t lines,
                                       uint64_t *w0, uint64_t *w1) {
  SC_DEV_UNROLL for (int i = 0; i < SC_P2P_EAGER_BATCH; i++)
    if (l0 + i * step < lines)
      sc_dev_ll_load(sc_p2p_eager_line(slot, 1 + l0 + i * step), &w0[i], &w1[i]);
}

/* One look at the message of `flag` in the slot (every thread), one
 * block-wide vote: whether every data line of a `bytes` message carries the
 * flag and the header (which the leader reads: the sender's size in *sent,
 * or UINT64_MAX when it is not there yet) says `bytes`. Nothing is written:
 * a message refused for its size leaves the buffer as it was. */
SC_DEV_FN int sc_p2p_eager_arrived(sc_dev_ctx_t *ctx, uint64_t *slot, uint64_t bytes, uint32_t flag,
                                   uint64_t *sent) {
  uint64_t lines = sc_p2p_eager_lines(bytes) - 1, step = sc_dev_threads(ctx), v, h0 = 0, h1 = 0;
  int missing = 0, leader = sc_dev_leader(ctx);
  if (leader) /* in flight with the first batch */
    sc_dev_ll_load(sc_p2p_eager_line(slot, 0), &h0, &h1);
  if (lines <= step) { /* a line a thread at most */
    uint64_t l = sc_dev_thread(ctx);
    if (l < lines)
      missing = !sc_ll_read(sc_p2p_eager_line(slot, 1 + l), flag, &v);
  } else {
    for (uint64_t l0 = sc_dev_thread(ctx); l0 < lines; l0 += step * SC_P2P_EAGER_BATCH) {
      uint64_t w0[SC_P2P_EAGER_BATCH], w1[SC_P2P_EAGER_BATCH];
      sc_p2p_eager_load_batch(slot, l0, step, lines, w0, w1);
      SC_DEV_UNROLL for (int i = 0; i < SC_P2P_EAGER_BATCH; i++)
        if (l0 + i * step < lines)
          missing |= !sc_ll_decode(w0[i], w1[i], flag, &v);
    }
  }
  if (leader) {
    *sent = sc_ll_decode(h0, h1, flag, &v) ? v : UINT64_MAX;
    missing |= *sent != bytes;
  }
  return !sc_dev_any(ctx, missing);
}

/* The message's data, all arrived, into buf (every thread). */
SC_DEV_FN void sc_p2p_eager_copy(sc_dev_ctx_t *ctx, uint64_t *slot, void *buf, uint64_t bytes) {
  uint64_t lines = sc_p2p_eager_lines(bytes) - 1, step = sc_dev_threads(ctx);
  if (lines <= step) { /* a line a thread at most */
    uint64_t l = sc_dev_thread(ctx), w0, w1;
    if (l < lines) {
      sc_dev_ll_load(sc_p2p_eager_line(slot, 1 + l), &w0, &w1);
      sc_ll_give(buf, l, bytes, sc_ll_data(w0, w1));
    }
    return;
  }
  for (uint64_t l0 = sc_dev_thread(ctx); l0 < lines; l0 += step * SC_P2P_EAGER_BATCH) {
    uint64_t w0[SC_P2P_EAGER_BATCH], w1[SC_P2P_EAGER_BATCH];
    sc_p2p_eager_load_batch(slot, l0, step, lines, w0, w1);
    SC_DEV_UNROLL for (int i = 0; i < SC_P2P_EAGER_BATCH; i++)
      if (l0 + i * step < lines)
        sc_ll_give(buf, l0 + i * step, bytes, sc_ll_data(w0[i], w1[i]));
  }
}

/* The receiver refuses message msg for its size (leader): the sender finds
 * `bytes` in cts_bytes under the refusal. */
SC_DEV_FN void sc_p2p_eager_refuse(sc_p2p_peer_lines_t *theirs, uint64_t bytes, uint64_t msg) {
  sc_dev_store_relaxed(&theirs->cts_bytes.value, bytes);
  sc_dev_store(&theirs->eager_ack.value, SC_SLOT_ERROR | SC_P2P_EAGER_REFUSED | (msg + 1));
}

/* The receiver's refusal of message msg, if eager_ack holds one: its size
 * in *want. */
SC_DEV_FN int sc_p2p_eager_refused(const sc_p2p_peer_lines_t *mine, uint64_t msg, uint64_t *want) {
  uint64_t ack = sc_dev_load(&mine->eager_ack.value);
  if (ack != (SC_SLOT_ERROR | SC_P2P_EAGER_REFUSED | (msg + 1)))
    return 0;
  *want = sc_dev_load(&mine->cts_bytes.value);
  return 1;
}

#endif
