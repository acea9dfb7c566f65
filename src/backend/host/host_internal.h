/* What the files of the simulated-GPU backend share: the bodies of its
 * handles and the entry points each file gives the ops table
 * (host_backend.c). Nothing outside src/backend/host/ includes this. */
#ifndef SC_BACKEND_HOST_INTERNAL_H
#define SC_BACKEND_HOST_INTERNAL_H

#include <pthread.h>
#include <time.h>

#include "backend/backend.h"

#define SC_HOST_SENTENCE_BYTES 512

/* The log subsystem of this backend's messages. */
#define SC_HOST_LOG SC_DEV

struct sc_device {
  int index; /* only remembered: every index names the same host memory */
  size_t granularity;
};

struct sc_devmem {
  void *ptr;
  size_t size;
  int fd; /* the memfd of an allocation made here; -1 for an imported one */
};

/* ---- host_device.c */
sc_result_t sc_host_available(char *why, size_t len);
sc_result_t sc_host_device_busid(sc_device_t *device, char *buf, size_t len);
sc_result_t sc_host_ptr_check(sc_device_t *device, const void *ptr, size_t bytes, const char *what);
sc_result_t sc_host_device_open(int device_index, sc_device_t **device);
void sc_host_device_close(sc_device_t *device);
size_t sc_host_granularity(sc_device_t *device);
sc_result_t sc_host_host_alloc(sc_device_t *device, size_t bytes, void **ptr);
void sc_host_host_free(sc_device_t *device, void *ptr);
sc_result_t sc_host_dev_alloc(sc_device_t *device, size_t bytes, void **ptr);
void sc_host_dev_free(sc_device_t *device, void *ptr);
sc_result_t sc_host_upload(sc_device_t *device, void *dst, const void *src, size_t bytes);
void sc_host_copy_word(sc_device_t *device, uint32_t *dst, const uint32_t *src);
void sc_host_copy_word_settle(sc_device_t *device);

/* ---- host_memory.c */
sc_result_t sc_host_mem_alloc(sc_device_t *device, size_t bytes, sc_devmem_t **mem);
sc_result_t sc_host_mem_export(sc_devmem_t *mem, int *fd);
sc_result_t sc_host_mem_import(sc_device_t *device, int fd, size_t bytes, sc_devmem_t **mem);
void *sc_host_mem_ptr(sc_devmem_t *mem);
size_t sc_host_mem_size(sc_devmem_t *mem);
void sc_host_mem_free(sc_devmem_t *mem);

/* ---- host_stream.c */
sc_result_t sc_host_stream_create(sc_device_t *device, sc_stream_t **stream);
void sc_host_stream_destroy(sc_stream_t *stream, int64_t deadline_ms);
sc_result_t sc_host_stream_drain(sc_stream_t *stream, int64_t deadline_ms);
sc_result_t sc_host_stream_synchronize(sc_stream_t *stream, int64_t deadline_ms);
sc_result_t sc_host_stream_query(sc_stream_t *stream);
const char *sc_host_stream_error(sc_stream_t *stream);
sc_result_t sc_host_copy(sc_stream_t *stream, void *dst, const void *src, size_t bytes);
void sc_host_bell_ring(sc_device_t *device, sc_doorbell_t *bell);
bool sc_host_reaches_buffers(sc_device_t *device);
sc_result_t sc_host_launch(sc_stream_t *stream, sc_program_t program, const void *args,
                           size_t args_bytes, const sc_launch_t *how);
sc_result_t sc_host_stream_wrap(sc_device_t *device, void *native, sc_stream_t **stream);
bool sc_host_stream_capturing(sc_stream_t *stream);
sc_result_t sc_host_event_record(sc_event_t *event, sc_stream_t *stream);
sc_result_t sc_host_stream_wait_event(sc_stream_t *stream, sc_event_t *event);

/* ---- host_event.c: events, and what the stream worker asks of them */
sc_result_t sc_host_event_create(sc_device_t *device, sc_event_t **event);
void sc_host_event_destroy(sc_event_t *event);
sc_result_t sc_host_event_query(sc_event_t *event);
sc_result_t sc_host_event_synchronize(sc_event_t *event, int64_t deadline_ms);
/* A queued item holds a reference, so an event may be destroyed while work
 * that records or waits for it is still queued (as CUDA allows). */
void sc_host_event_hold(sc_event_t *event);
void sc_host_event_release(sc_event_t *event);
/* A new generation of the event; it completes when sc_host_event_complete()
 * is called with it. */
uint64_t sc_host_event_next_generation(sc_event_t *event);
/* The generation the event stands for now (0: never recorded). */
uint64_t sc_host_event_generation(sc_event_t *event);
/* Generation `gen` is done: OK, or failed with the sentence of the stream
 * that would have recorded it. */
void sc_host_event_complete(sc_event_t *event, uint64_t gen, sc_result_t result,
                            const char *sentence);
/* Blocks (no deadline) until generation `gen` is done; its result, with the
 * sentence in `sentence` when it failed. */
sc_result_t sc_host_event_wait(sc_event_t *event, uint64_t gen, char *sentence, size_t len);

/* ---- host_programs.c */
/* INVALID_ARGUMENT when `program` is unknown, args is NULL or args_bytes is
 * not the size of its arguments. */
sc_result_t sc_host_program_check(sc_program_t program, const void *args, size_t args_bytes);
/* Runs a launched program on the calling (worker) thread, its blocks one
 * after another (each syncs only with its namesakes on other ranks, which run
 * their blocks in the same order); the first block that fails ends it. */
void sc_host_program_run(sc_program_t program, uint32_t blocks, const void *args,
                         sc_dev_error_t *err);
/* A launch that was queued but will never run (its stream stopped first):
 * the program leaves its peers a trace of that (P2P marks its pairs failed). */
void sc_host_program_abandon(sc_program_t program, const void *args);

/* ---- host_sync.c: condition variables on the monotonic clock */
sc_result_t sc_host_cond_init(pthread_cond_t *cond);
/* pthread_cond_timedwait until deadline_ms (sc_now_ms() time, or
 * SC_DEADLINE_NEVER); ETIMEDOUT once it has passed, else 0. */
int sc_host_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, int64_t deadline_ms);

#endif
