/* Which kernel runs each device program (the files of kernels/ have one per
 * line here), and how it takes its arguments. A program added to program.h
 * gets a line here and one SC_CUDA_KERNEL/SC_CUDA_SOLO_KERNEL line in a file
 * of kernels/. */
#include "backend/cuda/cuda_internal.h"
#include "symcomm.h"
#include "device/net_layout.h"
#include "device/p2p_layout.h"

_Static_assert(sizeof(sc_coll_args_t) <= SC_LAUNCH_ARGS_MAX,
               "a collective's arguments fit a launch (cuda_launch.c's buffer)");

static const sc_cuda_program_t sc_cuda_programs[SC_PROGRAM_COUNT] = {
    [SC_PROGRAM_SIGNAL] = {{"sc_kernel_signal"}, 1, sizeof(sc_signal_args_t), SC_CUDA_ARGS_EXACT, 1,
                           {"p2p"}},
    [SC_PROGRAM_WAIT] = {{"sc_kernel_wait"}, 1, sizeof(sc_wait_args_t), SC_CUDA_ARGS_EXACT, 1,
                         {"p2p"}},
    [SC_PROGRAM_P2P] = {{"sc_kernel_p2p"}, 1, offsetof(sc_p2p_args_t, ops), SC_CUDA_ARGS_UPTO,
                        SC_CUDA_THREADS, {"p2p"}, SC_CUDA_ARGS_UPTO_BYTES},
    /* In the order of the SC_COLL_PATH_* bits (the LL path's own slot
     * empty), then the LL path's (sc_cuda_ll_variant, kernels/coll_ll.cu). */
    [SC_PROGRAM_COLL] = {{"sc_kernel_coll_windows", NULL, "sc_kernel_coll_split",
                          "sc_kernel_coll_oneshot", "sc_kernel_coll_twoshot",
                          "sc_kernel_coll_broadcast", "sc_kernel_coll_direct",
                          "sc_kernel_coll_ll_allreduce", "sc_kernel_coll_ll_reduce",
                          "sc_kernel_coll_ll_broadcast", "sc_kernel_coll_ll_allgather",
                          "sc_kernel_coll_ll_reducescatter", "sc_kernel_coll_ll_alltoall",
                          "sc_kernel_coll_ll_allreduce_f32_sum", "sc_kernel_coll_ll_allreduce_bf16_sum",
                          "sc_kernel_coll_ll_allreduce_f16_sum", "sc_kernel_coll_ll_reduce_f32_sum",
                          "sc_kernel_coll_ll_reduce_bf16_sum", "sc_kernel_coll_ll_reduce_f16_sum",
                          "sc_kernel_coll_ll_reducescatter_f32_sum",
                          "sc_kernel_coll_ll_reducescatter_bf16_sum",
                          "sc_kernel_coll_ll_reducescatter_f16_sum"},
                         SC_CUDA_COLL_VARIANTS,
                         offsetof(sc_coll_args_t, peer),
                         SC_CUDA_ARGS_UPTO,
                         SC_CUDA_THREADS,
                         {"coll_windows", NULL, "coll_split", "coll_oneshot", "coll_twoshot",
                          "coll_broadcast", "coll_direct", SC_CUDA_LL_FILES},
                         sizeof(sc_coll_args_t)},
    /* Its leader alone works: the data never passes through the device. */
    [SC_PROGRAM_NET] = {{"sc_kernel_net"}, 1, offsetof(sc_net_args_t, ops), SC_CUDA_ARGS_UPTO, 32,
                        {"p2p"}, SC_CUDA_ARGS_UPTO_BYTES},
    [SC_PROGRAM_REDUCE] = {{"sc_kernel_reduce"}, 1, sizeof(sc_reduce_args_t), SC_CUDA_ARGS_EXACT,
                           SC_CUDA_THREADS, {"p2p"}},
};

static const char *const sc_cuda_program_names[SC_PROGRAM_COUNT] = {
    [SC_PROGRAM_SIGNAL] = "SIGNAL",
    [SC_PROGRAM_WAIT] = "WAIT",
    [SC_PROGRAM_P2P] = "P2P",
    [SC_PROGRAM_COLL] = "COLL",
    [SC_PROGRAM_NET] = "NET",
    [SC_PROGRAM_REDUCE] = "REDUCE",
};

const sc_cuda_program_t *sc_cuda_program(sc_program_t program) {
  if ((unsigned)program >= SC_PROGRAM_COUNT || sc_cuda_programs[program].kernel[0] == NULL)
    return NULL;
  return &sc_cuda_programs[program];
}

const char *sc_cuda_program_name(sc_program_t program) {
  if ((unsigned)program >= SC_PROGRAM_COUNT || sc_cuda_program_names[program] == NULL)
    return "unknown";
  return sc_cuda_program_names[program];
}

/* The LL kernel of a call: its kind's, or for a kind that reduces, its
 * reduction's where it is a sum of float32, bfloat16 or float16. A kind out
 * of range gets a kernel that refuses it. */
static int sc_cuda_ll_variant(const sc_coll_args_t *a) {
  int reducing = a->kind == SC_COLL_ALLREDUCE ? 0
                 : a->kind == SC_COLL_REDUCE  ? 1
                 : a->kind == SC_COLL_REDUCESCATTER ? 2
                                                    : -1;
  int sum = a->op != SYMCOMM_SUM             ? -1
            : a->dtype == SYMCOMM_FLOAT32  ? 0
            : a->dtype == SYMCOMM_BFLOAT16 ? 1
            : a->dtype == SYMCOMM_FLOAT16  ? 2
                                           : -1;
  if (reducing >= 0 && sum >= 0)
    return SC_COLL_PATH_COUNT + SC_COLL_KIND_COUNT + reducing * SC_CUDA_LL_SUMS + sum;
  if (a->kind < 0 || a->kind >= SC_COLL_KIND_COUNT)
    return SC_COLL_PATH_COUNT;
  return SC_COLL_PATH_COUNT + a->kind;
}

bool sc_cuda_program_waits(sc_program_t program, int variant) {
  return (program == SC_PROGRAM_COLL && variant >= SC_COLL_PATH_COUNT) || program == SC_PROGRAM_P2P;
}

int sc_cuda_program_variant(sc_program_t program, const void *args) {
  if (program != SC_PROGRAM_COLL)
    return 0;
  const sc_coll_args_t *a = args;
  uint32_t path = sc_coll_path(a->algo, a->kind);
  return path == SC_COLL_PATH_LL ? sc_cuda_ll_variant(a) : sc_coll_path_index(path);
}
