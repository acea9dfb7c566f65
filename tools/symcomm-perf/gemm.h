/* --gemm N: a matrix multiplication that runs beside the collectives, to
 * measure how much each slows the other (issue 9: symcomm must take no more
 * from a concurrent GEMM than NCCL does). cuBLAS is loaded with dlopen, as the
 * CUDA runtime is (cudart.h): nothing links against it. The GEMM is
 * C = A x B of N x N bf16 matrices (fp32 accumulation, cuBLAS' default
 * algorithm) on a stream of its own on the engine's device. */
#ifndef SYMCOMM_PERF_GEMM_H
#define SYMCOMM_PERF_GEMM_H

#include <stddef.h>

#include "cudart.h"

typedef struct perf_gemm perf_gemm_t;

/* Events of perf_gemm_record / perf_gemm_elapsed. */
enum { PERF_GEMM_EV_G0 = 0, PERF_GEMM_EV_G1, PERF_GEMM_EV_C0, PERF_GEMM_EV_C1, PERF_GEMM_EVENTS };

/* On the calling thread's current device (the engine's): the stream, the
 * cuBLAS handle, the matrices (filled with non-zero values) and the events.
 * 0; PERF_ENGINE_UNAVAILABLE without cuBLAS (or the runtime's event calls);
 * -1 after a failed call; the sentence in err. */
int perf_gemm_open(const perf_cudart_t *rt, int n, perf_gemm_t **out, char *err, size_t len);
void perf_gemm_close(perf_gemm_t *g);
/* count GEMMs queued on the GEMM stream. */
int perf_gemm_queue(perf_gemm_t *g, int count, char *err, size_t len);
/* Records event `ev` on `stream`, or on the GEMM stream when it is NULL. */
int perf_gemm_record(perf_gemm_t *g, int ev, cuda_stream_t stream, char *err, size_t len);
/* Waits for event `to` and gives the seconds from `from` to it. */
int perf_gemm_elapsed(perf_gemm_t *g, int from, int to, double *seconds, char *err, size_t len);
/* Seconds of one GEMM alone (a few warm-up calls, then ten timed). */
int perf_gemm_calibrate(perf_gemm_t *g, double *seconds, char *err, size_t len);
/* The device's SM count, 0 if the runtime cannot tell. */
int perf_gemm_sms(const perf_gemm_t *g);
/* Which libcublas was loaded. */
const char *perf_gemm_library(const perf_gemm_t *g);

#endif
