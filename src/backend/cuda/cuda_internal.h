/* What the files of the CUDA backend share: the bodies of its handles and the
 * entry points each file gives the ops table (cuda_backend.c). Nothing
 * outside src/backend/cuda/ includes this. */
#ifndef SC_BACKEND_CUDA_INTERNAL_H
#define SC_BACKEND_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "backend/backend.h"
#include "backend/cuda/cuda_driver.h"
#include "backend/cuda/cuda_record.h"

#define SC_CUDA_LOG SC_DEV
#define SC_CUDA_SENTENCE_BYTES 768

/* How a program's kernel takes its arguments: exactly its struct, or a
 * struct of variable size (a header and items), of which a launch passes the
 * bytes used, at most the kernel's parameter (upto_bytes). */
typedef enum sc_cuda_args_mode { SC_CUDA_ARGS_EXACT = 0, SC_CUDA_ARGS_UPTO = 1 } sc_cuda_args_mode_t;

/* A program has one kernel, or one per variant: the COLL program one per
 * path (SC_COLL_PATH_*), each holding only that path's code, but the LL
 * path, which has one per kind, and for each kind that reduces one more per
 * sum of float32, bfloat16 and float16 (kernels/coll_ll.cu). */
#define SC_CUDA_LL_SUMS 3
#define SC_CUDA_COLL_VARIANTS (SC_COLL_PATH_COUNT + SC_COLL_KIND_COUNT + 3 * SC_CUDA_LL_SUMS)
#define SC_CUDA_LL_FILES                                                                           \
  "coll_ll", "coll_ll", "coll_ll", "coll_ll", "coll_ll", "coll_ll", "coll_ll", "coll_ll",          \
      "coll_ll", "coll_ll", "coll_ll", "coll_ll", "coll_ll", "coll_ll", "coll_ll"
#define SC_CUDA_MAX_VARIANTS SC_CUDA_COLL_VARIANTS
/* Fatbins of kernels, one per file of src/backend/cuda/kernels/. */
#define SC_CUDA_MAX_MODULES 16

typedef struct sc_cuda_program {
  const char *kernel[SC_CUDA_MAX_VARIANTS]; /* extern "C" names in kernels/ */
  int variants;                             /* how many (1: one kernel) */
  size_t args_bytes;       /* EXACT: sizeof its struct; UPTO: its header's */
  sc_cuda_args_mode_t mode;
  unsigned threads;        /* 1: the program is written for one thread */
  const char *file[SC_CUDA_MAX_VARIANTS]; /* the kernels/ file (without .cu) of each */
  size_t upto_bytes;       /* UPTO: the size of the kernel's parameter */
} sc_cuda_program_t;

/* The program table (cuda_programs.c); NULL for a program this build has no kernel for. */
const sc_cuda_program_t *sc_cuda_program(sc_program_t program);
const char *sc_cuda_program_name(sc_program_t program);
/* Which of the program's kernels runs these arguments (of args_bytes, checked). */
int sc_cuda_program_variant(sc_program_t program, const void *args);
/* Whether the program's kernel `variant` waits for the one ahead of it itself
 * (sc_dev_wait_previous), so that it may be launched to start early (sc_launch_t.early). */
bool sc_cuda_program_waits(sc_program_t program, int variant);

/* Several of a device's host allocations hold the failure records of
 * streams, never reused (cuda_record.h says why). */
typedef struct sc_cuda_record_page {
  struct sc_cuda_record_page *next;
  sc_cuda_record_t *records;
  unsigned used, cap;
} sc_cuda_record_page_t;

/* One communicator's hold on a GPU: the primary context retained, the
 * kernels loaded. Streams, events and allocations made with it hold
 * references, so that the context outlives every one of them. */
struct sc_device {
  int ordinal;
  CUdevice dev;
  CUcontext ctx;
  pthread_mutex_t lock;
  int refs;
  size_t granularity;
  bool fd_handles; /* POSIX fd handles for cuMemCreate; else CUDA IPC (cuMemAlloc) */
  char busid[32];
  CUmodule modules[SC_CUDA_MAX_MODULES]; /* one per kernel file (cuda_module.c) */
  CUfunction fn[SC_PROGRAM_COUNT][SC_CUDA_MAX_VARIANTS];
  size_t param_bytes[SC_PROGRAM_COUNT]; /* the kernels' arguments, as compiled */
  sc_cuda_record_page_t *pages;
  CUstream words; /* copy_word's stream, made at open */
};

struct sc_devmem {
  sc_device_t *device;
  CUdeviceptr ptr;
  size_t size;   /* mapped bytes (a multiple of the granularity for VMM) */
  int kind;      /* SC_CUDA_MEM_* */
  CUmemGenericAllocationHandle handle;
};

enum { SC_CUDA_MEM_VMM = 0, SC_CUDA_MEM_VMM_IMPORTED, SC_CUDA_MEM_IPC, SC_CUDA_MEM_IPC_IMPORTED };

struct sc_stream {
  sc_device_t *device;
  CUstream stream;
  bool owned;               /* made by stream_create; a wrapped one is the caller's */
  sc_cuda_record_t *record; /* where its kernels' failures go */
  /* A wrapped stream: recorded after symcomm's every launch and copy there
   * (not while it is captured), so that destroy and a communicator's drain
   * wait for symcomm's work, not for the caller's queued after it. */
  CUevent own_done;
  pthread_mutex_t lock;
  bool own_recorded;        /* own_done stands for symcomm's last work (lock) */
  bool own_unknown;         /* a record failed: only the whole stream tells (lock) */
  sc_result_t result;       /* sticky once the host has seen a failure */
  char sentence[SC_CUDA_SENTENCE_BYTES];
};

struct sc_event {
  sc_device_t *device;
  CUevent event;
};

/* Makes the device's context current on this thread for the length of a
 * backend call, and puts the caller's back afterwards. */
typedef struct sc_cuda_scope {
  bool pushed;
} sc_cuda_scope_t;
sc_result_t sc_cuda_enter(sc_device_t *device, sc_cuda_scope_t *scope);
void sc_cuda_leave(sc_cuda_scope_t *scope);

/* ---- cuda_device.c */
sc_result_t sc_cuda_device_open(int device_index, sc_device_t **device);
void sc_cuda_device_close(sc_device_t *device);
void sc_cuda_device_hold(sc_device_t *device);
void sc_cuda_device_release(sc_device_t *device);
size_t sc_cuda_granularity(sc_device_t *device);
sc_result_t sc_cuda_device_busid(sc_device_t *device, char *buf, size_t len);
sc_result_t sc_cuda_host_alloc(sc_device_t *device, size_t bytes, void **ptr);
void sc_cuda_host_free(sc_device_t *device, void *ptr);
sc_result_t sc_cuda_dev_alloc(sc_device_t *device, size_t bytes, void **ptr);
void sc_cuda_dev_free(sc_device_t *device, void *ptr);
sc_result_t sc_cuda_upload(sc_device_t *device, void *dst, const void *src, size_t bytes);
void sc_cuda_copy_word(sc_device_t *device, uint32_t *dst, const uint32_t *src);
void sc_cuda_copy_word_settle(sc_device_t *device);
sc_result_t sc_cuda_ptr_check(sc_device_t *device, const void *ptr, size_t bytes, const char *what);
/* A new failure record for a stream (device lock taken inside). */
sc_result_t sc_cuda_record_new(sc_device_t *device, sc_cuda_record_t **record);

/* ---- cuda_module.c */
sc_result_t sc_cuda_module_load(sc_device_t *device);
void sc_cuda_module_unload(sc_device_t *device);

/* ---- cuda_memory.c */
sc_result_t sc_cuda_mem_alloc(sc_device_t *device, size_t bytes, sc_devmem_t **mem);
sc_result_t sc_cuda_mem_export(sc_devmem_t *mem, int *fd);
sc_result_t sc_cuda_mem_import(sc_device_t *device, int fd, size_t bytes, sc_devmem_t **mem);
void *sc_cuda_mem_ptr(sc_devmem_t *mem);
size_t sc_cuda_mem_size(sc_devmem_t *mem);
void sc_cuda_mem_free(sc_devmem_t *mem);

/* ---- cuda_stream.c */
sc_result_t sc_cuda_stream_create(sc_device_t *device, sc_stream_t **stream);
sc_result_t sc_cuda_stream_wrap(sc_device_t *device, void *native, sc_stream_t **stream);
bool sc_cuda_stream_capturing(sc_stream_t *stream);
void sc_cuda_stream_destroy(sc_stream_t *stream, int64_t deadline_ms);
sc_result_t sc_cuda_stream_drain(sc_stream_t *stream, int64_t deadline_ms);
/* After symcomm queued work on the stream (context current): a wrapped
 * stream records it as symcomm's last (cuda_stream.c). */
void sc_cuda_stream_mark_own(sc_stream_t *stream);
sc_result_t sc_cuda_stream_synchronize(sc_stream_t *stream, int64_t deadline_ms);
sc_result_t sc_cuda_stream_query(sc_stream_t *stream);
const char *sc_cuda_stream_error(sc_stream_t *stream);
sc_result_t sc_cuda_copy(sc_stream_t *stream, void *dst, const void *src, size_t bytes);

/* ---- cuda_event.c */
sc_result_t sc_cuda_event_create(sc_device_t *device, sc_event_t **event);
void sc_cuda_event_destroy(sc_event_t *event);
sc_result_t sc_cuda_event_record(sc_event_t *event, sc_stream_t *stream);
sc_result_t sc_cuda_stream_wait_event(sc_stream_t *stream, sc_event_t *event);
sc_result_t sc_cuda_event_query(sc_event_t *event);
sc_result_t sc_cuda_event_synchronize(sc_event_t *event, int64_t deadline_ms);

/* ---- cuda_launch.c */
void sc_cuda_bell_ring(sc_device_t *device, sc_doorbell_t *bell);
bool sc_cuda_reaches_buffers(sc_device_t *device);
sc_result_t sc_cuda_launch(sc_stream_t *stream, sc_program_t program, const void *args,
                           size_t args_bytes, const sc_launch_t *how);

/* A short sleep for the host's bounded polls of streams and events. */
void sc_cuda_poll_pause(int round);
/* Waits (bounded) until the device's synchronous memsets and copies have
 * landed: they run on the legacy stream, which the streams kernels run on do
 * not wait for, and a copy from pageable memory may return before its DMA is
 * done. Setup only, in the current context. */
sc_result_t sc_cuda_settle(sc_device_t *device, const char *what);

#endif
