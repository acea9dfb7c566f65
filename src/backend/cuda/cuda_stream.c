/* Streams of the CUDA backend: a CUDA stream (made here, non-blocking, or
 * the caller's, wrapped) and the record where its kernels leave their first
 * failure. The host never waits unboundedly: synchronize polls the stream
 * until its deadline. A failure becomes the stream's, sticky, when the host
 * first sees it with the stream's work done; the CUDA stream itself goes on
 * (later kernels of a stopped communicator return at once). */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/dev_result.h"
#include "util/clock.h"

/* Spins first (a collective often ends within microseconds), then gives the
 * core away, then sleeps briefly: the cost of a poll stays below what it
 * waits for. */
void sc_cuda_poll_pause(int round) {
  if (round < 200) {
    for (int i = 0; i < 64; i++)
      sc_cpu_relax();
  } else if (round < 400) {
    sched_yield();
  } else {
    struct timespec ts = {0, round < 2000 ? 20000 : 200000};
    nanosleep(&ts, NULL);
  }
}

static sc_result_t sc_cuda_stream_new(sc_device_t *device, CUstream native, bool owned,
                                      sc_stream_t **stream) {
  sc_stream_t *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_CUDA_LOG, "no memory for a stream");
  sc_result_t res = sc_cuda_record_new(device, &s->record);
  if (res != SYMCOMM_OK) {
    free(s);
    return res;
  }
  s->device = device;
  s->stream = native;
  s->owned = owned;
  s->result = SYMCOMM_OK;
  pthread_mutex_init(&s->lock, NULL);
  sc_cuda_device_hold(device);
  *stream = s;
  return SYMCOMM_OK;
}

sc_result_t sc_cuda_stream_create(sc_device_t *device, sc_stream_t **stream) {
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(device, &scope));
  CUstream native = NULL;
  sc_result_t res = SC_CU(cuStreamCreate, (&native, CU_STREAM_NON_BLOCKING),
                          "creating a stream on device %d", device->ordinal);
  if (res == SYMCOMM_OK) {
    res = sc_cuda_stream_new(device, native, true, stream);
    if (res != SYMCOMM_OK)
      (void)SC_CU(cuStreamDestroy, (native), "destroying a new stream");
  }
  sc_cuda_leave(&scope);
  return res;
}

sc_result_t sc_cuda_stream_wrap(sc_device_t *device, void *native, sc_stream_t **stream) {
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(device, &scope));
  CUcontext ctx = NULL;
  sc_result_t res = SC_CU(cuStreamGetCtx, ((CUstream)native, &ctx),
                          "finding the context of CUDA stream %p", native);
  if (res == SYMCOMM_OK && ctx != device->ctx)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                   "CUDA stream %p belongs to another context than the communicator's device %d "
                   "(its primary context): make the stream on that device",
                   native, device->ordinal);
  CUevent own_done = NULL;
  if (res == SYMCOMM_OK)
    res = SC_CU(cuEventCreate, (&own_done, CU_EVENT_DISABLE_TIMING),
                "creating the event of a wrapped stream on device %d", device->ordinal);
  if (res == SYMCOMM_OK)
    res = sc_cuda_stream_new(device, (CUstream)native, false, stream);
  if (res == SYMCOMM_OK)
    (*stream)->own_done = own_done;
  else if (own_done != NULL)
    (void)SC_CU(cuEventDestroy, (own_done), "destroying a new event");
  sc_cuda_leave(&scope);
  return res;
}

void sc_cuda_stream_mark_own(sc_stream_t *s) {
  if (s->owned || sc_cuda_stream_capturing(s))
    return; /* all its work is symcomm's; or it goes into a graph, not the stream */
  bool recorded = sc_cu.cuEventRecord(s->own_done, s->stream) == CUDA_SUCCESS;
  pthread_mutex_lock(&s->lock);
  s->own_recorded = recorded;
  s->own_unknown = !recorded;
  pthread_mutex_unlock(&s->lock);
}

/* One look at symcomm's own work on the stream: CUDA_SUCCESS once done. */
static CUresult sc_cuda_own_query(sc_stream_t *s) {
  pthread_mutex_lock(&s->lock);
  bool whole = s->owned || s->own_unknown, recorded = s->own_recorded;
  pthread_mutex_unlock(&s->lock);
  if (whole)
    return sc_cu.cuStreamQuery(s->stream);
  return recorded ? sc_cu.cuEventQuery(s->own_done) : CUDA_SUCCESS;
}

/* Whether symcomm's work on the stream ended by the deadline; else, in
 * `pending`, what was left. A failed query counts as ended (a fault: the
 * context is lost and nothing runs any more). */
static bool sc_cuda_own_settle(sc_stream_t *s, int64_t deadline_ms, char *pending, size_t len) {
  bool whole = s->owned;
  if (!whole && sc_cuda_stream_capturing(s)) {
    pthread_mutex_lock(&s->lock);
    whole = s->own_unknown; /* the stream cannot be queried during a capture */
    pthread_mutex_unlock(&s->lock);
    if (whole)
      return true;
  }
  for (int round = 0;; round++) {
    if (sc_cuda_own_query(s) != CUDA_ERROR_NOT_READY)
      return true;
    if (deadline_ms != SC_DEADLINE_NEVER && sc_now_ms() >= deadline_ms)
      break;
    sc_cuda_poll_pause(round);
  }
  if (s->owned)
    snprintf(pending, len, "CUDA stream %p (made by symcomm) of device %d still had work running",
             (void *)s->stream, s->device->ordinal);
  else
    snprintf(pending, len,
             "symcomm's last launch on the caller's CUDA stream %p of device %d had not finished "
             "(or had not started: the stream may be held by the caller's own work queued before it)",
             (void *)s->stream, s->device->ordinal);
  return false;
}

/* Whether the stream is being captured into a graph: then it may be neither
 * queried nor synchronized (that would end the capture). */
static sc_result_t sc_cuda_capturing(sc_stream_t *s, bool *capturing) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  SC_CHECK(SC_CU(cuStreamIsCapturing, (s->stream, &status), "asking whether stream %p is captured",
                 (void *)s->stream));
  *capturing = status != CU_STREAM_CAPTURE_STATUS_NONE;
  return SYMCOMM_OK;
}

/* The stream's failure, sticky from the first time the host sees it: the
 * sentence is logged once. */
static sc_result_t sc_cuda_stream_fail(sc_stream_t *s, sc_result_t result, const char *sentence) {
  pthread_mutex_lock(&s->lock);
  bool first = s->result == SYMCOMM_OK;
  if (first) {
    snprintf(s->sentence, sizeof(s->sentence), "%s", sentence);
    s->result = result;
  }
  result = s->result;
  pthread_mutex_unlock(&s->lock);
  if (first)
    SC_RAISE(result, SC_CUDA_LOG, "stream stopped: %s", s->sentence);
  return sc_error_pass(result, s->sentence);
}

static sc_result_t sc_cuda_sticky(sc_stream_t *s) {
  pthread_mutex_lock(&s->lock);
  sc_result_t r = s->result;
  pthread_mutex_unlock(&s->lock);
  return r == SYMCOMM_OK ? r : sc_error_pass(r, s->sentence);
}

/* The stream's work is done: the first failure of its kernels, if any. */
static sc_result_t sc_cuda_stream_outcome(sc_stream_t *s) {
  if (__atomic_load_n(&s->record->failed, __ATOMIC_ACQUIRE) == 0)
    return SYMCOMM_OK;
  sc_dev_error_t err = s->record->error;
  char sentence[SC_CUDA_SENTENCE_BYTES];
  sc_dev_error_describe(&err, sentence, sizeof(sentence));
  return sc_cuda_stream_fail(s, sc_backend_dev_result(&err), sentence);
}

/* One look: OK (done), IN_PROGRESS, or the failure. */
static sc_result_t sc_cuda_stream_poll(sc_stream_t *s) {
  CUresult rc = sc_cu.cuStreamQuery(s->stream);
  if (rc == CUDA_ERROR_NOT_READY)
    return SYMCOMM_IN_PROGRESS;
  if (rc == CUDA_SUCCESS)
    return sc_cuda_stream_outcome(s);
  /* A fault of a kernel (an illegal address) or of the context: every later
   * call on this device fails too. */
  const char *text = NULL;
  if (sc_cu.cuGetErrorString(rc, &text) != CUDA_SUCCESS || text == NULL)
    text = "no description";
  char sentence[SC_CUDA_SENTENCE_BYTES];
  snprintf(sentence, sizeof(sentence), "the CUDA stream failed on device %d: cuStreamQuery returned %s (%s)",
           s->device->ordinal, sc_cuda_result_name(rc), text);
  return sc_cuda_stream_fail(s, SYMCOMM_ERR_DEVICE, sentence);
}

static sc_result_t sc_cuda_stream_wait(sc_stream_t *s, int64_t deadline_ms, bool once) {
  SC_CHECK(sc_cuda_sticky(s));
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(s->device, &scope));
  bool capturing = false;
  sc_result_t r = sc_cuda_capturing(s, &capturing);
  if (r == SYMCOMM_OK && capturing)
    r = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_CUDA_LOG,
                 "the stream is being captured into a CUDA graph: it can be synchronized or "
                 "queried only after the capture ends (and the graph launched)");
  for (int round = 0; r == SYMCOMM_OK; round++) {
    r = sc_cuda_stream_poll(s);
    if (r != SYMCOMM_IN_PROGRESS || once)
      break;
    if (deadline_ms != SC_DEADLINE_NEVER && sc_now_ms() >= deadline_ms) {
      r = SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_CUDA_LOG,
                   "the stream's work was still running at the deadline (it goes on running)");
      break;
    }
    r = SYMCOMM_OK;
    sc_cuda_poll_pause(round);
  }
  sc_cuda_leave(&scope);
  return r;
}

sc_result_t sc_cuda_stream_drain(sc_stream_t *stream, int64_t deadline_ms) {
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(stream->device, &scope));
  char pending[256];
  bool done = sc_cuda_own_settle(stream, deadline_ms, pending, sizeof(pending));
  sc_cuda_leave(&scope);
  if (!done)
    return sc_error_pass(SYMCOMM_IN_PROGRESS, pending);
  SC_CHECK(sc_cuda_sticky(stream));
  return sc_cuda_stream_outcome(stream);
}

sc_result_t sc_cuda_stream_synchronize(sc_stream_t *stream, int64_t deadline_ms) {
  return sc_cuda_stream_wait(stream, deadline_ms, false);
}

sc_result_t sc_cuda_stream_query(sc_stream_t *stream) {
  return sc_cuda_stream_wait(stream, SC_DEADLINE_NEVER, true);
}

const char *sc_cuda_stream_error(sc_stream_t *stream) {
  pthread_mutex_lock(&stream->lock);
  const char *text = stream->result == SYMCOMM_OK ? "" : stream->sentence;
  pthread_mutex_unlock(&stream->lock);
  return text;
}

void sc_cuda_stream_destroy(sc_stream_t *stream, int64_t deadline_ms) {
  if (stream == NULL)
    return;
  sc_device_t *device = stream->device;
  bool done = true;
  char pending[256] = "";
  sc_cuda_scope_t scope;
  if (sc_cuda_enter(device, &scope) == SYMCOMM_OK) {
    /* Work in a graph being captured is the graph's, not the stream's. */
    done = sc_cuda_own_settle(stream, deadline_ms, pending, sizeof(pending));
    /* CUDA lets both go while work that uses them is still queued. */
    if (stream->own_done != NULL)
      (void)SC_CU(cuEventDestroy, (stream->own_done), "destroying the event of a wrapped stream");
    if (stream->owned)
      (void)SC_CU(cuStreamDestroy, (stream->stream), "destroying a stream of device %d",
                  device->ordinal);
    sc_cuda_leave(&scope);
  }
  /* The record stays with the device: a graph may still write it. */
  pthread_mutex_destroy(&stream->lock);
  free(stream);
  if (!done) {
    /* Its kernels may still use the device's records, module and context:
     * the device keeps this stream's hold on it, for good. */
    SC_WARN(SC_CUDA_LOG,
            "destroying a stream: %s at the deadline (SYMCOMM_TIMEOUT); it is left to finish, and "
            "device %d stays open (its hold is kept, not released)",
            pending, device->ordinal);
    return;
  }
  sc_cuda_device_release(device);
}

sc_result_t sc_cuda_copy(sc_stream_t *stream, void *dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return SYMCOMM_OK;
  if (dst == NULL || src == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                    "a stream copy of %zu bytes from %p to %p", bytes, src, dst);
  SC_CHECK(sc_cuda_sticky(stream));
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(stream->device, &scope));
  sc_result_t res = SC_CU(cuMemcpyAsync,
                          ((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes, stream->stream),
                          "queueing a copy of %zu bytes from %p to %p", bytes, src, dst);
  if (res == SYMCOMM_OK)
    sc_cuda_stream_mark_own(stream);
  sc_cuda_leave(&scope);
  return res;
}

bool sc_cuda_stream_capturing(sc_stream_t *stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (sc_cu.cuStreamIsCapturing(stream->stream, &status) != CUDA_SUCCESS)
    return false;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}
