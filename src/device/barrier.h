/* The BARRIER and COPIES programs, the steps collectives are built from
 * besides REDUCE (device/reduce.h). Include after the backend's runtime. */
#ifndef SC_DEVICE_BARRIER_H
#define SC_DEVICE_BARRIER_H

#include "device/runtime.h"

/* What a rank whose barrier gave up leaves in its arrived slot, for the
 * ranks that then find the barrier marked failed: why (SC_BARRIER_TIMED_OUT,
 * or SC_BARRIER_STOPPED | the stop code it relays), the rank that names
 * (+1), and for a timeout the rank it waited for (+1). */
#define SC_BARRIER_TIMED_OUT 0x01u
#define SC_BARRIER_STOPPED 0x80u

SC_DEV_FN uint64_t sc_barrier_mark(uint32_t why, int named, int other) {
  return SC_SLOT_ERROR | (uint64_t)(why & 0xffu) << 48 | (uint64_t)((uint32_t)(named + 1) & 0xffffffu) << 24 |
         (uint64_t)((uint32_t)(other + 1) & 0xffffffu);
}

/* The barrier gave up: every rank's later barriers fail at once, and learn
 * why from this rank's arrived slot. */
SC_DEV_FN void sc_dev_barrier_poison(const sc_barrier_args_t *a, uint64_t mark) {
  sc_dev_store(a->arrived[a->me], mark); /* only this rank writes its arrived slot */
  for (int r = 0; r < a->n; r++) {
    sc_dev_or(a->slot[r], SC_SLOT_ERROR);
    sc_dev_ring(a->bell[r]);
  }
}

/* Someone marked the barrier failed: what its mark says, as this rank's
 * error (the same sentence as if this rank had heard it first). */
SC_DEV_FN void sc_dev_barrier_failed(const sc_barrier_args_t *a, sc_dev_error_t *err) {
  err->kind = SC_DEV_COLL_FAILED;
  err->a = -1;
  for (int r = 0; r < a->n && err->a < 0; r++) {
    uint64_t mark = sc_dev_load(a->arrived[r]);
    if (!(mark & SC_SLOT_ERROR))
      continue;
    uint32_t why = (uint32_t)(mark >> 48) & 0xffu;
    int named = (int)((mark >> 24) & 0xffffffu) - 1, other = (int)(mark & 0xffffffu) - 1;
    err->a = r;
    if (why & SC_BARRIER_STOPPED) {
      err->kind = SC_DEV_ABORTED;
      err->stop = (int32_t)(why & ~SC_BARRIER_STOPPED);
      err->stop_rank = named;
      err->why = 0;
    } else {
      err->b = other; /* r timed out waiting for `other` */
    }
  }
}

/* The wait gave up (`why`): note who had not arrived, then mark the barrier
 * with what the others should hear. */
SC_DEV_FN void sc_dev_barrier_give_up(const sc_barrier_args_t *a, int why, sc_dev_error_t *err) {
  uint64_t number = a->target / (uint64_t)a->n;
  err->kind = why;
  err->a = -1;
  err->b = 0;
  for (int r = 0; r < a->n; r++)
    if ((sc_dev_load(a->arrived[r]) & ~SC_SLOT_ERROR) < number) {
      if (err->a < 0)
        err->a = r;
      err->b++;
    }
  err->c = a->guard.timeout_ms;
  err->d = (int64_t)number;
  uint64_t mark;
  if (why == SC_DEV_TIMEOUT) {
    err->kind = SC_DEV_BARRIER_TIMEOUT;
    mark = sc_barrier_mark(SC_BARRIER_TIMED_OUT, a->me, (int)err->a);
  } else if (why == SC_DEV_ABORTED) {
    /* Relay the stop as the others would hear it of this rank. */
    uint32_t stop = (uint32_t)err->stop;
    int named = err->stop_rank;
    if (stop == SC_STOP_ABORTED || stop == SC_STOP_NONE) {
      stop = SC_STOP_PEER_ABORTED;
      named = a->me;
    } else if (stop == SC_STOP_FAILED_HERE) {
      stop = SC_STOP_PEER_FAILED;
      named = a->me;
    }
    mark = sc_barrier_mark(SC_BARRIER_STOPPED | stop, named, -1);
  } else {
    mark = sc_barrier_mark(0, a->me, -1);
  }
  sc_dev_barrier_poison(a, mark);
}

SC_DEV_FN void sc_dev_barrier_run(sc_dev_ctx_t *ctx, const sc_barrier_args_t *a,
                                  sc_dev_error_t *err) {
  int why = sc_dev_begin(ctx, &a->guard);
  err->kind = SC_DEV_OK;
  if (a->n < 1 || a->n > SC_BARRIER_MAX_RANKS || a->me < 0 || a->me >= a->n) {
    err->kind = SC_DEV_BAD_ARGS;
    err->a = SC_PROGRAM_BARRIER;
    return;
  }
  if (why != 0) { /* the communicator stopped: do not arrive, and keep the others out */
    sc_dev_barrier_give_up(a, why, err);
    return;
  }
  if (sc_dev_load(a->slot[a->me]) & SC_SLOT_ERROR) {
    sc_dev_barrier_failed(a, err);
    return;
  }
  if (a->tag[a->me] != 0)
    sc_dev_store(a->tag[a->me], a->value); /* before arriving: seen by whoever sees us arrive */
  sc_dev_store(a->arrived[a->me], a->target / (uint64_t)a->n);
  for (int r = 0; r < a->n; r++) {
    sc_dev_add(a->slot[r], 1);
    sc_dev_ring(a->bell[r]);
  }
  sc_doorbell_t *bell = a->bell[a->me];
  for (;;) {
    uint32_t seen = sc_dev_bell_read(bell);
    uint64_t have = sc_dev_load(a->slot[a->me]);
    /* Everyone arrived: this barrier is done, even if one that came later
     * has been marked failed since. */
    if ((have & ~SC_SLOT_ERROR) >= a->target)
      break;
    if (have & SC_SLOT_ERROR) {
      /* This rank's own stop (its abort) is what it reports, even when a
       * peer that heard of it marked the barrier first. */
      why = sc_dev_stopped(ctx);
      if (why != 0)
        sc_dev_barrier_give_up(a, why, err);
      else
        sc_dev_barrier_failed(a, err);
      return;
    }
    why = sc_dev_sleep(ctx, bell, seen);
    if (why != 0) {
      sc_dev_barrier_give_up(a, why, err);
      return;
    }
  }
  if (a->tag[a->me] != 0)
    for (int r = 0; r < a->n; r++) {
      uint64_t theirs = sc_dev_load(a->tag[r]);
      if (theirs != a->value) {
        err->kind = SC_DEV_DISAGREE;
        err->a = r;
        err->b = (int64_t)theirs;
        err->c = (int64_t)a->value;
        return;
      }
    }
}

SC_DEV_FN void sc_dev_copies_run(sc_dev_ctx_t *ctx, const sc_copies_args_t *a,
                                 sc_dev_error_t *err) {
  err->kind = SC_DEV_OK;
  if (a->n < 0 || a->n > SC_COPIES_MAX) {
    err->kind = SC_DEV_BAD_ARGS;
    err->a = SC_PROGRAM_COPIES;
    return;
  }
  for (int i = 0; i < a->n; i++)
    if (a->bytes[i] > 0)
      sc_dev_copy(ctx, a->dst[i], a->src[i], a->bytes[i]);
}

#endif
