/* Public streams. A stream can carry the work of any communicator of its
 * backend; each communicator remembers the streams it queued work on, so that
 * destroying it (or freeing one of its windows) first waits for that work:
 * nothing is unmapped under a program that still runs. Streams live in a
 * process-wide registry, so a communicator never touches a stream that was
 * destroyed, and a stream outlives the communicator that made it. */
#ifndef SC_CORE_STREAM_H
#define SC_CORE_STREAM_H

#include "core/comm.h"

#define SC_STREAM_MAGIC 0x4d525453u /* "STRM" */

struct symcomm_stream {
  uint32_t magic;
  const sc_backend_ops_t *ops;
  sc_stream_t *stream;
  struct symcomm_comm *creator; /* where its errors are reported; NULL once destroyed */
  int64_t timeout_ms;           /* its creator's: how long destroy waits for its work */
  int pins;                     /* drains waiting on it (registry lock) */
  struct symcomm_stream *next;  /* the registry */
};

/* Checks a stream passed with comm for queueing work, and notes that comm
 * queues work on it. */
sc_result_t sc_stream_use(struct symcomm_stream *stream, struct symcomm_comm *comm);

/* Waits for the work symcomm queued so far on every live stream comm used
 * (on a wrapped stream, up to symcomm's last launch there), all of it within
 * comm's timeout; errors stay with the streams. false when some of it still
 * ran at that deadline: a WARN said where, and the caller must keep what
 * that work may use (never free memory a kernel can still write). */
bool sc_comm_drain(struct symcomm_comm *comm);
/* Work queued on `after` from now on waits for what is queued on `before`
 * so far, through `event` (recorded there): nothing is queried or waited for
 * here. Nothing to wait for when `before` is NULL, is `after`, was destroyed
 * or stopped (its work has ended: run, or discarded), or when either stream
 * is capturing a CUDA graph (a capture can neither wait for eager work nor be
 * waited for: the caller orders graph launches against other work, as with
 * NCCL). */
sc_result_t sc_stream_follow(const struct symcomm_stream *before, struct symcomm_stream *after,
                             sc_event_t *event);
/* The communicator is going: its streams stop reporting to it. */
void sc_comm_forget_streams(struct symcomm_comm *comm);

#endif
