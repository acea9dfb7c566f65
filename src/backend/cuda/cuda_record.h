/* What the kernels of the CUDA backend and its host side share: where a
 * stream's kernels leave the first failure among them, and how programs are
 * launched. Plain C, included by the .c files and by the .cu kernels. */
#ifndef SC_BACKEND_CUDA_RECORD_H
#define SC_BACKEND_CUDA_RECORD_H

#include "device/program.h"

/* Threads of a block for programs written for many threads; the programs
 * written for one thread (SC_CUDA_SOLO) run one. */
#define SC_CUDA_THREADS 512

/* The parameter of a program whose arguments vary in size: backend.h's
 * SC_LAUNCH_ARGS_MAX (checked in cuda_launch.c), which the kernels cannot include. */
#define SC_CUDA_ARGS_UPTO_BYTES 4096

/* Every kernel's parameters are (the communicator's status block, the
 * stream's failure record, the arguments): the arguments last, at this
 * offset, so that a launch may pass the parameters cut after the bytes the
 * arguments use (cuda_launch.c), as NCCL passes its 4 KiB one: a send/recv
 * pair's launch passes 128 bytes where its parameters take 4112, a small
 * all-reduce's 120 of 1144. On 2 H200s no launch took less time for it, in
 * graphs or not (docs/PERFORMANCE.md session 27); the host copies less. */
#define SC_CUDA_ARGS_AT 16

/* A stream's failure record, in host memory the device maps (one per
 * stream, never reused: a kernel captured in a CUDA graph may write it after
 * the stream is gone, so records live until their device closes). The
 * first failing block claims `failed` (0 -> 1), fills `error`, then sets 2;
 * the host reads it once the stream's work is done. */
typedef struct sc_cuda_record {
  uint32_t failed;
  uint32_t reserved;
  sc_dev_error_t error;
} sc_cuda_record_t;

#endif
