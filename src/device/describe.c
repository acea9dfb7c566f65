/* Host-side sentences for the errors device programs report. */
#include <stdio.h>

#include "device/program.h"

static const char *sc_direction(int64_t d) { return d == 0 ? "send to" : "receive from"; }

void sc_dev_error_describe(const sc_dev_error_t *err, char *buf, size_t len) {
  switch ((sc_dev_error_kind_t)err->kind) {
  case SC_DEV_OK:
    snprintf(buf, len, "no error");
    return;
  case SC_DEV_ABORTED:
    snprintf(buf, len, "the communicator was aborted");
    return;
  case SC_DEV_TIMEOUT:
    snprintf(buf, len, "waited %.1f s without progress for a signal slot to reach %lld (it holds %lld)",
             (double)err->c / 1000.0, (long long)err->b, (long long)err->a);
    return;
  case SC_DEV_P2P_TIMEOUT:
    if (err->d == 0)
      snprintf(buf, len,
               "waited %.1f s without progress in send #%lld (%lld bytes) to rank %lld: has it "
               "posted the matching receive?",
               (double)err->e / 1000.0, (long long)err->b, (long long)err->c, (long long)err->a);
    else
      snprintf(buf, len,
               "waited %.1f s without progress in receive #%lld (%lld bytes) from rank %lld: has "
               "it posted the matching send?",
               (double)err->e / 1000.0, (long long)err->b, (long long)err->c, (long long)err->a);
    return;
  case SC_DEV_SIZE_MISMATCH:
    if (err->d == 0)
      snprintf(buf, len, "this send to rank %lld has %lld bytes, but rank %lld receives %lld bytes",
               (long long)err->a, (long long)err->b, (long long)err->a, (long long)err->c);
    else
      snprintf(buf, len,
               "this receive from rank %lld expects %lld bytes, but rank %lld sends %lld bytes",
               (long long)err->a, (long long)err->b, (long long)err->a, (long long)err->c);
    return;
  case SC_DEV_PEER_FAILED:
    snprintf(buf, len, "the exchange with rank %lld failed earlier (%s %lld); it cannot be used again",
             (long long)err->a, sc_direction(err->d), (long long)err->a);
    return;
  case SC_DEV_DISAGREE:
    snprintf(buf, len,
             "ranks disagree on a collective: rank %lld called it with tag %llx, this rank with %llx: "
             "a different operation, count, type, reduction or root; different SYMCOMM_ALGO, "
             "SYMCOMM_ONESHOT_MAX_BYTES or SYMCOMM_COLL_SCRATCH_BYTES; or an all-reduce whose buffers "
             "are windows on some ranks only, or at different offsets (SYMCOMM_CHECK=1 names the calls)",
             (long long)err->a, (unsigned long long)err->b, (unsigned long long)err->c);
    return;
  case SC_DEV_BAD_ARGS:
    snprintf(buf, len, "device program %lld was launched with arguments it cannot run with",
             (long long)err->a);
    return;
  }
  snprintf(buf, len, "device program error %d", (int)err->kind);
}
