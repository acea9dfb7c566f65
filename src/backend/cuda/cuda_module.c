/* The kernels: a fatbin (sm_90 code and compute_90 PTX) per file of
 * src/backend/cuda/kernels/, each embedded in this shared object
 * (cuda_fatbin.S) and loaded as a module into a device's context when it
 * opens; each kernel is looked up in the module of the file the program
 * table names (cuda_programs.c). */
#include <stdint.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"

/* The build names the fatbins: SC_CUDA_FATBINS is SC_CUDA_FATBIN(file) for
 * each kernel file (Makefile). */
#ifndef SC_CUDA_FATBINS
#error "build cuda_module.c through the Makefile: it names the kernel fatbins (SC_CUDA_FATBINS)"
#endif
#define SC_CUDA_FATBIN(name)                                                                       \
  extern const unsigned char sc_cuda_fatbin_##name[];                                              \
  extern const unsigned char sc_cuda_fatbin_##name##_end[];
SC_CUDA_FATBINS
#undef SC_CUDA_FATBIN

static const struct {
  const unsigned char *start, *end;
  const char *name;
} sc_cuda_fatbins[] = {
#define SC_CUDA_FATBIN(name) {sc_cuda_fatbin_##name, sc_cuda_fatbin_##name##_end, #name},
    SC_CUDA_FATBINS
#undef SC_CUDA_FATBIN
};
#define SC_CUDA_NFATBINS (sizeof(sc_cuda_fatbins) / sizeof(sc_cuda_fatbins[0]))
_Static_assert(SC_CUDA_NFATBINS <= SC_CUDA_MAX_MODULES, "more kernel files than modules");

/* The kernel `name` from the module of kernel file `file`. */
static sc_result_t sc_cuda_module_find(sc_device_t *device, const char *name, const char *file,
                                       const char *program, CUfunction *fn) {
  for (size_t m = 0; m < SC_CUDA_NFATBINS; m++)
    if (file != NULL && strcmp(sc_cuda_fatbins[m].name, file) == 0)
      return SC_CU(cuModuleGetFunction, (fn, device->modules[m], name),
                   "finding kernel %s of program %s in kernels/%s.cu", name, program, file);
  return SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_CUDA_LOG,
                  "libsymcomm_cuda.so has no kernel file %s for kernel %s of program %s: the "
                  "kernels and the library were built from different sources",
                  file != NULL ? file : "(none)", name, program);
}

sc_result_t sc_cuda_module_load(sc_device_t *device) {
  for (size_t m = 0; m < SC_CUDA_NFATBINS; m++) {
    size_t bytes = (size_t)(sc_cuda_fatbins[m].end - sc_cuda_fatbins[m].start);
    sc_result_t res = SYMCOMM_OK;
    if (bytes < 16)
      res = SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_CUDA_LOG,
                     "the kernels %s embedded in libsymcomm_cuda.so are missing (%zu bytes)",
                     sc_cuda_fatbins[m].name, bytes);
    if (res == SYMCOMM_OK)
      res = SC_CU(cuModuleLoadData, (&device->modules[m], sc_cuda_fatbins[m].start),
                  "loading symcomm's kernels %s (%zu bytes of sm_90 code and compute_90 PTX) on "
                  "device %d (a GPU older than Hopper, or a driver that cannot JIT this PTX, "
                  "fails here)",
                  sc_cuda_fatbins[m].name, bytes, device->ordinal);
    if (res != SYMCOMM_OK) {
      sc_cuda_module_unload(device);
      return res;
    }
  }
  sc_result_t res = SYMCOMM_OK;
  for (int p = 0; p < SC_PROGRAM_COUNT && res == SYMCOMM_OK; p++) {
    const sc_cuda_program_t *prog = sc_cuda_program((sc_program_t)p);
    if (prog == NULL)
      continue;
    size_t want = prog->mode == SC_CUDA_ARGS_EXACT ? prog->args_bytes : prog->upto_bytes;
    for (int v = 0; v < prog->variants && res == SYMCOMM_OK; v++) {
      const char *name = prog->kernel[v];
      if (name == NULL)
        continue; /* a slot no call picks (the COLL program's LL path: its own slots) */
      res = sc_cuda_module_find(device, name, prog->file[v], sc_cuda_program_name((sc_program_t)p),
                                &device->fn[p][v]);
      /* The arguments, the third parameter, where the launch puts them. */
      size_t offset = 0;
      if (res == SYMCOMM_OK)
        res = SC_CU(cuFuncGetParamInfo, (device->fn[p][v], 2, &offset, &device->param_bytes[p]),
                    "reading the parameters of kernel %s", name);
      if (res == SYMCOMM_OK && (device->param_bytes[p] != want || offset != SC_CUDA_ARGS_AT))
        res = SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_CUDA_LOG,
                       "kernel %s takes %zu bytes of arguments at offset %zu, but program %s has "
                       "%zu at %d: the kernels and the library were built from different sources",
                       name, device->param_bytes[p], offset, sc_cuda_program_name((sc_program_t)p),
                       want, SC_CUDA_ARGS_AT);
    }
  }
  if (res != SYMCOMM_OK)
    sc_cuda_module_unload(device);
  return res;
}

void sc_cuda_module_unload(sc_device_t *device) {
  for (int m = 0; m < SC_CUDA_MAX_MODULES; m++) {
    if (device->modules[m] == NULL)
      continue;
    (void)SC_CU(cuModuleUnload, (device->modules[m]), "unloading symcomm's kernels from device %d",
                device->ordinal);
    device->modules[m] = NULL;
  }
  for (int p = 0; p < SC_PROGRAM_COUNT; p++)
    for (int v = 0; v < SC_CUDA_MAX_VARIANTS; v++)
      device->fn[p][v] = NULL;
}
