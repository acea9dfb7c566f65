/* Which kernel runs each device program (cuda_kernels.cu has one per line
 * here), and how it takes its arguments. A program added to program.h gets a
 * line here and one SC_CUDA_KERNEL/SC_CUDA_SOLO_KERNEL line in the .cu. */
#include "backend/cuda/cuda_internal.h"
#include "device/p2p_layout.h"

static const sc_cuda_program_t sc_cuda_programs[SC_PROGRAM_COUNT] = {
    [SC_PROGRAM_SIGNAL] = {"sc_kernel_signal", sizeof(sc_signal_args_t), SC_CUDA_ARGS_EXACT, 1},
    [SC_PROGRAM_WAIT] = {"sc_kernel_wait", sizeof(sc_wait_args_t), SC_CUDA_ARGS_EXACT, 1},
    [SC_PROGRAM_P2P] = {"sc_kernel_p2p", offsetof(sc_p2p_args_t, ops), SC_CUDA_ARGS_UPTO,
                        SC_CUDA_THREADS},
    [SC_PROGRAM_COLL] = {"sc_kernel_coll", sizeof(sc_coll_args_t), SC_CUDA_ARGS_EXACT,
                         SC_CUDA_THREADS},
};

static const char *const sc_cuda_program_names[SC_PROGRAM_COUNT] = {
    [SC_PROGRAM_SIGNAL] = "SIGNAL",
    [SC_PROGRAM_WAIT] = "WAIT",
    [SC_PROGRAM_P2P] = "P2P",
    [SC_PROGRAM_COLL] = "COLL",
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
