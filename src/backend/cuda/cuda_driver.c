/* Loading the CUDA driver (cuda_driver.h) and the sentences of its failures. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/cuda/cuda_driver.h"
#include "backend/cuda/cuda_internal.h"

sc_cuda_driver_t sc_cu;

static pthread_once_t sc_cuda_once = PTHREAD_ONCE_INIT;
static const sc_cuda_driver_t *sc_cuda_loaded;
static char sc_cuda_why[512];

static void sc_cuda_version_text(int v, char *buf, size_t len) {
  snprintf(buf, len, "%d.%d", v / 1000, v % 1000 / 10);
}

/* Fills sc_cu, or says in sc_cuda_why what is missing. The library stays
 * loaded for the life of the process (the driver does not support unloading
 * under live contexts). */
static void sc_cuda_load(void) {
  char *why = sc_cuda_why;
  size_t len = sizeof(sc_cuda_why);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *e = dlerror();
    snprintf(why, len, "no libcuda.so.1 (the NVIDIA driver is not installed here: %s)",
             e != NULL ? e : "dlopen failed");
    return;
  }
  PFN_cuGetProcAddress_v12000 get = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
  if (get == NULL) {
    snprintf(why, len,
             "driver older than 12.0 (its libcuda.so.1 has no cuGetProcAddress_v2; symcomm's "
             "kernels need a %d.%d driver or newer)",
             SC_CUDA_DRIVER_MIN / 1000, SC_CUDA_DRIVER_MIN % 1000 / 10);
    return;
  }
  sc_cuda_driver_t d;
  CUdriverProcAddressQueryResult found;
  CUresult rc;
  void *fn;
  /* The version first: an old driver is named as such, not by a missing entry. */
  rc = get("cuDriverGetVersion", &fn, 2020, CU_GET_PROC_ADDRESS_DEFAULT, &found);
  if (rc != CUDA_SUCCESS || fn == NULL) {
    snprintf(why, len, "cuGetProcAddress(cuDriverGetVersion) failed with CUresult %d", (int)rc);
    return;
  }
  d.cuDriverGetVersion = (PFN_cuDriverGetVersion_v2020)fn;
  rc = d.cuDriverGetVersion(&d.version);
  if (rc != CUDA_SUCCESS) {
    snprintf(why, len, "cuDriverGetVersion failed with CUresult %d", (int)rc);
    return;
  }
  char have[16], need[16];
  sc_cuda_version_text(d.version, have, sizeof(have));
  sc_cuda_version_text(SC_CUDA_DRIVER_MIN, need, sizeof(need));
  if (d.version < SC_CUDA_DRIVER_FEATURES) {
    snprintf(why, len,
             "driver older than %s (it is CUDA %s): symcomm's send/recv kernel takes a 4 KiB "
             "parameter block, which needs large kernel parameters (a 12.1 driver), and the "
             "backend checks its kernels with cuFuncGetParamInfo (12.4)",
             need, have);
    return;
  }
  if (d.version < SC_CUDA_DRIVER_MIN) {
    snprintf(why, len,
             "driver older than %s (it is CUDA %s; this build's kernels were compiled by CUDA "
             "%d.%d and need a driver of at least their major version)",
             need, have, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    return;
  }
#define SC_CUDA_GET(name, ver)                                                                     \
  rc = get(#name, &fn, ver, CU_GET_PROC_ADDRESS_DEFAULT, &found);                                  \
  if (rc != CUDA_SUCCESS || fn == NULL || found != CU_GET_PROC_ADDRESS_SUCCESS) {                  \
    snprintf(why, len, "the driver lacks %s (version %d; cuGetProcAddress: CUresult %d, status %d)", \
             #name, ver, (int)rc, (int)found);                                                     \
    return;                                                                                        \
  }                                                                                                \
  d.name = (PFN_##name##_v##ver)fn;
  SC_CUDA_DRIVER_FNS(SC_CUDA_GET)
#undef SC_CUDA_GET
  rc = d.cuInit(0);
  if (rc != CUDA_SUCCESS) {
    const char *name = NULL;
    if (d.cuGetErrorName(rc, &name) != CUDA_SUCCESS)
      name = NULL;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (rc == CUDA_ERROR_NO_DEVICE)
      snprintf(why, len, "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE; CUDA_VISIBLE_DEVICES=%s)",
               visible != NULL ? visible : "(unset)");
    else
      snprintf(why, len, "no CUDA device usable (cuInit failed with %s)",
               name != NULL ? name : "an unknown CUresult");
    return;
  }
  int count = 0;
  rc = d.cuDeviceGetCount(&count);
  if (rc != CUDA_SUCCESS || count < 1) {
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    snprintf(why, len, "no CUDA device (cuDeviceGetCount: %d, CUresult %d; CUDA_VISIBLE_DEVICES=%s)",
             count, (int)rc, visible != NULL ? visible : "(unset)");
    return;
  }
  sc_cu = d;
  sc_cuda_loaded = &sc_cu;
}

const sc_cuda_driver_t *sc_cuda_driver(char *why, size_t len) {
  pthread_once(&sc_cuda_once, sc_cuda_load);
  if (sc_cuda_loaded == NULL && why != NULL)
    snprintf(why, len, "%s", sc_cuda_why);
  return sc_cuda_loaded;
}

const char *sc_cuda_result_name(CUresult rc) {
  static __thread char unknown[32];
  const char *name = NULL;
  if (sc_cuda_loaded != NULL && sc_cu.cuGetErrorName(rc, &name) == CUDA_SUCCESS && name != NULL)
    return name;
  snprintf(unknown, sizeof(unknown), "CUresult %d", (int)rc);
  return unknown;
}

sc_result_t sc_cuda_call(CUresult rc, const char *call, const char *file, int line, const char *fmt,
                         ...) {
  if (rc == CUDA_SUCCESS)
    return SYMCOMM_OK;
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  const char *text = NULL;
  if (sc_cuda_loaded == NULL || sc_cu.cuGetErrorString(rc, &text) != CUDA_SUCCESS || text == NULL)
    text = "no description";
  sc_result_t result = rc == CUDA_ERROR_OUT_OF_MEMORY ? SYMCOMM_ERR_OUT_OF_MEMORY : SYMCOMM_ERR_DEVICE;
  return sc_error_raise(result, SC_CUDA_LOG, file, line, "%s: %s failed with %s (%s)", what, call,
                        sc_cuda_result_name(rc), text);
}
