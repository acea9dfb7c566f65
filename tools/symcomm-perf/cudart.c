/* Loading the CUDA runtime (cudart.h). */
#include "cudart.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"

typedef struct cudart_sym {
  const char *name;
  size_t offset; /* of the function pointer in perf_cudart_t */
  int need;      /* 0: optional, 1: always */
} cudart_sym_t;

#define RT_SYM(field, name, need)                                                                  \
  { name, offsetof(perf_cudart_t, field), need }
static const cudart_sym_t cudart_syms[] = {
    RT_SYM(GetDeviceCount, "cudaGetDeviceCount", 1),
    RT_SYM(SetDevice, "cudaSetDevice", 1),
    RT_SYM(DeviceGetByPCIBusId, "cudaDeviceGetByPCIBusId", 1),
    RT_SYM(GetErrorString, "cudaGetErrorString", 1),
    RT_SYM(Malloc, "cudaMalloc", 1),
    RT_SYM(Free, "cudaFree", 1),
    RT_SYM(Memcpy, "cudaMemcpy", 1),
    RT_SYM(DeviceSynchronize, "cudaDeviceSynchronize", 1),
    RT_SYM(StreamCreateWithFlags, "cudaStreamCreateWithFlags", 1),
    RT_SYM(StreamSynchronize, "cudaStreamSynchronize", 1),
    RT_SYM(StreamDestroy, "cudaStreamDestroy", 1),
    RT_SYM(DeviceGetPCIBusId, "cudaDeviceGetPCIBusId", 0),
    RT_SYM(StreamBeginCapture, "cudaStreamBeginCapture", 0),
    RT_SYM(StreamEndCapture, "cudaStreamEndCapture", 0),
    RT_SYM(GraphInstantiate, "cudaGraphInstantiate", 0),
    RT_SYM(GraphLaunch, "cudaGraphLaunch", 0),
    RT_SYM(GraphExecDestroy, "cudaGraphExecDestroy", 0),
    RT_SYM(GraphDestroy, "cudaGraphDestroy", 0),
    RT_SYM(EventCreate, "cudaEventCreate", 0),
    RT_SYM(EventRecord, "cudaEventRecord", 0),
    RT_SYM(EventSynchronize, "cudaEventSynchronize", 0),
    RT_SYM(EventElapsedTime, "cudaEventElapsedTime", 0),
    RT_SYM(EventDestroy, "cudaEventDestroy", 0),
    RT_SYM(DeviceGetAttribute, "cudaDeviceGetAttribute", 0),
    RT_SYM(GetDevice, "cudaGetDevice", 0),
};

static perf_cudart_t cudart;
static int cudart_status = -2; /* -2: not tried; else what perf_cudart_load returned */
static char cudart_why[512];
static pthread_mutex_t cudart_lock = PTHREAD_MUTEX_INITIALIZER;

static void *cudart_open(char *err, size_t len) {
  static const char *const names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h != NULL)
      return h;
    if (i == 0)
      snprintf(err, len, "%s", dlerror());
  }
  return NULL;
}

static int cudart_load_once(char *why, size_t len) {
  char err[400] = "";
  void *lib = cudart_open(err, sizeof(err));
  if (lib == NULL) {
    snprintf(why, len, "no CUDA runtime (libcudart.so, .so.13 or .so.12): %s", err);
    return PERF_ENGINE_UNAVAILABLE;
  }
  for (size_t i = 0; i < sizeof(cudart_syms) / sizeof(cudart_syms[0]); i++) {
    const cudart_sym_t *s = &cudart_syms[i];
    void *fn = dlsym(lib, s->name);
    if (fn == NULL && s->need) {
      snprintf(why, len, "the CUDA runtime has no %s", s->name);
      return PERF_ENGINE_UNAVAILABLE;
    }
    memcpy((char *)&cudart + s->offset, &fn, sizeof(fn));
  }
  /* CUDA 12 renamed it; the name[256] at the start is the same in both. */
  void *props = dlsym(lib, "cudaGetDeviceProperties_v2");
  if (props == NULL)
    props = dlsym(lib, "cudaGetDeviceProperties");
  memcpy(&cudart.GetDeviceProperties, &props, sizeof(props));
  cuda_error_t (*get_version)(int *) = NULL;
  void *fn = dlsym(lib, "cudaRuntimeGetVersion");
  memcpy(&get_version, &fn, sizeof(fn));
  if (get_version != NULL)
    get_version(&cudart.version);
  /* The library stays loaded: the process may hold CUDA resources to its end. */
  return 0;
}

int perf_cudart_load(const perf_cudart_t **rt, char *why, size_t len) {
  pthread_mutex_lock(&cudart_lock);
  if (cudart_status == -2)
    cudart_status = cudart_load_once(cudart_why, sizeof(cudart_why));
  int status = cudart_status;
  pthread_mutex_unlock(&cudart_lock);
  if (status != 0) {
    snprintf(why, len, "%s", cudart_why);
    return status;
  }
  *rt = &cudart;
  return 0;
}

int perf_cudart_fail(const perf_cudart_t *rt, char *buf, size_t len, const char *call,
                     cuda_error_t err) {
  snprintf(buf, len, "%s: %s (CUDA error %d)", call, rt->GetErrorString(err), err);
  return -1;
}

void perf_cudart_card(const perf_cudart_t *rt, int device, char *card, size_t len) {
  snprintf(card, len, "GPU");
  if (rt->GetDeviceProperties == NULL)
    return;
  /* cudaDeviceProp is about 1 KiB; room to spare for newer runtimes. */
  static _Alignas(16) char prop[16384];
  if (rt->GetDeviceProperties(prop, device) == 0) {
    prop[255] = '\0';
    snprintf(card, len, "%s", prop);
  }
}

int perf_cudart_capture_begin(const perf_cudart_t *rt, cuda_stream_t stream, int mode, char *err,
                              size_t len) {
  if (rt->version < 12000 || rt->StreamBeginCapture == NULL || rt->GraphInstantiate == NULL ||
      rt->GraphLaunch == NULL) {
    snprintf(err, len, "-G needs CUDA graphs of a CUDA runtime 12 or later (this one: %d)",
             rt->version);
    return -1;
  }
  cuda_error_t e = rt->StreamBeginCapture(stream, mode);
  return e == 0 ? 0 : perf_cudart_fail(rt, err, len, "cudaStreamBeginCapture", e);
}

int perf_cudart_capture_end(const perf_cudart_t *rt, cuda_stream_t stream, cuda_graph_exec_t *exec,
                            char *err, size_t len) {
  cuda_graph_t graph = NULL;
  cuda_error_t e = rt->StreamEndCapture(stream, &graph);
  if (e != 0)
    return perf_cudart_fail(rt, err, len, "cudaStreamEndCapture", e);
  e = rt->GraphInstantiate(exec, graph, 0);
  rt->GraphDestroy(graph); /* the executable graph keeps what it needs */
  return e == 0 ? 0 : perf_cudart_fail(rt, err, len, "cudaGraphInstantiate", e);
}
