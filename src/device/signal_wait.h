/* The SIGNAL and WAIT programs: one 64-bit slot of a signal pad, set or added
 * to with release semantics, or waited on with acquire semantics. Include
 * after the backend's runtime (device/runtime.h). */
#ifndef SC_DEVICE_SIGNAL_WAIT_H
#define SC_DEVICE_SIGNAL_WAIT_H

#include "device/runtime.h"

SC_DEV_FN void sc_dev_signal_run(sc_dev_ctx_t *ctx, const sc_signal_args_t *a,
                                 sc_dev_error_t *err) {
  (void)ctx;
  if (a->op == SC_SIGNAL_OP_ADD)
    sc_dev_add(a->slot, a->value);
  else
    sc_dev_store(a->slot, a->value);
  sc_dev_ring(a->bell);
  err->kind = SC_DEV_OK;
}

SC_DEV_FN int sc_dev_compare(uint64_t have, int cmp, uint64_t want) {
  return cmp == SC_CMP_OP_EQ ? have == want : have >= want;
}

SC_DEV_FN void sc_dev_wait_run(sc_dev_ctx_t *ctx, const sc_wait_args_t *a, sc_dev_error_t *err) {
  int why = sc_dev_begin(ctx, &a->guard);
  uint64_t last = sc_dev_load(a->slot);
  while (why == 0) {
    uint32_t seen = sc_dev_bell_read(a->bell);
    uint64_t have = sc_dev_load(a->slot);
    if (sc_dev_compare(have, a->cmp, a->value)) {
      err->kind = SC_DEV_OK;
      return;
    }
    if (have != last) { /* moving towards it: the timeout counts from here */
      last = have;
      sc_dev_progress(ctx);
    }
    why = sc_dev_sleep(ctx, a->bell, seen);
    if (why == SC_DEV_PEER_LEFT) {
      /* Any rank may signal this slot: a departure alone ends nothing. */
      sc_dev_departed(ctx);
      why = 0;
    }
  }
  err->kind = why;
  err->a = (int64_t)sc_dev_load(a->slot);
  err->b = (int64_t)a->value;
  err->c = a->guard.timeout_ms;
}

#endif
