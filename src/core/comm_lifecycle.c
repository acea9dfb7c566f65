/* The end of a communicator: destroy (local) and abort (from any thread). */
#include <stdio.h>

#include "core/stream.h"
#include "util/log.h"

symcomm_result_t symcomm_comm_destroy(symcomm_comm_t comm) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  SC_INFO(SC_INIT, "comm %p rank %d nranks %d - Destroy", (void *)comm, comm->rank, comm->nranks);
  /* Its work still queued on streams reads its memory: wait for it first
   * (after an abort it ends at once). */
  if (comm->ops != NULL) {
    sc_comm_drain(comm);
    sc_comm_forget_streams(comm);
  }
  /* The bootstrap says goodbye, so peers still waiting on this rank learn it
   * left on purpose; a root served here stays up until its clients leave. */
  sc_comm_free(comm);
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_comm_abort(symcomm_comm_t comm) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  if (atomic_exchange(&comm->aborted, true))
    return SYMCOMM_OK;
  SC_WARN(SC_INIT, "comm %p rank %d nranks %d - Abort", (void *)comm, comm->rank, comm->nranks);
  sc_wakeup_signal(&comm->abort_wake);
  if (comm->abort_word != NULL) /* the programs running on its streams give up */
    __atomic_store_n(comm->abort_word, 1, __ATOMIC_RELEASE);
  /* Tell the others now rather than at their timeout: the root fails every
   * wait of the session, and a rank that is not the root cuts its connection,
   * which the root reports as this rank being lost. */
  if (comm->root != NULL) {
    char why[128];
    snprintf(why, sizeof(why), "rank %d aborted the communicator", comm->rank);
    sc_store_server_fail_session(comm->root, comm->session, SYMCOMM_ERR_REMOTE, why);
  }
  sc_bootstrap_shutdown(&comm->boot);
  return SYMCOMM_OK;
}
