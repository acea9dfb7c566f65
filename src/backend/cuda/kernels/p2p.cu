/* The kernels of send/recv, one-sided signals and waits, the network's
 * posts and the combining steps of collectives between hosts. */
#include "backend/cuda/kernels/kernel.cuh" /* first: the runtime the programs use */

#include "device/net.h"
#include "device/p2p.h"
#include "device/reduce_program.h"
#include "device/signal_wait.h"

/* One-sided signals and waits are single steps, written for one thread. */
SC_CUDA_SOLO_KERNEL(sc_kernel_signal, sc_signal_args_t, sc_signal_args_t, sc_dev_signal_run)
SC_CUDA_SOLO_KERNEL(sc_kernel_wait, sc_wait_args_t, sc_wait_args_t, sc_dev_wait_run)
/* Send/recv batches: every thread of each block. The stop's device copy
 * instead of the host word at the start (sc_dev_p2p_run). */
SC_CUDA_KERNEL_BOUNDED(__launch_bounds__(SC_CUDA_THREADS), 0, sc_kernel_p2p, sc_cuda_args_upto_t,
                       sc_p2p_args_t, sc_dev_p2p_run)
/* Sends and receives with other hosts: posted to the host, which moves the data. */
SC_CUDA_KERNEL(sc_kernel_net, sc_cuda_args_upto_t, sc_net_args_t, sc_dev_net_run)
/* A step of the collectives between hosts: combines what arrived. */
SC_CUDA_KERNEL(sc_kernel_reduce, sc_reduce_args_t, sc_reduce_args_t, sc_dev_reduce_run)
