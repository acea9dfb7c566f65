/* SYMCOMM_BACKEND: which device backend this process uses. The CUDA backend
 * is a shared object of its own (backend.h), looked for at
 * SYMCOMM_CUDA_BACKEND_PATH, else next to this library, else on the library
 * search path, and loaded once per process; it says itself whether a driver
 * and a device are usable. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backend/backend.h"
#include "util/param.h"

static pthread_once_t sc_cuda_once = PTHREAD_ONCE_INIT;
static const sc_backend_ops_t *sc_cuda_ops;
static char sc_cuda_where[PATH_MAX];
static char sc_cuda_missing[PATH_MAX + 256]; /* why there is no ops table */

static const sc_backend_services_t sc_services = {
    .size = sizeof(sc_backend_services_t),
    .abi = SC_BACKEND_ABI,
    .raise = sc_error_raise,
    .pass = sc_error_pass,
    .log = sc_log,
    .log_enabled = sc_log_enabled,
};

/* The directory of the object this code is in (libsymcomm.so, or a program
 * linked with libsymcomm.a), with a trailing '/'; "" if unknown. */
static void sc_own_directory(char *dir, size_t len) {
  Dl_info info;
  dir[0] = '\0';
  if (dladdr((void *)sc_backend_select, &info) == 0 || info.dli_fname == NULL)
    return;
  const char *slash = strrchr(info.dli_fname, '/');
  if (slash != NULL && (size_t)(slash - info.dli_fname) + 2 <= len)
    snprintf(dir, len, "%.*s/", (int)(slash - info.dli_fname), info.dli_fname);
}

static void *sc_cuda_open(void) {
  const char *path = sc_param_string(SC_PARAM_CUDA_BACKEND_PATH);
  if (path != NULL && path[0] != '\0') {
    snprintf(sc_cuda_where, sizeof(sc_cuda_where), "%s", path);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
      const char *e = dlerror();
      snprintf(sc_cuda_missing, sizeof(sc_cuda_missing),
               "%s missing or unloadable (SYMCOMM_CUDA_BACKEND_PATH=%s: %s)",
               SC_BACKEND_CUDA_LIBRARY, path, e != NULL ? e : "dlopen failed");
    }
    return lib;
  }
  char dir[PATH_MAX];
  sc_own_directory(dir, sizeof(dir));
  snprintf(sc_cuda_where, sizeof(sc_cuda_where), "%s%s", dir, SC_BACKEND_CUDA_LIBRARY);
  if (dir[0] != '\0' && access(sc_cuda_where, F_OK) == 0) {
    void *lib = dlopen(sc_cuda_where, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
      const char *e = dlerror();
      snprintf(sc_cuda_missing, sizeof(sc_cuda_missing), "%s unloadable: %s", sc_cuda_where,
               e != NULL ? e : "dlopen failed");
    }
    return lib;
  }
  snprintf(sc_cuda_where, sizeof(sc_cuda_where), "%s", SC_BACKEND_CUDA_LIBRARY);
  void *lib = dlopen(SC_BACKEND_CUDA_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL)
    snprintf(sc_cuda_missing, sizeof(sc_cuda_missing),
             "%s missing (not in %s nor on the library search path; this build may have had no "
             "nvcc, or set SYMCOMM_CUDA_BACKEND_PATH)",
             SC_BACKEND_CUDA_LIBRARY, dir[0] ? dir : "this library's directory");
  return lib;
}

/* Never unloaded: its kernels and threads may be in use until the process ends. */
static void sc_cuda_load(void) {
  void *lib = sc_cuda_open();
  if (lib == NULL)
    return;
  sc_backend_entry_t entry = (sc_backend_entry_t)dlsym(lib, SC_BACKEND_CUDA_ENTRY);
  const sc_backend_ops_t *ops = entry != NULL ? entry(&sc_services) : NULL;
  if (ops == NULL || ops->size != sizeof(sc_backend_ops_t)) {
    snprintf(sc_cuda_missing, sizeof(sc_cuda_missing),
             "%s is from another build of symcomm (%s; this library's ops table is %zu bytes)",
             sc_cuda_where,
             entry == NULL  ? "it has no " SC_BACKEND_CUDA_ENTRY
             : ops == NULL ? "it refused this library's services"
                           : "its ops table differs in size",
             sizeof(sc_backend_ops_t));
    dlclose(lib);
    return;
  }
  sc_cuda_ops = ops;
}

/* The CUDA backend if it can run here; else NULL and the reason. */
static const sc_backend_ops_t *sc_backend_cuda(char *why, size_t len) {
  pthread_once(&sc_cuda_once, sc_cuda_load);
  if (sc_cuda_ops == NULL) {
    snprintf(why, len, "%s", sc_cuda_missing);
    return NULL;
  }
  return sc_cuda_ops->available(why, len) == SYMCOMM_OK ? sc_cuda_ops : NULL;
}

sc_result_t sc_backend_select(const char *want, const sc_backend_ops_t **ops) {
  const char *source = want != NULL ? "config.backend" : "SYMCOMM_BACKEND";
  if (want == NULL)
    want = sc_param_string(SC_PARAM_BACKEND);
  char why[PATH_MAX + 512];
  if (want == NULL || strcasecmp(want, "auto") == 0) {
    const sc_backend_ops_t *cuda = sc_backend_cuda(why, sizeof(why));
    if (cuda != NULL) {
      SC_INFO(SC_INIT, "%s=auto: using the CUDA backend (%s)", source, sc_cuda_where);
      *ops = cuda;
    } else {
      SC_INFO(SC_INIT, "%s=auto: using the simulated-GPU backend (host): no usable GPU here: %s",
              source, why);
      *ops = &sc_backend_host;
    }
    return SYMCOMM_OK;
  }
  if (strcasecmp(want, "host") == 0) {
    SC_INFO(SC_INIT, "%s=host: using the simulated-GPU backend", source);
    *ops = &sc_backend_host;
    return SYMCOMM_OK;
  }
  if (strcasecmp(want, "cuda") == 0) {
    const sc_backend_ops_t *cuda = sc_backend_cuda(why, sizeof(why));
    if (cuda == NULL)
      return SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_INIT,
                      "%s=cuda: the CUDA backend cannot run here: %s; use host (simulated GPUs) "
                      "or auto",
                      source, why);
    SC_INFO(SC_INIT, "%s=cuda: using the CUDA backend (%s)", source, sc_cuda_where);
    *ops = cuda;
    return SYMCOMM_OK;
  }
  return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV,
                  "%s='%s' is not a backend: use auto, host or cuda", source, want);
}
