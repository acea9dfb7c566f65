/* The kernels: a fatbin (sm_90 code and compute_90 PTX) that the build
 * embeds in this shared object (cuda_fatbin.S), loaded into a device's
 * context when it opens, one kernel per device program. */
#include <stdint.h>

#include "backend/cuda/cuda_internal.h"

extern const unsigned char sc_cuda_fatbin[];
extern const unsigned char sc_cuda_fatbin_end[];

sc_result_t sc_cuda_module_load(sc_device_t *device) {
  size_t bytes = (size_t)(sc_cuda_fatbin_end - sc_cuda_fatbin);
  if (bytes < 16)
    return SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_CUDA_LOG,
                    "the kernels embedded in libsymcomm_cuda.so are missing (%zu bytes)", bytes);
  SC_CHECK(SC_CU(cuModuleLoadData, (&device->module, sc_cuda_fatbin),
                 "loading symcomm's kernels (%zu bytes of sm_90 code and compute_90 PTX) on "
                 "device %d (a GPU older than Hopper, or a driver that cannot JIT this PTX, fails here)",
                 bytes, device->ordinal));
  sc_result_t res = SYMCOMM_OK;
  for (int p = 0; p < SC_PROGRAM_COUNT && res == SYMCOMM_OK; p++) {
    const sc_cuda_program_t *prog = sc_cuda_program((sc_program_t)p);
    if (prog == NULL)
      continue;
    size_t want = prog->mode == SC_CUDA_ARGS_EXACT ? prog->args_bytes : SC_LAUNCH_ARGS_MAX;
    for (int v = 0; v < prog->variants && res == SYMCOMM_OK; v++) {
      const char *name = prog->kernel[v];
      res = SC_CU(cuModuleGetFunction, (&device->fn[p][v], device->module, name),
                  "finding kernel %s of program %s", name, sc_cuda_program_name((sc_program_t)p));
      size_t offset = 0;
      if (res == SYMCOMM_OK)
        res = SC_CU(cuFuncGetParamInfo, (device->fn[p][v], 0, &offset, &device->param_bytes[p]),
                    "reading the parameters of kernel %s", name);
      if (res == SYMCOMM_OK && device->param_bytes[p] != want)
        res = SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_CUDA_LOG,
                       "kernel %s takes %zu bytes of arguments, but program %s has %zu: the kernels "
                       "and the library were built from different sources",
                       name, device->param_bytes[p], sc_cuda_program_name((sc_program_t)p), want);
    }
  }
  if (res != SYMCOMM_OK)
    sc_cuda_module_unload(device);
  return res;
}

void sc_cuda_module_unload(sc_device_t *device) {
  if (device->module == NULL)
    return;
  (void)SC_CU(cuModuleUnload, (device->module), "unloading symcomm's kernels from device %d",
              device->ordinal);
  device->module = NULL;
  for (int p = 0; p < SC_PROGRAM_COUNT; p++)
    for (int v = 0; v < SC_CUDA_MAX_VARIANTS; v++)
      device->fn[p][v] = NULL;
}
