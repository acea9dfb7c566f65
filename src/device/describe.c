/* Host-side sentences for the errors device programs report. */
#include <stdio.h>

#include "device/program.h"

static const char *sc_direction(int64_t d) { return d == 0 ? "send to" : "receive from"; }

/* The collectives, in sc_coll_kind_t order (SC_CALL_COLL + kind). */
static const char *const sc_call_coll_names[] = {"all-reduce",  "reduce",         "broadcast",
                                                 "all-gather", "reduce-scatter", "all-to-all"};
#define SC_CALL_COLL_COUNT (int)(sizeof(sc_call_coll_names) / sizeof(sc_call_coll_names[0]))

/* What the failed launch was part of: "all-reduce #7", "receive #3 from rank 2". */
static void sc_call_describe(const sc_dev_error_t *err, char *buf, size_t len) {
  int coll = err->call - SC_CALL_COLL;
  if (coll >= 0 && coll < SC_CALL_COLL_COUNT)
    snprintf(buf, len, "%s #%llu", sc_call_coll_names[coll], (unsigned long long)err->seq);
  else if (err->call == SC_CALL_P2P)
    snprintf(buf, len, "%s #%lld %s rank %lld", err->d == 0 ? "send" : "receive", (long long)err->b,
             err->d == 0 ? "to" : "from", (long long)err->a);
  else if (err->call == SC_CALL_NET)
    snprintf(buf, len, "%s of %lld bytes %s rank %lld (another host)", err->d == 0 ? "send" : "receive",
             (long long)err->c, err->d == 0 ? "to" : "from", (long long)err->a);
  else if (err->call == SC_CALL_WAIT_SIGNAL)
    snprintf(buf, len, "a wait for a window's signal");
  else
    snprintf(buf, len, "a device program");
}

/* SC_DEV_ABORTED: the communicator stopped, and why. */
static void sc_stop_describe(const sc_dev_error_t *err, const char *call, char *buf, size_t len) {
  const char *why = err->why != NULL ? err->why : "";
  int rank = err->stop_rank;
  switch ((sc_stop_t)err->stop) {
  case SC_STOP_FAILED_HERE:
    snprintf(buf, len, "%s was stopped: the communicator failed earlier on this rank: %s", call, why);
    return;
  case SC_STOP_PEER_EXITED:
    snprintf(buf, len,
             "rank %d exited during %s (its connection to the root dropped: the process ended or "
             "was killed)",
             rank, call);
    return;
  case SC_STOP_PEER_ABORTED:
    snprintf(buf, len, "rank %d aborted the communicator during %s", rank, call);
    return;
  case SC_STOP_PEER_FAILED:
    snprintf(buf, len, "rank %d failed during %s%s%s", rank, call, why[0] ? ": " : "", why);
    return;
  case SC_STOP_ROOT_LOST:
    snprintf(buf, len, "the communicator's root went away during %s: %s", call, why);
    return;
  case SC_STOP_SESSION_FAILED:
    snprintf(buf, len, "the communicator failed during %s: %s", call, why);
    return;
  case SC_STOP_NONE:
  case SC_STOP_ABORTED:
    break;
  }
  snprintf(buf, len, "the communicator was aborted during %s", call);
}

static void sc_timeout_describe(const sc_dev_error_t *err, const char *call, char *buf, size_t len) {
  double s = (double)err->c / 1000.0;
  if (err->call == SC_CALL_WAIT_SIGNAL)
    snprintf(buf, len, "waited %.1f s without progress for a window's signal slot to reach %lld (it holds %lld)",
             s, (long long)err->b, (long long)err->a);
  else
    snprintf(buf, len, "waited %.1f s without progress for a signal slot to reach %lld (it holds %lld)",
             s, (long long)err->b, (long long)err->a);
}

void sc_dev_error_describe(const sc_dev_error_t *err, char *buf, size_t len) {
  char call[96];
  sc_call_describe(err, call, sizeof(call));
  switch ((sc_dev_error_kind_t)err->kind) {
  case SC_DEV_OK:
    snprintf(buf, len, "no error");
    return;
  case SC_DEV_ABORTED:
    sc_stop_describe(err, call, buf, len);
    return;
  case SC_DEV_TIMEOUT:
    sc_timeout_describe(err, call, buf, len);
    return;
  case SC_DEV_BARRIER_TIMEOUT:
    if (err->b > 1)
      snprintf(buf, len,
               "%s waited %.1f s without progress for %lld ranks to arrive (rank %lld and others "
               "never reached barrier %lld)",
               call, (double)err->c / 1000.0, (long long)err->b, (long long)err->a, (long long)err->d);
    else if (err->d == 0) /* the LL protocol: no barrier */
      snprintf(buf, len, "%s waited %.1f s without progress for rank %lld's part of the call",
               call, (double)err->c / 1000.0, (long long)err->a);
    else
      snprintf(buf, len,
               "%s waited %.1f s without progress for rank %lld to arrive (it never reached "
               "barrier %lld)",
               call, (double)err->c / 1000.0, (long long)err->a, (long long)err->d);
    return;
  case SC_DEV_COLL_FAILED:
    if (err->a >= 0 && err->b >= 0)
      snprintf(buf, len, "%s failed: rank %lld timed out waiting for rank %lld to arrive", call,
               (long long)err->a, (long long)err->b);
    else if (err->a >= 0)
      snprintf(buf, len, "%s failed: rank %lld gave up on the collectives of this communicator",
               call, (long long)err->a);
    else
      snprintf(buf, len, "%s failed: another rank gave up on the collectives of this communicator",
               call);
    return;
  case SC_DEV_NET_TIMEOUT: {
    char op[128];
    snprintf(op, sizeof(op), "a %s of %lld bytes %s rank %lld (another host)",
             err->d == 0 ? "send" : "receive", (long long)err->c, err->d == 0 ? "to" : "from",
             (long long)err->a);
    snprintf(buf, len,
             "%s%swaited %.1f s without progress in %s: is that rank alive and its network up, "
             "and has it posted the matching %s?",
             err->call == SC_CALL_NET ? "" : call, err->call == SC_CALL_NET ? "" : ": ",
             (double)err->e / 1000.0, op, err->d == 0 ? "receive" : "send");
    return;
  }
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
  case SC_DEV_PEER_LEFT:
    if (err->call == SC_CALL_P2P && err->untaken)
      snprintf(buf, len,
               "rank %lld left (destroyed its communicator) before taking %s, which had ended "
               "(it went eagerly); this later send to rank %lld cannot go",
               (long long)err->e, call, (long long)err->a);
    else if (err->call == SC_CALL_P2P && err->a != err->e)
      snprintf(buf, len,
               "rank %lld left (destroyed its communicator) during %s, which gave up waiting for it",
               (long long)err->e, call);
    else
      snprintf(buf, len, "rank %lld left (destroyed its communicator) during %s", (long long)err->e,
               call);
    return;
  case SC_DEV_SIZE_MISMATCH:
    if (err->d == 0 && err->e > 0) /* found at this send's start: an eager one that ended */
      snprintf(buf, len,
               "send #%lld to rank %lld had %lld bytes, but rank %lld receives %lld bytes: it "
               "refused that message after the send had ended (it went eagerly), so this later "
               "send to rank %lld fails",
               (long long)(err->e - 1), (long long)err->a, (long long)err->b, (long long)err->a,
               (long long)err->c, (long long)err->a);
    else if (err->d == 0)
      snprintf(buf, len, "this send to rank %lld has %lld bytes, but rank %lld receives %lld bytes",
               (long long)err->a, (long long)err->b, (long long)err->a, (long long)err->c);
    else
      snprintf(buf, len,
               "this receive from rank %lld expects %lld bytes, but rank %lld sends %lld bytes",
               (long long)err->a, (long long)err->b, (long long)err->a, (long long)err->c);
    return;
  case SC_DEV_P2P_CROSSED:
    snprintf(buf, len,
             "%s #%lld (%lld bytes) %s rank %lld ran at the same time as another launch's %s with "
             "that rank, which symcomm had not ordered (a CUDA graph launched while other sends "
             "or receives with that peer run?): order them",
             err->d == 0 ? "send" : "receive", (long long)err->b, (long long)err->c,
             err->d == 0 ? "to" : "from", (long long)err->a, err->d == 0 ? "send" : "receive");
    return;
  case SC_DEV_PEER_FAILED:
    snprintf(buf, len, "the exchange with rank %lld failed earlier (%s %lld); it cannot be used again",
             (long long)err->a, sc_direction(err->d), (long long)err->a);
    return;
  case SC_DEV_DISAGREE:
    snprintf(buf, len,
             "ranks disagree on a collective: rank %lld called it with tag %llx, this rank with %llx: "
             "a different operation, count, type, reduction or root; different SYMCOMM_ALGO, "
             "SYMCOMM_ONESHOT_MAX_BYTES, SYMCOMM_COLL_BLOCKS, SYMCOMM_COLL_MAX_BLOCKS or "
             "SYMCOMM_COLL_SCRATCH_BYTES; or buffers that are windows on "
             "some ranks only, or at different offsets, or overlap on some ranks only (all-reduce, "
             "all-gather, reduce-scatter, all-to-all; SYMCOMM_CHECK=1 names the calls)",
             (long long)err->a, (unsigned long long)err->b, (unsigned long long)err->c);
    return;
  case SC_DEV_OUT_OF_STEP:
    snprintf(buf, len,
             "%s was not run: collective #%lld failed on this rank before it, so the ranks are "
             "out of step; abort and destroy this communicator",
             call, (long long)err->a);
    return;
  case SC_DEV_BAD_ARGS:
    snprintf(buf, len, "device program %lld was launched with arguments it cannot run with",
             (long long)err->a);
    return;
  }
  snprintf(buf, len, "device program error %d", (int)err->kind);
}
