/* libnvidia-ml.so.1 opened at run time: symcomm never links NVML, so one
 * build runs on hosts with and without a GPU driver. */
#include <dlfcn.h>
#include <string.h>

#include "topo/nvml_api.h"
#include "util/param.h"

#define SC_NVML_SONAME "libnvidia-ml.so.1"

/* dlsym returns an object pointer; POSIX guarantees it converts to a
 * function pointer, which ISO C does not say: go through memcpy. */
static bool sc_nvml_sym(void *handle, const char *name, void *fn, size_t fn_size) {
  void *sym = dlsym(handle, name);
  if (sym == NULL)
    return false;
  memcpy(fn, &sym, fn_size);
  return true;
}

#define SC_NVML_SYM(lib, field, name)                                                              \
  sc_nvml_sym((lib)->handle, (name), &(lib)->fns.field, sizeof((lib)->fns.field))

bool sc_nvml_open(const char *soname, sc_nvml_lib_t *lib, char *why, size_t why_len) {
  memset(lib, 0, sizeof(*lib));
  lib->handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == NULL) {
    const char *err = dlerror();
    return sc_topo_why(why, why_len, "no %s (%s)", soname, err != NULL ? err : "dlopen failed");
  }
  const char *missing = NULL;
#define SC_NVML_NEED(field, name)                                                                  \
  if (missing == NULL && !SC_NVML_SYM(lib, field, name))                                           \
  missing = name
  SC_NVML_NEED(init, "nvmlInit_v2");
  SC_NVML_NEED(shutdown, "nvmlShutdown");
  SC_NVML_NEED(error_string, "nvmlErrorString");
  SC_NVML_NEED(device_count, "nvmlDeviceGetCount_v2");
  SC_NVML_NEED(device_by_index, "nvmlDeviceGetHandleByIndex_v2");
  SC_NVML_NEED(pci_info, "nvmlDeviceGetPciInfo_v3");
  SC_NVML_NEED(nvlink_state, "nvmlDeviceGetNvLinkState");
  SC_NVML_NEED(nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
#undef SC_NVML_NEED
  if (missing != NULL) {
    dlclose(lib->handle);
    lib->handle = NULL;
    return sc_topo_why(why, why_len, "%s has no %s (a driver too old)", soname, missing);
  }
  /* Optional: older drivers lack them, and the table says what that means. */
  SC_NVML_SYM(lib, nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
  SC_NVML_SYM(lib, common_ancestor, "nvmlDeviceGetTopologyCommonAncestor");
  sc_nvml_return_t r = lib->fns.init();
  if (r != SC_NVML_SUCCESS) {
    const char *text = lib->fns.error_string(r);
    sc_topo_why(why, why_len, "nvmlInit_v2: %s", text != NULL ? text : "unknown NVML error");
    dlclose(lib->handle);
    lib->handle = NULL;
    return false;
  }
  return true;
}

void sc_nvml_close(sc_nvml_lib_t *lib) {
  if (lib->handle == NULL)
    return;
  lib->fns.shutdown();
  dlclose(lib->handle);
  lib->handle = NULL;
}

bool sc_topo_nvml_read(sc_topo_t **out, char *why, size_t why_len) {
  sc_nvml_lib_t lib;
  if (!sc_nvml_open(SC_NVML_SONAME, &lib, why, why_len))
    return false;
  sc_topo_t *host = NULL;
  bool ok = sc_topo_from_nvml(&lib.fns, &host, why, why_len);
  sc_nvml_close(&lib);
  if (!ok)
    return false;
  /* Set but empty, CUDA sees no device; the parameter table reads that as unset. */
  const char *visible = sc_param_is_empty(SC_PARAM_CUDA_VISIBLE_DEVICES)
                            ? ""
                            : sc_param_string(SC_PARAM_CUDA_VISIBLE_DEVICES);
  ok = sc_topo_select_visible(host, visible, out, why, why_len);
  sc_topo_free(host);
  return ok;
}
