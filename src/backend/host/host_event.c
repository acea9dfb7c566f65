/* Events of the simulated backend. Each record makes a new generation; the
 * event stands for its latest generation, which is done when the stream that
 * recorded it reaches the record (or failed before it). An event never
 * recorded is complete. Re-recording works as with CUDA events: queries and
 * waits issued after a record refer to that record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/host/host_internal.h"

struct sc_event {
  pthread_mutex_t mutex;
  pthread_cond_t done_cond;
  int refs;           /* the owner's, plus one per queued item naming the event */
  uint64_t recorded;  /* latest generation handed out */
  uint64_t completed; /* latest generation done */
  sc_result_t result; /* of generation `completed` */
  char sentence[SC_HOST_SENTENCE_BYTES];
};

sc_result_t sc_host_event_create(sc_device_t *device, sc_event_t **event) {
  (void)device;
  sc_event_t *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_HOST_LOG, "no memory for an event");
  sc_result_t r = sc_host_cond_init(&e->done_cond);
  if (r != SYMCOMM_OK) {
    free(e);
    return r;
  }
  pthread_mutex_init(&e->mutex, NULL);
  e->refs = 1;
  *event = e;
  return SYMCOMM_OK;
}

void sc_host_event_hold(sc_event_t *event) {
  pthread_mutex_lock(&event->mutex);
  event->refs++;
  pthread_mutex_unlock(&event->mutex);
}

void sc_host_event_release(sc_event_t *event) {
  pthread_mutex_lock(&event->mutex);
  int left = --event->refs;
  pthread_mutex_unlock(&event->mutex);
  if (left > 0)
    return;
  pthread_cond_destroy(&event->done_cond);
  pthread_mutex_destroy(&event->mutex);
  free(event);
}

void sc_host_event_destroy(sc_event_t *event) {
  if (event != NULL)
    sc_host_event_release(event);
}

uint64_t sc_host_event_next_generation(sc_event_t *event) {
  pthread_mutex_lock(&event->mutex);
  uint64_t gen = ++event->recorded;
  pthread_mutex_unlock(&event->mutex);
  return gen;
}

uint64_t sc_host_event_generation(sc_event_t *event) {
  pthread_mutex_lock(&event->mutex);
  uint64_t gen = event->recorded;
  pthread_mutex_unlock(&event->mutex);
  return gen;
}

void sc_host_event_complete(sc_event_t *event, uint64_t gen, sc_result_t result,
                            const char *sentence) {
  pthread_mutex_lock(&event->mutex);
  /* Records on different streams may finish out of order: the newest wins. */
  if (gen > event->completed) {
    event->completed = gen;
    event->result = result;
    if (result != SYMCOMM_OK)
      snprintf(event->sentence, sizeof(event->sentence),
               "the stream that recorded this event failed: %s", sentence);
    else
      event->sentence[0] = '\0';
    pthread_cond_broadcast(&event->done_cond);
  }
  pthread_mutex_unlock(&event->mutex);
}

/* With the mutex held: the result of a generation that is done. */
static sc_result_t sc_host_event_result_locked(sc_event_t *event, char *sentence, size_t len) {
  if (event->result != SYMCOMM_OK && sentence != NULL)
    snprintf(sentence, len, "%s", event->sentence);
  return event->result;
}

sc_result_t sc_host_event_wait(sc_event_t *event, uint64_t gen, char *sentence, size_t len) {
  pthread_mutex_lock(&event->mutex);
  while (event->completed < gen)
    pthread_cond_wait(&event->done_cond, &event->mutex);
  sc_result_t r = sc_host_event_result_locked(event, sentence, len);
  pthread_mutex_unlock(&event->mutex);
  return r;
}

/* A failed generation: its result, with the sentence now the caller's. */
static sc_result_t sc_host_event_failed(sc_result_t r, const char *sentence) {
  return sc_error_pass(r, sentence);
}

sc_result_t sc_host_event_query(sc_event_t *event) {
  char sentence[SC_HOST_SENTENCE_BYTES];
  pthread_mutex_lock(&event->mutex);
  sc_result_t r = SYMCOMM_IN_PROGRESS;
  if (event->completed >= event->recorded)
    r = sc_host_event_result_locked(event, sentence, sizeof(sentence));
  pthread_mutex_unlock(&event->mutex);
  return r == SYMCOMM_OK || r == SYMCOMM_IN_PROGRESS ? r : sc_host_event_failed(r, sentence);
}

sc_result_t sc_host_event_synchronize(sc_event_t *event, int64_t deadline_ms) {
  char sentence[SC_HOST_SENTENCE_BYTES];
  pthread_mutex_lock(&event->mutex);
  uint64_t gen = event->recorded;
  int timed_out = 0;
  while (event->completed < gen && !timed_out)
    timed_out = sc_host_cond_wait_until(&event->done_cond, &event->mutex, deadline_ms) != 0;
  int reached = event->completed >= gen;
  sc_result_t r = reached ? sc_host_event_result_locked(event, sentence, sizeof(sentence))
                          : SYMCOMM_ERR_TIMEOUT;
  pthread_mutex_unlock(&event->mutex);
  if (!reached)
    return SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_HOST_LOG,
                    "the event was not reached by its stream before the deadline");
  return r == SYMCOMM_OK ? r : sc_host_event_failed(r, sentence);
}
