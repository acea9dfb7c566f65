/* The end of a communicator: destroy (local) and abort (from any thread).
 *
 * Abort may be called from any thread at any time until destroy returns,
 * destroy included: abort does all its work under the watch list's lock on a
 * communicator that is on the list, and destroy takes it off the list before
 * freeing anything, so neither ever touches freed memory. An abort during
 * destroy ends destroy's wait for the communicator's queued work. Once
 * destroy has returned, the handle is dead and its use undefined (symcomm.h):
 * abort and destroy then return INVALID_USAGE without touching it, as long as
 * no new communicator has been given the same address. */
#include <stdio.h>

#include "core/stream.h"
#include "util/log.h"

symcomm_result_t symcomm_comm_destroy(symcomm_comm_t comm) {
  sc_error_clear();
  if (comm == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "the communicator is NULL");
  SC_CHECK(sc_comm_watch_claim_destroy(comm));
  SC_INFO(SC_INIT, "comm %p rank %d nranks %d - Destroy", (void *)comm, comm->rank, comm->nranks);
  /* Its work still queued on streams reads its memory: wait for it first
   * (after an abort, or a failure anywhere in the job, it ends at once),
   * for at most its timeout. */
  bool idle = true;
  if (comm->ops != NULL) {
    idle = sc_comm_drain(comm);
    sc_comm_forget_streams(comm);
  }
  /* A failure of its own programs that the monitor has not looked at yet
   * (a timeout) goes to the root now: leaving says nothing of it, and the
   * other ranks must learn that the communicator failed. */
  if (comm->status != NULL && __atomic_load_n(&comm->status->failed, __ATOMIC_ACQUIRE) != 0)
    sc_comm_watch_poll_local(comm);
  /* Off the watch list first; then the bootstrap says goodbye, so peers still
   * waiting on this rank learn it left on purpose; a root served here stays
   * up until its clients leave. */
  if (idle)
    sc_comm_free(comm);
  else
    sc_comm_free_busy(comm);
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_comm_abort(symcomm_comm_t comm) {
  sc_error_clear();
  if (comm == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "the communicator is NULL");
  return sc_comm_watch_abort(comm);
}
