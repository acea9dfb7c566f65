#include "backend/dev_result.h"

sc_result_t sc_backend_dev_result(const sc_dev_error_t *err) {
  switch ((sc_dev_error_kind_t)err->kind) {
  case SC_DEV_OK: return SYMCOMM_OK;
  case SC_DEV_ABORTED:
    /* Stopped: by this rank's abort, by its own earlier failure (a timeout,
     * or what the network found: its result), or by another rank. */
    if (err->stop == SC_STOP_FAILED_HERE)
      return err->stop_result != 0 ? (sc_result_t)err->stop_result : SYMCOMM_ERR_TIMEOUT;
    return err->stop == SC_STOP_ABORTED || err->stop == SC_STOP_NONE ? SYMCOMM_ERR_ABORTED
                                                                     : SYMCOMM_ERR_REMOTE;
  case SC_DEV_TIMEOUT:
  case SC_DEV_BARRIER_TIMEOUT:
  case SC_DEV_P2P_TIMEOUT: return SYMCOMM_ERR_TIMEOUT;
  case SC_DEV_NET_TIMEOUT: return SYMCOMM_ERR_TIMEOUT;
  case SC_DEV_SIZE_MISMATCH:
  case SC_DEV_P2P_CROSSED: /* launches the caller did not order */
  case SC_DEV_DISAGREE: return SYMCOMM_ERR_INVALID_USAGE; /* the two sides disagree */
  case SC_DEV_OUT_OF_STEP: return SYMCOMM_ERR_INVALID_USAGE; /* a collective after a failed one */
  case SC_DEV_PEER_FAILED:
  case SC_DEV_COLL_FAILED:
  case SC_DEV_PEER_LEFT: return SYMCOMM_ERR_REMOTE;
  case SC_DEV_BAD_ARGS:
    return SYMCOMM_ERR_INTERNAL; /* public arguments are checked before launch */
  }
  return SYMCOMM_ERR_INTERNAL;
}
