/* The GEMM beside the collectives (gemm.h). cuBLAS' types and constants are
 * declared from the CUDA 12/13 headers (cublas_api.h, library_types.h):
 * handles are pointers, statuses and enums are ints. */
#include "gemm.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

typedef int cublas_status_t;
typedef void *cublas_handle_t;
#define CUBLAS_OP_N 0
#define CUDA_R_16BF 14
#define CUBLAS_COMPUTE_32F 68
#define CUBLAS_GEMM_DEFAULT (-1)

/* The host pattern the matrices are filled from, piece by piece. */
#define GEMM_FILL_ELEMS (1u << 19)

struct perf_gemm {
  const perf_cudart_t *rt;
  int n, sms;
  const char *library;
  cuda_stream_t stream;
  cublas_handle_t handle;
  void *mat[3]; /* A, B, C */
  cuda_event_t ev[PERF_GEMM_EVENTS];
  cublas_status_t (*create)(cublas_handle_t *handle);
  cublas_status_t (*destroy)(cublas_handle_t handle);
  cublas_status_t (*set_stream)(cublas_handle_t handle, cuda_stream_t stream);
  cublas_status_t (*gemm_ex)(cublas_handle_t handle, int transa, int transb, int m, int n, int k,
                             const void *alpha, const void *a, int atype, int lda, const void *b,
                             int btype, int ldb, const void *beta, void *c, int ctype, int ldc,
                             int compute, int algo);
};

static int cuda_failed(perf_gemm_t *g, char *err, size_t len, const char *call, cuda_error_t e) {
  return perf_cudart_fail(g->rt, err, len, call, e);
}

#define GEMM_CUDA(call, expr)                                                                      \
  do {                                                                                             \
    cuda_error_t e_ = (expr);                                                                      \
    if (e_ != 0)                                                                                   \
      return cuda_failed(g, err, len, (call), e_);                                                 \
  } while (0)

static int load_cublas(perf_gemm_t *g, char *err, size_t len) {
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  void *lib = NULL;
  char first[400] = "";
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && lib == NULL; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib != NULL)
      g->library = names[i];
    else if (i == 0)
      snprintf(first, sizeof(first), "%s", dlerror());
  }
  if (lib == NULL) {
    snprintf(err, len, "--gemm needs cuBLAS (libcublas.so.13, .so.12 or .so): %s", first);
    return PERF_ENGINE_UNAVAILABLE;
  }
  static const char *const syms[] = {"cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2",
                                     "cublasGemmEx"};
  void *fn[4];
  for (size_t i = 0; i < 4; i++) {
    fn[i] = dlsym(lib, syms[i]);
    if (fn[i] == NULL) {
      snprintf(err, len, "--gemm: %s has no %s", g->library, syms[i]);
      return PERF_ENGINE_UNAVAILABLE;
    }
  }
  memcpy(&g->create, &fn[0], sizeof(fn[0]));
  memcpy(&g->destroy, &fn[1], sizeof(fn[1]));
  memcpy(&g->set_stream, &fn[2], sizeof(fn[2]));
  memcpy(&g->gemm_ex, &fn[3], sizeof(fn[3]));
  /* The library stays loaded, as the runtime does. */
  return 0;
}

/* Small values, none zero, varied so that no two neighbours are alike; bf16
 * is the top half of a float. A row of N products stays far from overflow. */
static int fill(perf_gemm_t *g, void *dst, size_t elems, char *err, size_t len) {
  uint16_t *host = malloc(GEMM_FILL_ELEMS * sizeof(*host));
  if (host == NULL) {
    snprintf(err, len, "--gemm: out of memory");
    return -1;
  }
  for (size_t i = 0; i < GEMM_FILL_ELEMS; i++) {
    float v = (float)(i % 251 + 1) / 4096.0f;
    uint32_t bits;
    memcpy(&bits, &v, sizeof(bits));
    host[i] = (uint16_t)(bits >> 16);
  }
  int rc = 0;
  for (size_t done = 0; done < elems && rc == 0; done += GEMM_FILL_ELEMS) {
    size_t n = elems - done < GEMM_FILL_ELEMS ? elems - done : GEMM_FILL_ELEMS;
    cuda_error_t e = g->rt->Memcpy((uint16_t *)dst + done, host, n * sizeof(*host),
                                   CUDA_MEMCPY_HOST_TO_DEVICE);
    if (e != 0)
      rc = cuda_failed(g, err, len, "cudaMemcpy (--gemm matrices)", e);
  }
  free(host);
  return rc;
}

static int gemm_setup(perf_gemm_t *g, char *err, size_t len) {
  const perf_cudart_t *rt = g->rt;
  if (rt->EventCreate == NULL || rt->EventRecord == NULL || rt->EventSynchronize == NULL ||
      rt->EventElapsedTime == NULL || rt->EventDestroy == NULL) {
    snprintf(err, len, "--gemm: the CUDA runtime has no event calls");
    return PERF_ENGINE_UNAVAILABLE;
  }
  int rc = load_cublas(g, err, len);
  if (rc != 0)
    return rc;
  int device = 0;
  if (rt->GetDevice != NULL && rt->DeviceGetAttribute != NULL && rt->GetDevice(&device) == 0 &&
      rt->DeviceGetAttribute(&g->sms, CUDA_DEV_ATTR_MULTIPROCESSOR_COUNT, device) != 0)
    g->sms = 0;
  GEMM_CUDA("cudaStreamCreateWithFlags (--gemm)",
            rt->StreamCreateWithFlags(&g->stream, CUDA_STREAM_NON_BLOCKING));
  for (int i = 0; i < PERF_GEMM_EVENTS; i++)
    GEMM_CUDA("cudaEventCreate", rt->EventCreate(&g->ev[i]));
  size_t elems = (size_t)g->n * (size_t)g->n;
  for (int i = 0; i < 3; i++) {
    GEMM_CUDA("cudaMalloc (--gemm matrices)", rt->Malloc(&g->mat[i], elems * 2));
    if (fill(g, g->mat[i], elems, err, len) != 0)
      return -1;
  }
  cublas_status_t s = g->create(&g->handle);
  if (s != 0) {
    g->handle = NULL;
    snprintf(err, len, "cublasCreate failed (cuBLAS status %d)", s);
    return -1;
  }
  s = g->set_stream(g->handle, g->stream);
  if (s != 0) {
    snprintf(err, len, "cublasSetStream failed (cuBLAS status %d)", s);
    return -1;
  }
  return 0;
}

int perf_gemm_open(const perf_cudart_t *rt, int n, perf_gemm_t **out, char *err, size_t len) {
  perf_gemm_t *g = calloc(1, sizeof(*g));
  if (g == NULL) {
    snprintf(err, len, "--gemm: out of memory");
    return -1;
  }
  g->rt = rt;
  g->n = n;
  int rc = gemm_setup(g, err, len);
  if (rc != 0) {
    perf_gemm_close(g);
    return rc;
  }
  *out = g;
  return 0;
}

void perf_gemm_close(perf_gemm_t *g) {
  if (g == NULL)
    return;
  const perf_cudart_t *rt = g->rt;
  if (g->stream != NULL)
    rt->StreamSynchronize(g->stream);
  if (g->handle != NULL)
    g->destroy(g->handle);
  for (int i = 2; i >= 0; i--)
    if (g->mat[i] != NULL)
      rt->Free(g->mat[i]);
  for (int i = PERF_GEMM_EVENTS - 1; i >= 0; i--)
    if (g->ev[i] != NULL)
      rt->EventDestroy(g->ev[i]);
  if (g->stream != NULL)
    rt->StreamDestroy(g->stream);
  free(g);
}

int perf_gemm_queue(perf_gemm_t *g, int count, char *err, size_t len) {
  const float alpha = 1.0f, beta = 0.0f;
  for (int i = 0; i < count; i++) {
    cublas_status_t s = g->gemm_ex(g->handle, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &alpha,
                                   g->mat[0], CUDA_R_16BF, g->n, g->mat[1], CUDA_R_16BF, g->n,
                                   &beta, g->mat[2], CUDA_R_16BF, g->n, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT);
    if (s != 0) {
      snprintf(err, len, "cublasGemmEx failed (cuBLAS status %d)", s);
      return -1;
    }
  }
  return 0;
}

int perf_gemm_record(perf_gemm_t *g, int ev, cuda_stream_t stream, char *err, size_t len) {
  GEMM_CUDA("cudaEventRecord", g->rt->EventRecord(g->ev[ev], stream ? stream : g->stream));
  return 0;
}

int perf_gemm_elapsed(perf_gemm_t *g, int from, int to, double *seconds, char *err, size_t len) {
  float ms = 0.0f;
  GEMM_CUDA("cudaEventSynchronize", g->rt->EventSynchronize(g->ev[to]));
  GEMM_CUDA("cudaEventElapsedTime", g->rt->EventElapsedTime(&ms, g->ev[from], g->ev[to]));
  *seconds = (double)ms * 1e-3;
  return 0;
}

int perf_gemm_calibrate(perf_gemm_t *g, double *seconds, char *err, size_t len) {
  enum { WARMUP = 3, TIMED = 10 };
  double total = 0.0;
  if (perf_gemm_queue(g, WARMUP, err, len) != 0 ||
      perf_gemm_record(g, PERF_GEMM_EV_G0, NULL, err, len) != 0 ||
      perf_gemm_queue(g, TIMED, err, len) != 0 ||
      perf_gemm_record(g, PERF_GEMM_EV_G1, NULL, err, len) != 0 ||
      perf_gemm_elapsed(g, PERF_GEMM_EV_G0, PERF_GEMM_EV_G1, &total, err, len) != 0)
    return -1;
  *seconds = total / TIMED;
  return 0;
}

int perf_gemm_sms(const perf_gemm_t *g) { return g->sms; }

const char *perf_gemm_library(const perf_gemm_t *g) { return g->library; }
