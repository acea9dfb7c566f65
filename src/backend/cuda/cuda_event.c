/* Events of the CUDA backend: CUDA events without timing. Waits on them are
 * bounded by the caller's deadline (polled, never cuEventSynchronize). */
#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"
#include "util/clock.h"

sc_result_t sc_cuda_event_create(sc_device_t *device, sc_event_t **event) {
  sc_event_t *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_CUDA_LOG, "no memory for an event");
  sc_cuda_scope_t scope;
  sc_result_t res = sc_cuda_enter(device, &scope);
  if (res == SYMCOMM_OK) {
    res = SC_CU(cuEventCreate, (&e->event, CU_EVENT_DISABLE_TIMING), "creating an event on device %d",
                device->ordinal);
    sc_cuda_leave(&scope);
  }
  if (res != SYMCOMM_OK) {
    free(e);
    return res;
  }
  e->device = device;
  sc_cuda_device_hold(device);
  *event = e;
  return SYMCOMM_OK;
}

void sc_cuda_event_destroy(sc_event_t *event) {
  if (event == NULL)
    return;
  sc_device_t *device = event->device;
  sc_cuda_scope_t scope;
  if (sc_cuda_enter(device, &scope) == SYMCOMM_OK) {
    /* CUDA lets an event go while work that records it is queued. */
    (void)SC_CU(cuEventDestroy, (event->event), "destroying an event of device %d", device->ordinal);
    sc_cuda_leave(&scope);
  }
  free(event);
  sc_cuda_device_release(device);
}

static sc_result_t sc_cuda_same_context(sc_event_t *event, sc_stream_t *stream) {
  if (event->device->ctx == stream->device->ctx)
    return SYMCOMM_OK;
  return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_CUDA_LOG,
                  "an event of device %d used with a stream of device %d", event->device->ordinal,
                  stream->device->ordinal);
}

sc_result_t sc_cuda_event_record(sc_event_t *event, sc_stream_t *stream) {
  SC_CHECK(sc_cuda_same_context(event, stream));
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(stream->device, &scope));
  sc_result_t res = SC_CU(cuEventRecord, (event->event, stream->stream), "recording an event");
  sc_cuda_leave(&scope);
  return res;
}

sc_result_t sc_cuda_stream_wait_event(sc_stream_t *stream, sc_event_t *event) {
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(stream->device, &scope));
  sc_result_t res = SC_CU(cuStreamWaitEvent, (stream->stream, event->event, 0),
                          "making a stream wait for an event");
  sc_cuda_leave(&scope);
  return res;
}

static sc_result_t sc_cuda_event_poll(sc_event_t *event) {
  CUresult rc = sc_cu.cuEventQuery(event->event);
  if (rc == CUDA_SUCCESS)
    return SYMCOMM_OK;
  if (rc == CUDA_ERROR_NOT_READY)
    return SYMCOMM_IN_PROGRESS;
  return SC_CU(cuEventQuery, (event->event), "asking whether an event of device %d completed",
               event->device->ordinal);
}

sc_result_t sc_cuda_event_query(sc_event_t *event) {
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(event->device, &scope));
  sc_result_t res = sc_cuda_event_poll(event);
  sc_cuda_leave(&scope);
  return res;
}

sc_result_t sc_cuda_event_synchronize(sc_event_t *event, int64_t deadline_ms) {
  sc_cuda_scope_t scope;
  SC_CHECK(sc_cuda_enter(event->device, &scope));
  sc_result_t res;
  for (int round = 0;; round++) {
    res = sc_cuda_event_poll(event);
    if (res != SYMCOMM_IN_PROGRESS)
      break;
    if (deadline_ms != SC_DEADLINE_NEVER && sc_now_ms() >= deadline_ms) {
      res = SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_CUDA_LOG,
                     "the event had not completed at the deadline (the work before it goes on)");
      break;
    }
    sc_cuda_poll_pause(round);
  }
  sc_cuda_leave(&scope);
  return res;
}
