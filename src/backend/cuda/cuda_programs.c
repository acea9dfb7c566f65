/* Which kernel runs each device program (cuda_kernels.cu has one per line
 * here), and how it takes its arguments. A program added to program.h gets a
 * line here and one SC_CUDA_KERNEL/SC_CUDA_SOLO_KERNEL line in the .cu. */
#include "backend/cuda/cuda_internal.h"
#include "device/net_layout.h"
#include "device/p2p_layout.h"

static const sc_cuda_program_t sc_cuda_programs[SC_PROGRAM_COUNT] = {
    [SC_PROGRAM_SIGNAL] = {"sc_kernel_signal", sizeof(sc_signal_args_t), SC_CUDA_ARGS_EXACT, 1},
    [SC_PROGRAM_WAIT] = {"sc_kernel_wait", sizeof(sc_wait_args_t), SC_CUDA_ARGS_EXACT, 1},
    [SC_PROGRAM_P2P] = {"sc_kernel_p2p", offsetof(sc_p2p_args_t, ops), SC_CUDA_ARGS_UPTO,
                        SC_CUDA_THREADS},
    [SC_PROGRAM_COLL] = {"sc_kernel_coll", sizeof(sc_coll_args_t), SC_CUDA_ARGS_EXACT,
                         SC_CUDA_THREADS},
    /* Its leader alone works: the data never passes through the device. */
    [SC_PROGRAM_NET] = {"sc_kernel_net", offsetof(sc_net_args_t, ops), SC_CUDA_ARGS_UPTO, 32},
    [SC_PROGRAM_REDUCE] = {"sc_kernel_reduce", sizeof(sc_reduce_args_t), SC_CUDA_ARGS_EXACT,
                           SC_CUDA_THREADS},
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
  if ((unsigned)program >= SC_PROGRAM_COUNT || sc_cuda_programs[program].kernel == NULL)
    return NULL;
  return &sc_cuda_programs[program];
}

const char *sc_cuda_program_name(sc_program_t program) {
  if ((unsigned)program >= SC_PROGRAM_COUNT || sc_cuda_program_names[program] == NULL)
    return "unknown";
  return sc_cuda_program_names[program];
}
