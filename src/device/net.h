/* The NET program: a batch of sends and receives with ranks on other hosts.
 * The device does not move these bytes itself: it posts each op into its
 * communicator's queue in host memory (device/net_layout.h), where the host's
 * network progress thread takes it (src/transport/net/net_bridge.c), and waits
 * until the host says it finished. A send has finished when its bytes have
 * left its buffer, a receive when they are in place, so the stream's later
 * work may reuse or read the buffers.
 *
 * Posting: the leader claims a ticket (compare and swap on the descriptor's
 * counter), waits until the slot's previous message finished (the host writes
 * done words in ticket order per slot), writes the entry, then `posted` =
 * ticket + 1 (release); once all are posted it rings the queue's bell. Every
 * op of the launch is posted before any is awaited: a group's sends and
 * receives proceed together.
 *
 * Waiting: done words and the host's chunk counter (`moved`: any progress
 * restarts the no-progress clock, so a long transfer does not time out). A
 * failed message (SC_SLOT_ERROR) comes after the host stopped the
 * communicator with a sentence, which becomes this program's error. One block,
 * its leader alone: the data never passes through the device. */
#ifndef SC_DEVICE_NET_H
#define SC_DEVICE_NET_H

#include "device/net_layout.h"
#include "device/runtime.h"
#include "device/status.h"

/* Fills err for op `i` that failed with `why`. */
SC_DEV_FN void sc_dev_net_fail(const sc_net_args_t *a, uint32_t i, uint32_t ticket, int why,
                               sc_dev_error_t *err) {
  const sc_net_op_t *op = &a->ops[i];
  /* A wait without progress reads as a send or receive that timed out. */
  err->kind = why == SC_DEV_TIMEOUT ? SC_DEV_NET_TIMEOUT : why;
  err->a = op->peer;
  err->b = (int64_t)ticket;
  err->c = (int64_t)op->bytes;
  err->d = op->kind;
  err->e = a->desc->guard.timeout_ms;
}

/* Waits until done word `*done` satisfies `reached(t)`; 0, or why not. */
SC_DEV_FN int sc_dev_net_await(sc_dev_ctx_t *ctx, sc_net_queue_t *q, const uint64_t *done,
                               uint32_t t, uint64_t *moved) {
  for (;;) {
    uint32_t seen = sc_dev_bell_read(&q->done_bell);
    if (sc_net_done_reached(sc_dev_load(done), t))
      return 0;
    uint64_t now = sc_dev_load(&q->moved);
    if (now != *moved) {
      *moved = now;
      sc_dev_progress(ctx);
    }
    int why = sc_dev_sleep(ctx, &q->done_bell, seen);
    if (why == SC_DEV_PEER_LEFT) {
      /* Departures are of ranks on this host: none of them is awaited here. */
      sc_dev_departed(ctx);
      why = 0;
    }
    if (why != 0)
      return why;
  }
}

SC_DEV_FN void sc_dev_net_run(sc_dev_ctx_t *ctx, const sc_net_args_t *a, sc_dev_error_t *err) {
  sc_net_desc_t *desc = a->desc;
  sc_net_queue_t *q = desc->queue;
  sc_guard_t guard = desc->guard;
  if (a->call != 0) { /* a step of a collective: its failure names the collective */
    guard.call = a->call;
    guard.seq = a->seq;
  }
  int why = sc_dev_begin(ctx, &guard);
  if (!sc_dev_leader(ctx))
    return;
  err->kind = SC_DEV_OK;
  if (why != 0) {
    if (a->nops > 0)
      sc_dev_net_fail(a, 0, 0, why, err); /* the sentence names the launch's first op */
    else
      err->kind = why;
    return;
  }
  uint32_t first = 0;
  uint64_t moved = sc_dev_load(&q->moved);
  /* Claim the launch's tickets at once: they are consecutive, so that the
   * host takes the ops in the order given (one peer's sends and receives
   * match the peer's in order). */
  for (;;) {
    first = sc_dev_load32(&desc->tickets);
    if (sc_dev_cas32(&desc->tickets, first, first + a->nops))
      break;
  }
  for (uint32_t i = 0; i < a->nops; i++) {
    uint32_t t = first + i;
    uint32_t slot = t % SC_NET_QUEUE_SLOTS;
    /* The slot's previous message (ticket t - SLOTS) must have finished; if
     * it has not, the host hears of the ops posted so far before this waits. */
    if (i > 0 && !sc_net_done_reached(sc_dev_load(&q->done[slot]), t - SC_NET_QUEUE_SLOTS))
      sc_dev_ring(&q->bell);
    why = sc_dev_net_await(ctx, q, &q->done[slot], t - SC_NET_QUEUE_SLOTS, &moved);
    if (why != 0) {
      sc_dev_net_fail(a, i, t, why, err);
      return;
    }
    sc_net_entry_t *e = &q->entry[slot];
    const sc_net_op_t *op = &a->ops[i];
    e->buf = (uint64_t)(uintptr_t)op->buf;
    e->bytes = op->bytes;
    e->peer = op->peer;
    e->kind = op->kind;
    sc_dev_store(&e->posted, (uint64_t)t + 1u);
  }
  /* One ring for the launch: each wakes the host's progress thread, and a
   * second wake-up while it takes the first op's work only costs a turn. */
  sc_dev_ring(&q->bell);
  for (uint32_t i = 0; i < a->nops; i++) {
    uint32_t t = first + i;
    const uint64_t *done = &q->done[t % SC_NET_QUEUE_SLOTS];
    why = sc_dev_net_await(ctx, q, done, t, &moved);
    if (why == 0 && (sc_dev_load(done) & SC_SLOT_ERROR)) {
      /* The host stopped the communicator before marking it: its sentence. */
      why = sc_dev_stopped(ctx);
      if (why == 0)
        why = SC_DEV_PEER_FAILED;
    }
    if (why != 0) {
      sc_dev_net_fail(a, i, t, why, err);
      return;
    }
  }
}

#endif
