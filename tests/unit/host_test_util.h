/* Helpers of the host-backend tests: a signal pad in plain memory and
 * launches of the SIGNAL and WAIT programs through the ops table. */
#ifndef SC_HOST_TEST_UTIL_H
#define SC_HOST_TEST_UTIL_H

#include <stdint.h>

#include "backend/backend.h"
#include "test_util.h"

typedef struct test_pad {
  sc_doorbell_t bell;
  uint64_t slot[8];
} test_pad_t;

static inline void launch_signal(sc_stream_t *s, test_pad_t *pad, int slot, uint64_t value,
                                 int op) {
  sc_signal_args_t a = {.slot = &pad->slot[slot], .value = value, .op = op, .bell = &pad->bell};
  TEST_OK(sc_backend_host.launch(s, SC_PROGRAM_SIGNAL, &a, sizeof(a), SC_LAUNCH_ONE(NULL)));
}

static inline sc_wait_args_t wait_args(test_pad_t *pad, int slot, uint64_t value,
                                       int64_t timeout_ms, sc_dev_status_t *status) {
  sc_wait_args_t a = {.slot = &pad->slot[slot],
                      .value = value,
                      .cmp = SC_CMP_OP_GE,
                      .bell = &pad->bell,
                      .guard = {.status = status, .timeout_ms = timeout_ms}};
  return a;
}

static inline void launch_wait(sc_stream_t *s, test_pad_t *pad, int slot, uint64_t value,
                               int64_t timeout_ms, sc_dev_status_t *status) {
  sc_wait_args_t a = wait_args(pad, slot, value, timeout_ms, status);
  TEST_OK(sc_backend_host.launch(s, SC_PROGRAM_WAIT, &a, sizeof(a), SC_LAUNCH_ONE(NULL)));
}

#endif
