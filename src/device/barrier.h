/* The BARRIER and COPIES programs, the steps collectives are built from
 * besides REDUCE (device/reduce.h). Include after the backend's runtime. */
#ifndef SC_DEVICE_BARRIER_H
#define SC_DEVICE_BARRIER_H

#include "device/runtime.h"
#include "device/status.h"

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
  err->b = -1;
  for (int r = 0; r < a->n && err->a < 0; r++) {
    uint64_t mark = sc_dev_load(a->arrived[r]);
    if (!(mark & SC_SLOT_ERROR))
      continue;
    err->a = r;
    int timed_out, waited_for;
    if (!sc_dev_relay_read(mark, err, &timed_out, &waited_for))
      err->b = waited_for;
  }
}

/* The wait gave up (`why`): note who had not arrived, then mark the barrier
 * with what the others should hear. */
SC_DEV_FN void sc_dev_barrier_give_up(const sc_barrier_args_t *a, int why, sc_dev_error_t *err) {
  uint64_t number = a->target / (uint64_t)a->n;
  int64_t left = why == SC_DEV_PEER_LEFT ? err->e : -1;
  err->kind = why == SC_DEV_TIMEOUT ? SC_DEV_BARRIER_TIMEOUT : why;
  err->a = -1;
  err->b = 0;
  for (int r = 0; r < a->n; r++)
    if ((sc_dev_load(a->arrived[r]) & ~SC_SLOT_ERROR) < number) {
      if (err->a < 0)
        err->a = r;
      err->b++;
    }
  err->e = left;
  err->c = a->guard.timeout_ms;
  err->d = (int64_t)number;
  sc_dev_barrier_poison(a, sc_dev_relay_mark(err, a->me, (int)err->a));
}

SC_DEV_FN void sc_dev_barrier_run(sc_dev_ctx_t *ctx, const sc_barrier_args_t *a,
                                  sc_dev_error_t *err) {
  int why = sc_dev_begin(ctx, &a->guard);
  err->kind = SC_DEV_OK;
  if (a->n < 1 || a->n > SC_MAX_LOCAL_RANKS || a->me < 0 || a->me >= a->n) {
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
  uint64_t number = a->target / (uint64_t)a->n;
  sc_dev_store(a->arrived[a->me], number);
  for (int r = 0; r < a->n; r++) {
    sc_dev_add(a->slot[r], 1);
    sc_dev_ring(a->bell[r]);
  }
  sc_doorbell_t *bell = a->bell[a->me];
  uint64_t departed = 0; /* ranks that left, once a sleep said so */
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
    if (departed != 0) {
      /* Checked after `have`: a rank that arrived before leaving has. */
      for (int r = 0; r < a->n; r++)
        if ((departed >> r & 1) && (sc_dev_load(a->arrived[r]) & ~SC_SLOT_ERROR) < number) {
          err->e = r;
          sc_dev_barrier_give_up(a, SC_DEV_PEER_LEFT, err);
          return;
        }
    }
    why = sc_dev_sleep(ctx, bell, seen);
    if (why == SC_DEV_PEER_LEFT) {
      departed = sc_dev_departed(ctx); /* look at the slot once more, then at these */
      continue;
    }
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
  if (a->n < 0 || a->n > SC_MAX_LOCAL_RANKS) {
    err->kind = SC_DEV_BAD_ARGS;
    err->a = SC_PROGRAM_COPIES;
    return;
  }
  for (int i = 0; i < a->n; i++)
    if (a->bytes[i] > 0)
      sc_dev_copy(ctx, a->dst[i], a->src[i], a->bytes[i]);
}

#endif
