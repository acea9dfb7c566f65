/* What a program's end means for its communicator (the status block of
 * device/program.h). Include after the backend's runtime. */
#ifndef SC_DEVICE_STATUS_H
#define SC_DEVICE_STATUS_H

#include "device/runtime.h"

/* Failures that start here rather than follow one elsewhere: a wait that ran
 * out of time. The others (a stop, a peer's mark, a disagreement or a size
 * mismatch that both sides see) need nobody told. */
SC_DEV_FN int sc_dev_error_fails_comm(int kind) {
  return kind == SC_DEV_TIMEOUT || kind == SC_DEV_P2P_TIMEOUT || kind == SC_DEV_BARRIER_TIMEOUT ||
         kind == SC_DEV_NET_TIMEOUT;
}

/* Failures this program heard of from a peer's mark (a barrier's, or a stop
 * relayed by a pair) rather than from its own status block (whose stop comes
 * with the block's sentence): the host may not know them yet. */
SC_DEV_FN int sc_dev_error_relayed(const sc_dev_error_t *err) {
  return err->kind == SC_DEV_COLL_FAILED || (err->kind == SC_DEV_ABORTED && err->why == 0);
}

/* Run by a program that ended with `err` (one thread of it, at its end): its
 * failure, if it is the communicator's first, goes into `first`; the first
 * failure of its communicator that starts here (failed = 2), or that only a
 * peer's mark told it of (failed = 3), goes into `error`, for the host to
 * see: every later call is refused at once. */
SC_DEV_FN void sc_dev_publish_failure(sc_dev_status_t *status, const sc_dev_error_t *err) {
  if (status == 0 || err->kind == SC_DEV_OK)
    return;
  /* Whatever it was, the first one is the communicator's asynchronous error. */
  if (sc_dev_cas32(&status->first_failed, 0, 1)) {
    status->first = *err;
    sc_dev_store32(&status->first_failed, 2);
  }
  /* A wait for a rank that left fails this rank's communicator only: the
   * host stops it here without telling the root, as the others may go on. */
  int relayed = sc_dev_error_relayed(err);
  if (!relayed && !sc_dev_error_fails_comm(err->kind) && err->kind != SC_DEV_PEER_LEFT)
    return;
  if (!sc_dev_cas32(&status->failed, 0, 1))
    return; /* an earlier one is there */
  status->error = *err;
  sc_dev_store32(&status->failed, relayed ? 3u : 2u);
}

/* What a program that gives up leaves where its peers will look (a barrier:
 * its arrived slot; a send or receive: a line of the peer's pad), so that a
 * peer that finds the exchange marked failed reports the same cause, even
 * before its own host has heard of it:
 *   SC_SLOT_ERROR | why << 48 | (named + 1) << 24 | (other + 1)
 * why: SC_RELAY_TIMED_OUT (named timed out waiting for other), or
 * SC_RELAY_LEFT (named left, and the one that marked needed it), or
 * SC_RELAY_STOPPED | the stop code (named: the rank the stop names), or 0. */
#define SC_RELAY_TIMED_OUT 0x01u
#define SC_RELAY_LEFT 0x02u
#define SC_RELAY_STOPPED 0x80u

SC_DEV_FN uint64_t sc_dev_relay_pack(uint32_t why, int named, int other) {
  return SC_SLOT_ERROR | (uint64_t)(why & 0xffu) << 48 |
         (uint64_t)((uint32_t)(named + 1) & 0xffffffu) << 24 | (uint64_t)((uint32_t)(other + 1) & 0xffffffu);
}

/* The mark for a program of rank `me` that gave up with `err`, having waited
 * for rank `other`. */
SC_DEV_FN uint64_t sc_dev_relay_mark(const sc_dev_error_t *err, int me, int other) {
  if (sc_dev_error_fails_comm(err->kind))
    return sc_dev_relay_pack(SC_RELAY_TIMED_OUT, me, other);
  if (err->kind == SC_DEV_PEER_LEFT)
    return sc_dev_relay_pack(SC_RELAY_LEFT, (int)err->e, -1);
  if (err->kind != SC_DEV_ABORTED)
    return sc_dev_relay_pack(0, me, -1);
  /* Relay the stop as the others would hear it of this rank. */
  uint32_t stop = (uint32_t)err->stop;
  int named = err->stop_rank;
  if (stop == SC_STOP_ABORTED || stop == SC_STOP_NONE) {
    stop = SC_STOP_PEER_ABORTED;
    named = me;
  } else if (stop == SC_STOP_FAILED_HERE) {
    stop = SC_STOP_PEER_FAILED;
    named = me;
  }
  return sc_dev_relay_pack(SC_RELAY_STOPPED | stop, named, -1);
}

/* A mark found: a relayed stop or departure becomes this program's error (1); else 0, with
 * the rank that timed out and the one it waited for when it says so (-1s). */
SC_DEV_FN int sc_dev_relay_read(uint64_t mark, sc_dev_error_t *err, int *timed_out, int *waited_for) {
  uint32_t why = (uint32_t)(mark >> 48) & 0xffu;
  int named = (int)((mark >> 24) & 0xffffffu) - 1, other = (int)(mark & 0xffffffu) - 1;
  *timed_out = -1;
  *waited_for = -1;
  if (!(mark & SC_SLOT_ERROR))
    return 0;
  if (why & SC_RELAY_STOPPED) {
    err->kind = SC_DEV_ABORTED;
    err->stop = (int32_t)(why & ~SC_RELAY_STOPPED);
    err->stop_rank = named;
    err->stop_result = 0;
    err->why = 0;
    return 1;
  }
  if (why == SC_RELAY_LEFT) {
    err->kind = SC_DEV_PEER_LEFT;
    err->e = named;
    return 1;
  }
  if (why == SC_RELAY_TIMED_OUT) {
    *timed_out = named;
    *waited_for = other;
  }
  return 0;
}

#endif
