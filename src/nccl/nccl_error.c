/* NCCL results and ncclGetLastError. The sentence that explains a failure is
 * kept per thread (NCCL's ncclGetLastError reports the calling thread's last
 * error too); the comm argument only selects whose symcomm sentence a failed
 * symcomm call leaves. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"

static __thread char shim_last_error[1024];

/* symcomm result -> ncclResult_t. README.md ("libnccl.so.2") shows the same table. */
static const ncclResult_t shim_result_table[] = {
    [SYMCOMM_OK] = ncclSuccess,
    [SYMCOMM_IN_PROGRESS] = ncclInProgress,
    [SYMCOMM_ERR_INVALID_ARGUMENT] = ncclInvalidArgument,
    [SYMCOMM_ERR_INVALID_USAGE] = ncclInvalidUsage,
    [SYMCOMM_ERR_SYSTEM] = ncclSystemError,
    [SYMCOMM_ERR_DEVICE] = ncclUnhandledCudaError,
    [SYMCOMM_ERR_REMOTE] = ncclRemoteError,
    [SYMCOMM_ERR_TIMEOUT] = ncclRemoteError,      /* a peer went silent for SYMCOMM_TIMEOUT */
    [SYMCOMM_ERR_ABORTED] = ncclInvalidUsage,     /* a call on a communicator this rank aborted */
    [SYMCOMM_ERR_OUT_OF_MEMORY] = ncclSystemError,
    [SYMCOMM_ERR_UNSUPPORTED] = ncclInvalidUsage, /* what symcomm cannot do */
    [SYMCOMM_ERR_INTERNAL] = ncclInternalError,
};

ncclResult_t shim_map_result(symcomm_result_t res) {
  if ((unsigned)res >= sizeof(shim_result_table) / sizeof(shim_result_table[0]))
    return ncclInternalError;
  return shim_result_table[res];
}

ncclResult_t shim_fail(ncclResult_t res, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(shim_last_error, sizeof(shim_last_error), fmt, ap);
  va_end(ap);
  return res;
}

ncclResult_t shim_result(symcomm_result_t res, symcomm_comm_t comm) {
  if (res == SYMCOMM_OK || res == SYMCOMM_IN_PROGRESS)
    return shim_map_result(res);
  const char *why = symcomm_last_error(comm);
  return shim_fail(shim_map_result(res), "%s (symcomm: %s)", why[0] ? why : "no sentence",
                   symcomm_result_string(res));
}

SHIM_API const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess: return "success";
  case ncclUnhandledCudaError: return "the device failed (ncclGetLastError says how)";
  case ncclSystemError: return "an operating-system call or an allocation failed (ncclGetLastError says which)";
  case ncclInternalError: return "a bug in symcomm's libnccl.so.2: please report it with the log";
  case ncclInvalidArgument: return "a bad argument (ncclGetLastError names it)";
  case ncclInvalidUsage: return "a call symcomm cannot do, or at the wrong time (ncclGetLastError says why)";
  case ncclRemoteError: return "another rank failed, left or went silent";
  case ncclInProgress: return "still in progress";
  default: return "not an ncclResult_t";
  }
}
SHIM_PROFILED(ncclGetErrorString);

SHIM_API const char *ncclGetLastError(ncclComm_t comm) {
  (void)comm;
  return shim_last_error;
}
SHIM_PROFILED(ncclGetLastError);
