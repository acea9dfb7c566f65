#include "backend/dev_result.h"

sc_result_t sc_backend_dev_result(const sc_dev_error_t *err) {
  switch ((sc_dev_error_kind_t)err->kind) {
  case SC_DEV_OK: return SYMCOMM_OK;
  case SC_DEV_ABORTED: return SYMCOMM_ERR_ABORTED;
  case SC_DEV_TIMEOUT:
  case SC_DEV_P2P_TIMEOUT: return SYMCOMM_ERR_TIMEOUT;
  case SC_DEV_SIZE_MISMATCH:
  case SC_DEV_DISAGREE: return SYMCOMM_ERR_INVALID_USAGE; /* the two sides disagree */
  case SC_DEV_PEER_FAILED: return SYMCOMM_ERR_REMOTE;
  case SC_DEV_BAD_ARGS:
    return SYMCOMM_ERR_INTERNAL; /* public arguments are checked before launch */
  }
  return SYMCOMM_ERR_INTERNAL;
}
