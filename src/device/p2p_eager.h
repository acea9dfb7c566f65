/* Eager messages of the P2P program (device/p2p.h): a message of at most
 * desc->eager_bytes goes without a rendezvous, its data in LL lines
 * (device/ll_line.h) whose flags say it arrived.
 *
 * Each rank's p2p window has an eager slot per peer: a header line, then one
 * line per 8 bytes of the largest eager message. For message n from S to R:
 *   send:    put the header (the sender's size) and the data lines, all
 *            with flag sc_ll_flag(n), into R's slot for S, in any order (the
 *            receive takes the message once every line carries the flag);
 *            then wait for R's verdict in S's pad: eager_ack = n + 1
 *            (taken), or a refusal.
 *   receive: wait until the header and every data line carry the flag
 *            (the sender did not give up on it: no ERROR in ready[0]),
 *            claim it (eager_taken = n + 1 in R's pad), copy the data to
 *            the buffer, then set eager_ack = n + 1 in S's pad.
 * The slot is free again when the ack comes: the sender's next message
 * waits for this one to be done (the queue's order), so one slot per pair
 * and direction is enough, and a line still holding message n - 1's flag
 * is told from message n's.
 *
 * A sender that gives up waiting for the ack (timeout, abort, its other
 * direction failed) withdraws the message before it marks the pair failed:
 * eager_taken |= ERROR. The claim (an atomic maximum) and the withdrawal (a
 * compare-and-swap) are atomics on that one word, so exactly one wins:
 * withdrawn, the receive fails whatever it saw before (a receive never
 * finishes a message its sender reported failed, even one stopped between
 * its look and its claim);
 * claimed first, the message is delivered (the receiver finishes it unless
 * it dies), so the sender finishes the send instead of failing it, and its
 * next message on the pair waits for that ack (queue.eager_unacked) before
 * touching the slot the receiver may still be copying out of. A receive
 * that lost its claim waits on until the sender's marks (ready[0]'s ERROR,
 * after the reason in gave_up) come, which follow the withdrawal at once:
 * the mark is stored only by a sender that fails. The claim is an atomic on
 * the receiver's own memory (the withdrawal, on the failure path only,
 * crosses to the peer): the fast path gains no round trip. A block whose
 * send ended so waits on for its other ops with a fresh timeout: the
 * message's delivery was progress.
 *
 * Each side picks the protocol from its own size, so sizes that differ
 * across the threshold must still meet, and fail on both sides naming both
 * sizes:
 *   - eager receive, header of another size (either protocol: a rendezvous
 *     send writes its header too): the receiver puts its size in cts_bytes
 *     and a refusal (SC_SLOT_ERROR | SC_P2P_EAGER_REFUSED | n + 1) in
 *     eager_ack, and fails; the sender finds the refusal (an eager one in its
 *     wait, a rendezvous one once the failed receive's poison reaches cts).
 *   - eager send, rendezvous receive: the receive posts cts as always and
 *     waits for data; the eager sender's wait sees that cts and refuses it
 *     as a rendezvous send refuses a receive of another size.
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

/* The sender puts its message (every thread, each with the message's
 * flag): the header and the data lines in one pass, no sync between them. */
SC_DEV_FN void sc_p2p_eager_put(sc_dev_ctx_t *ctx, uint64_t *slot, const void *buf,
                                uint64_t bytes, uint32_t flag) {
  uint64_t lines = sc_p2p_eager_lines(bytes);
  for (uint64_t l = sc_dev_thread(ctx); l < lines; l += sc_dev_threads(ctx))
    sc_ll_push(sc_p2p_eager_line(slot, l), l == 0 ? bytes : sc_ll_take(buf, l - 1, bytes), flag);
}

/* One look at the message of `flag` in the slot (every thread): whether
 * every data line of a `bytes` message carries the flag; the leader also reads the
 * header: the sender's size, or UINT64_MAX when it is not there yet.
 * Nothing is written: a message refused for its size leaves the buffer as
 * it was. */
SC_DEV_FN int sc_p2p_eager_arrived(sc_dev_ctx_t *ctx, uint64_t *slot, uint64_t bytes, uint32_t flag,
                                   uint64_t *sent) {
  uint64_t lines = sc_p2p_eager_lines(bytes) - 1, v;
  int missing = 0;
  for (uint64_t l = sc_dev_thread(ctx); l < lines; l += sc_dev_threads(ctx))
    missing |= !sc_ll_read(sc_p2p_eager_line(slot, 1 + l), flag, &v);
  if (sc_dev_leader(ctx))
    *sent = sc_ll_read(sc_p2p_eager_line(slot, 0), flag, &v) ? v : UINT64_MAX;
  return !sc_dev_any(ctx, missing);
}

/* The message's data, all arrived, into buf (every thread). */
SC_DEV_FN void sc_p2p_eager_copy(sc_dev_ctx_t *ctx, uint64_t *slot, void *buf, uint64_t bytes) {
  uint64_t lines = sc_p2p_eager_lines(bytes) - 1, w0, w1;
  for (uint64_t l = sc_dev_thread(ctx); l < lines; l += sc_dev_threads(ctx)) {
    sc_dev_ll_load(sc_p2p_eager_line(slot, 1 + l), &w0, &w1);
    sc_ll_give(buf, l, bytes, sc_ll_data(w0, w1));
  }
}

/* The receiver claims message msg, all arrived (leader), in `taken` (its
 * eager_taken line about the sender): 1, or 0 if the sender withdrew it
 * first. One atomic maximum, no load before it: a withdrawn word has
 * SC_SLOT_ERROR, the top bit, so it stays as it is.
 * Relaxed: the one word decides who won, and the copy needs no order from
 * it: each line carries its flag, checked before the claim, and the sender
 * writes the slot again only after the ack. (The ack is a relaxed store by
 * the leader after the block's copy and a block-wide sync; each thread's
 * loads of the slot feed its stores to the buffer before that sync, which
 * is what keeps them ahead of the ack in practice. The PTX model alone does
 * not promise it, with this claim or the acq_rel one before it, which came
 * before the copy and so never ordered it either.) */
SC_DEV_FN int sc_p2p_eager_claim(uint64_t *taken, uint64_t msg) {
  return !(sc_dev_max64(taken, msg + 1) & SC_SLOT_ERROR);
}

/* The sender gives up on message msg, put but not acked (leader), in
 * `taken` (the receiver's eager_taken line about it): 0 once withdrawn (or
 * the word was failed before), 1 if the receiver had claimed it: it is
 * delivered, the ack to come. */
SC_DEV_FN int sc_p2p_eager_withdraw(uint64_t *taken, uint64_t msg) {
  uint64_t v = sc_dev_load(taken);
  for (;;) {
    if (v & SC_SLOT_ERROR)
      return 0;
    if (v >= msg + 1)
      return 1;
    uint64_t old = sc_dev_cas64(taken, v, v | SC_SLOT_ERROR);
    if (old == v)
      return 0;
    v = old;
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
