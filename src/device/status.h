/* What a program's end means for its communicator (the status block of
 * device/program.h). Include after the backend's runtime. */
#ifndef SC_DEVICE_STATUS_H
#define SC_DEVICE_STATUS_H

#include "device/runtime.h"

/* Failures that start here rather than follow one elsewhere: a wait that ran
 * out of time. The others (a stop, a peer's mark, a disagreement or a size
 * mismatch that both sides see) need nobody told. */
SC_DEV_FN int sc_dev_error_fails_comm(int kind) {
  return kind == SC_DEV_TIMEOUT || kind == SC_DEV_P2P_TIMEOUT || kind == SC_DEV_BARRIER_TIMEOUT;
}

/* Run by a program that ended with `err` (one thread of it, at its end): the
 * first failure of its communicator that starts here goes into the status
 * block, for the host to see in the background. */
SC_DEV_FN void sc_dev_publish_failure(sc_dev_status_t *status, const sc_dev_error_t *err) {
  if (status == 0 || !sc_dev_error_fails_comm(err->kind))
    return;
  if (!sc_dev_cas32(&status->failed, 0, 1))
    return; /* an earlier one is there */
  status->error = *err;
  sc_dev_store32(&status->failed, 2);
}

#endif
