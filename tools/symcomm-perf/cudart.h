/* The CUDA runtime as symcomm-perf uses it, loaded with dlopen (nothing is
 * linked against it and no CUDA header is needed to build): device buffers
 * and copies for the engines that run on GPUs, and the graph calls behind -G.
 * Types and prototypes are declared from the CUDA 12/13 runtime API
 * (cuda_runtime_api.h): cudaError_t is an int enum with 0 = cudaSuccess;
 * handles are pointers; cudaGraphInstantiate takes (exec, graph, flags) from
 * CUDA 12 on, so -G needs a runtime of 12 or later. */
#ifndef SYMCOMM_PERF_CUDART_H
#define SYMCOMM_PERF_CUDART_H

#include <stddef.h>

typedef int cuda_error_t;
typedef void *cuda_stream_t;
typedef void *cuda_graph_t;
typedef void *cuda_graph_exec_t;
typedef void *cuda_event_t;
#define CUDA_MEMCPY_HOST_TO_DEVICE 1
#define CUDA_MEMCPY_DEVICE_TO_HOST 2
#define CUDA_STREAM_NON_BLOCKING 0x01
#define CUDA_STREAM_LEGACY ((cuda_stream_t)0x1) /* cudaStreamLegacy */
#define CUDA_CAPTURE_MODE_GLOBAL 0 /* as nccl-tests captures */
#define CUDA_CAPTURE_MODE_THREAD_LOCAL 1 /* --threads: the other ranks' threads go on meanwhile */
#define CUDA_DEV_ATTR_MULTIPROCESSOR_COUNT 16

typedef struct perf_cudart {
  int version; /* cudaRuntimeGetVersion: 12040 for 12.4; 0 if unknown */
  cuda_error_t (*GetDeviceCount)(int *count);
  cuda_error_t (*SetDevice)(int device);
  cuda_error_t (*DeviceGetByPCIBusId)(int *device, const char *busid);
  const char *(*GetErrorString)(cuda_error_t err);
  cuda_error_t (*Malloc)(void **ptr, size_t bytes);
  cuda_error_t (*Free)(void *ptr);
  cuda_error_t (*Memcpy)(void *dst, const void *src, size_t bytes, int kind);
  cuda_error_t (*DeviceSynchronize)(void);
  cuda_error_t (*StreamCreateWithFlags)(cuda_stream_t *stream, unsigned flags);
  cuda_error_t (*StreamSynchronize)(cuda_stream_t stream);
  cuda_error_t (*StreamDestroy)(cuda_stream_t stream);
  cuda_error_t (*GetDeviceProperties)(void *prop, int device); /* name[256] comes first */
  cuda_error_t (*DeviceGetPCIBusId)(char *busid, int len, int device);
  /* -G */
  cuda_error_t (*StreamBeginCapture)(cuda_stream_t stream, int mode);
  cuda_error_t (*StreamEndCapture)(cuda_stream_t stream, cuda_graph_t *graph);
  cuda_error_t (*GraphInstantiate)(cuda_graph_exec_t *exec, cuda_graph_t graph,
                                   unsigned long long flags);
  cuda_error_t (*GraphLaunch)(cuda_graph_exec_t exec, cuda_stream_t stream);
  cuda_error_t (*GraphExecDestroy)(cuda_graph_exec_t exec);
  cuda_error_t (*GraphDestroy)(cuda_graph_t graph);
  /* --gemm */
  cuda_error_t (*EventCreate)(cuda_event_t *event);
  cuda_error_t (*EventRecord)(cuda_event_t event, cuda_stream_t stream);
  cuda_error_t (*EventSynchronize)(cuda_event_t event);
  cuda_error_t (*EventElapsedTime)(float *ms, cuda_event_t start, cuda_event_t end);
  cuda_error_t (*EventDestroy)(cuda_event_t event);
  cuda_error_t (*DeviceGetAttribute)(int *value, int attr, int device);
  cuda_error_t (*GetDevice)(int *device);
} perf_cudart_t;

/* Loads the runtime once per process (later calls return the same table).
 * 0, or PERF_ENGINE_UNAVAILABLE with the reason in why. */
int perf_cudart_load(const perf_cudart_t **rt, char *why, size_t len);

/* "call: message (CUDA error N)" into buf; returns -1 for the caller to pass on. */
int perf_cudart_fail(const perf_cudart_t *rt, char *buf, size_t len, const char *call,
                     cuda_error_t err);

/* The device's name ("NVIDIA H100 80GB HBM3"), or "GPU". */
void perf_cudart_card(const perf_cudart_t *rt, int device, char *card, size_t len);

/* A graph of what is queued on `stream` between begin and end, ready to launch.
 * 0, or -1 with the sentence in err. */
int perf_cudart_capture_begin(const perf_cudart_t *rt, cuda_stream_t stream, int mode, char *err,
                              size_t len);
int perf_cudart_capture_end(const perf_cudart_t *rt, cuda_stream_t stream, cuda_graph_exec_t *exec,
                            char *err, size_t len);

#endif
