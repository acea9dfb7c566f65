/* Launching a device program: its kernel, with the communicator's status
 * block, the stream's failure record and the arguments as its parameters,
 * passed as one buffer cut after the arguments' bytes (SC_CUDA_ARGS_AT). */
#include <stdint.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/program_items.h"

_Static_assert(SC_CUDA_ARGS_UPTO_BYTES == SC_LAUNCH_ARGS_MAX,
               "the kernels' variable-size parameter is the largest launch");
_Static_assert(2 * sizeof(void *) <= SC_CUDA_ARGS_AT, "the arguments follow two pointers");

sc_result_t sc_cuda_launch(sc_stream_t *stream, sc_program_t program, const void *args,
                           size_t args_bytes, const sc_launch_t *how) {
  const sc_cuda_program_t *prog = sc_cuda_program(program);
  sc_device_t *d = stream->device;
  if (prog == NULL || d->fn[program][0] == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                    "there is no CUDA kernel for device program %d", (int)program);
  if (args == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                    "device program %s launched without arguments", sc_cuda_program_name(program));
  if (how == NULL || how->blocks < 1 || how->blocks > INT32_MAX)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                    "a launch of device program %s needs 1 to %d blocks",
                    sc_cuda_program_name(program), INT32_MAX);
  bool exact = prog->mode == SC_CUDA_ARGS_EXACT;
  if (exact ? args_bytes != prog->args_bytes
            : args_bytes < prog->args_bytes || args_bytes > prog->upto_bytes)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                    "device program %s takes %s%zu bytes of arguments, not %zu",
                    sc_cuda_program_name(program), exact ? "" : "a header of ", prog->args_bytes,
                    args_bytes);
  /* The bytes past the arguments are not passed (below): a header whose
   * count says more items than came would have the kernel read what the
   * driver left there. */
  sc_program_items_t items;
  if (!exact && sc_program_items(program, &items)) {
    uint32_t n = sc_program_items_count(&items, args);
    if (args_bytes != items.header + (size_t)n * items.item_bytes)
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                      "device program %s launched with %zu bytes of arguments for %u items "
                      "(%zu bytes)",
                      sc_cuda_program_name(program), args_bytes, n,
                      items.header + (size_t)n * items.item_bytes);
  }
  pthread_mutex_lock(&stream->lock);
  sc_result_t sticky = stream->result;
  pthread_mutex_unlock(&stream->lock);
  if (sticky != SYMCOMM_OK)
    return sc_error_pass(sticky, stream->sentence);
  int variant = sc_cuda_program_variant(program, args);
  CUfunction fn = d->fn[program][variant];
  if (fn == NULL)
    return SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_CUDA_LOG,
                    "device program %s has no kernel for these arguments (variant %d)",
                    sc_cuda_program_name(program), variant);
  unsigned threads = how->threads > 0 && how->threads < prog->threads ? how->threads : prog->threads;
  /* The parameters as the kernel lays them out; the bytes past the
   * arguments' (a variable-size parameter's unused items) are not passed:
   * the driver leaves them undefined, and no program reads them. */
  struct sc_dev_status *status = how->status;
  sc_cuda_record_t *record = stream->record;
  _Alignas(16) unsigned char params[SC_CUDA_ARGS_AT + SC_LAUNCH_ARGS_MAX];
  memcpy(params, &status, sizeof(status));
  memcpy(params + sizeof(status), &record, sizeof(record));
  memcpy(params + SC_CUDA_ARGS_AT, args, args_bytes);
  size_t params_bytes = (SC_CUDA_ARGS_AT + args_bytes + 7) & ~(size_t)7;
  memset(params + SC_CUDA_ARGS_AT + args_bytes, 0, params_bytes - SC_CUDA_ARGS_AT - args_bytes);
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, params, CU_LAUNCH_PARAM_BUFFER_SIZE, &params_bytes,
                   CU_LAUNCH_PARAM_END};
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(d, &scope));
  sc_result_t res;
  if (how->early && sc_cuda_program_waits(program, variant)) {
    CUlaunchAttribute early = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION};
    early.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config = {.gridDimX = how->blocks, .gridDimY = 1, .gridDimZ = 1,
                             .blockDimX = threads, .blockDimY = 1, .blockDimZ = 1,
                             .hStream = stream->stream, .attrs = &early, .numAttrs = 1};
    res = SC_CU(cuLaunchKernelEx, (&config, fn, NULL, extra),
                "launching device program %s (%u blocks of %u threads, starting early) on device %d",
                sc_cuda_program_name(program), how->blocks, threads, d->ordinal);
  } else {
    res = SC_CU(cuLaunchKernel,
                (fn, how->blocks, 1, 1, threads, 1, 1, 0, stream->stream, NULL, extra),
                "launching device program %s (%u blocks of %u threads) on device %d",
                sc_cuda_program_name(program), how->blocks, threads, d->ordinal);
  }
  if (res == SYMCOMM_OK)
    sc_cuda_stream_mark_own(stream);
  sc_cuda_leave(&scope);
  return res;
}

/* Kernels poll what they wait for: no bell to ring. */
void sc_cuda_bell_ring(sc_device_t *device, sc_doorbell_t *bell) {
  (void)device;
  (void)bell;
}

/* GPU memory: the network stages it through pinned host memory. */
bool sc_cuda_reaches_buffers(sc_device_t *device) {
  (void)device;
  return false;
}
