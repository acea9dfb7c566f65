/* The engine boundary of symcomm-perf: everything the harness asks of the
 * library it measures, as one const table. engine_symcomm.c implements it with
 * symcomm, engine_nccl.c with NCCL loaded at run time; the harness (bench.c,
 * ops.c) sees only this table, so both run the same sizes, data, timing and
 * checks.
 *
 * Every call but describe and last_error returns 0, or -1 with the sentence in
 * last_error(self). Buffers are the engine's (device memory for NCCL); the
 * harness fills and reads them only through upload and download. Operations
 * take symcomm's dtype and op codes; an engine maps them. */
#ifndef SYMCOMM_PERF_ENGINE_H
#define SYMCOMM_PERF_ENGINE_H

#include <stddef.h>

#include "cudart.h"
#include "gemm.h"
#include "perf.h"

/* open(): the engine cannot run on this machine (no library, no GPU). */
#define PERF_ENGINE_UNAVAILABLE 1

typedef struct perf_engine_ops {
  size_t size; /* sizeof(perf_engine_ops_t) */
  const char *name;
  /* Local part of the start: load libraries, pick the device. Not
   * collective. 0, -1, or PERF_ENGINE_UNAVAILABLE with the reason in why. */
  int (*open)(perf_job_t *job, int registered, void **self, char *why, size_t len);
  /* Collective part of the start (communicators). */
  int (*init)(void *self);
  /* "symcomm 0.1.0, ..." for the header; card: the device's name or "no GPU". */
  void (*describe)(void *self, char *text, size_t len, char *card, size_t card_len);
  /* This rank's device, for the header's list of ranks. */
  void (*device)(void *self, char *text, size_t len);
  /* A buffer for the operations; collective when registered (windows). */
  int (*alloc)(void *self, size_t bytes, void **buf);
  int (*free)(void *self, void *buf);
  /* Host memory to and from an engine buffer; the engine's stream is idle. */
  int (*upload)(void *self, void *dst, const void *src, size_t bytes);
  int (*download)(void *self, void *dst, const void *src, size_t bytes);
  /* The operations, queued on the engine's stream. */
  int (*allreduce)(void *self, const void *send, void *recv, size_t count, symcomm_dtype_t dtype,
                   symcomm_op_t op);
  int (*reduce)(void *self, const void *send, void *recv, size_t count, symcomm_dtype_t dtype,
                symcomm_op_t op, int root);
  int (*broadcast)(void *self, const void *send, void *recv, size_t count, symcomm_dtype_t dtype,
                   int root);
  int (*allgather)(void *self, const void *send, void *recv, size_t sendcount,
                   symcomm_dtype_t dtype);
  int (*reducescatter)(void *self, const void *send, void *recv, size_t recvcount,
                       symcomm_dtype_t dtype, symcomm_op_t op);
  int (*alltoall)(void *self, const void *send, void *recv, size_t count_per_peer,
                  symcomm_dtype_t dtype);
  /* One group: send to `to`, receive from `from`. */
  int (*sendrecv)(void *self, const void *send, void *recv, size_t count, symcomm_dtype_t dtype,
                  int to, int from);
  /* Waits for everything queued on the engine's stream. */
  int (*synchronize)(void *self);
  /* The CUDA runtime and the stream the operations are queued on, for -G
   * (graph capture); -1 with last_error when the engine runs on no CUDA
   * stream. */
  int (*cuda_stream)(void *self, const perf_cudart_t **rt, cuda_stream_t *stream);
  const char *(*last_error)(void *self);
  /* Frees the engine; failed: after an error (abort rather than wait). */
  int (*close)(void *self, int failed);
  /* 0 when the engine does not promise this result bit for bit: the case is
   * timed and its #wrong is N/A (as nccl-tests does for in-place all-to-all
   * and send/receive). */
  int (*checkable)(void *self, perf_op_t op, symcomm_dtype_t dtype, int redop, int in_place);
} perf_engine_ops_t;

extern const perf_engine_ops_t perf_engine_symcomm;
extern const perf_engine_ops_t perf_engine_nccl;
/* The libnccl.so.2 the NCCL engine loads (--nccl-lib); NULL: the loader's. */
void perf_engine_nccl_library(const char *path);

/* ---- the harness (bench.c) */
typedef struct perf_bench {
  const perf_options_t *opts;
  perf_job_t *job;
  const perf_engine_ops_t *eng;
  void *self;
  void *send, *recv; /* engine buffers of buf_bytes each */
  void *host, *want; /* host staging and expected values, buf_bytes each */
  size_t buf_bytes;
  perf_row_t *rows;
  size_t nrows, cap;
  long long wrong; /* over every checked row and rank */
  int warmed;      /* the run's first timing was done (and discarded) */
  perf_gemm_t *gemm;  /* --gemm, else NULL */
  double gemm_call_s; /* one GEMM alone, the slowest rank's */
} perf_bench_t;

/* Launches one operation on the engine (ops.c). in_place arranges the
 * buffers as nccl-tests does. */
int perf_op_launch(const perf_engine_ops_t *eng, void *self, perf_op_t op, symcomm_dtype_t dtype,
                   int redop, int root, const perf_counts_t *c, void *send, void *recv,
                   int in_place, int rank, int nranks);
/* The send and receive pointers of a launch (ops.c). */
void perf_op_buffers(perf_op_t op, const perf_counts_t *c, size_t elem, void *send, void *recv,
                     int in_place, int rank, void **s, void **r);

/* Every (op, dtype, redop, root) table the options ask for (bench.c).
 * 0, or -1 after a failed call (printed). */
int perf_bench_run(perf_bench_t *b);

#endif
