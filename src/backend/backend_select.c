/* SYMCOMM_BACKEND: which device backend this process uses. */
#include <strings.h>

#include "backend/backend.h"
#include "util/param.h"

sc_result_t sc_backend_select(const sc_backend_ops_t **ops) {
  const char *want = sc_param_string(SC_PARAM_BACKEND);
  if (want == NULL || strcasecmp(want, "auto") == 0) {
    SC_INFO(SC_INIT, "SYMCOMM_BACKEND=auto: using the simulated-GPU backend (host); this version "
                     "has no CUDA backend");
    *ops = &sc_backend_host;
    return SYMCOMM_OK;
  }
  if (strcasecmp(want, "host") == 0) {
    SC_INFO(SC_INIT, "SYMCOMM_BACKEND=host: using the simulated-GPU backend");
    *ops = &sc_backend_host;
    return SYMCOMM_OK;
  }
  if (strcasecmp(want, "cuda") == 0)
    return SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_INIT,
                    "SYMCOMM_BACKEND=cuda: the CUDA backend is not in this version of symcomm; "
                    "use host (simulated GPUs) or auto");
  return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV,
                  "SYMCOMM_BACKEND='%s' is not a backend: use auto, host or cuda", want);
}
