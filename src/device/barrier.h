/* The BARRIER and COPIES programs, the steps collectives are built from
 * besides REDUCE (device/reduce.h). Include after the backend's runtime. */
#ifndef SC_DEVICE_BARRIER_H
#define SC_DEVICE_BARRIER_H

#include "device/runtime.h"

SC_DEV_FN void sc_dev_barrier_run(sc_dev_ctx_t *ctx, const sc_barrier_args_t *a,
                                  sc_dev_error_t *err) {
  sc_dev_begin(ctx, &a->guard);
  err->kind = SC_DEV_OK;
  if (a->n < 1 || a->n > SC_MAX_LOCAL_RANKS || a->me < 0 || a->me >= a->n) {
    err->kind = SC_DEV_BAD_ARGS;
    err->a = SC_PROGRAM_BARRIER;
    return;
  }
  if (a->tag[a->me] != 0)
    sc_dev_store(a->tag[a->me], a->value); /* before arriving: seen by whoever sees us arrive */
  for (int r = 0; r < a->n; r++) {
    sc_dev_add(a->slot[r], 1);
    sc_dev_ring(a->bell[r]);
  }
  sc_doorbell_t *bell = a->bell[a->me];
  for (;;) {
    uint32_t seen = sc_dev_bell_read(bell);
    if (sc_dev_load(a->slot[a->me]) >= a->target)
      break;
    int why = sc_dev_sleep(ctx, bell, seen);
    if (why != 0) {
      err->kind = why;
      err->a = (int64_t)sc_dev_load(a->slot[a->me]);
      err->b = (int64_t)a->target;
      err->c = a->guard.timeout_ms;
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
