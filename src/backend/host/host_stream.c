/* Streams of the simulated backend: one worker thread per stream running a
 * FIFO of work items in order (copies, program launches, event records and
 * event waits).
 *
 * Failure is sticky: an item that fails (a program reporting an error, or an
 * event wait on a stream that failed) stops the stream for good. The stream
 * keeps the result and its sentence; the items queued behind it are
 * discarded without running (their events complete with the error, so
 * nothing waits for them forever); synchronize and query return the error
 * from then on, and new work is refused with it. A stream that failed stays
 * failed: destroy it and create another. */
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dev_result.h"
#include "backend/host/host_internal.h"
#include "util/clock.h"

typedef enum sc_host_item_kind {
  SC_HOST_ITEM_COPY,
  SC_HOST_ITEM_LAUNCH,
  SC_HOST_ITEM_RECORD,
  SC_HOST_ITEM_WAIT_EVENT
} sc_host_item_kind_t;

typedef struct sc_host_item {
  struct sc_host_item *next;
  sc_host_item_kind_t kind;
  union {
    struct {
      void *dst;
      const void *src;
      size_t bytes;
    } copy;
    struct {
      sc_program_t program;
      uint32_t blocks;
    } launch;
    struct {
      sc_event_t *event; /* held (sc_host_event_hold) until the item is done */
      uint64_t gen;
    } event;
  } u;
  max_align_t args[]; /* a launch's copy of its arguments (programs may write to it) */
} sc_host_item_t;

struct sc_stream {
  sc_device_t *device;
  pthread_mutex_t mutex;
  pthread_cond_t work_cond; /* the worker waits here for items or closing */
  pthread_cond_t idle_cond; /* synchronize waits here for pending == 0 or failure */
  sc_host_item_t *head, *tail;
  size_t pending; /* queued plus running */
  bool closing;
  bool exited;   /* the worker is done (destroy joins it) */
  bool orphaned; /* destroy gave up waiting: the worker frees the stream when done */
  sc_result_t result; /* OK until the stream fails; then never again OK */
  char sentence[SC_HOST_SENTENCE_BYTES];
  pthread_t thread;
};

/* ---- items */

static sc_result_t sc_host_item_new(size_t args_bytes, sc_host_item_kind_t kind,
                                    sc_host_item_t **item) {
  sc_host_item_t *it = malloc(sizeof(*it) + args_bytes);
  if (it == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_HOST_LOG, "no memory to queue stream work");
  it->next = NULL;
  it->kind = kind;
  *item = it;
  return SYMCOMM_OK;
}

/* Frees an item that will not run because its stream failed. An item that
 * had been accepted (queued before the failure) may have peers counting on
 * it: its program is told it is abandoned. One refused at enqueue never
 * counted: its caller gets the error and undoes what it prepared. */
static void sc_host_item_discard(sc_host_item_t *it, sc_result_t result, const char *sentence,
                                 bool accepted) {
  if (accepted && it->kind == SC_HOST_ITEM_LAUNCH)
    sc_host_program_abandon(it->u.launch.program, it->args);
  if (it->kind == SC_HOST_ITEM_RECORD)
    sc_host_event_complete(it->u.event.event, it->u.event.gen, result, sentence);
  if (it->kind == SC_HOST_ITEM_RECORD || it->kind == SC_HOST_ITEM_WAIT_EVENT)
    sc_host_event_release(it->u.event.event);
  free(it);
}

/* Runs one item on the worker thread: OK, or the failure with its sentence. */
static sc_result_t sc_host_item_run(sc_host_item_t *it, char *sentence, size_t len) {
  switch (it->kind) {
  case SC_HOST_ITEM_COPY:
    if (it->u.copy.bytes > 0)
      memmove(it->u.copy.dst, it->u.copy.src, it->u.copy.bytes);
    return SYMCOMM_OK;
  case SC_HOST_ITEM_LAUNCH: {
    sc_dev_error_t err;
    sc_host_program_run(it->u.launch.program, it->u.launch.blocks, it->args, &err);
    if (err.kind == SC_DEV_OK)
      return SYMCOMM_OK;
    sc_dev_error_describe(&err, sentence, len);
    return sc_backend_dev_result(&err);
  }
  case SC_HOST_ITEM_RECORD:
    sc_host_event_complete(it->u.event.event, it->u.event.gen, SYMCOMM_OK, NULL);
    return SYMCOMM_OK;
  case SC_HOST_ITEM_WAIT_EVENT:
    return sc_host_event_wait(it->u.event.event, it->u.event.gen, sentence, len);
  }
  snprintf(sentence, len, "unknown stream work item %d", (int)it->kind);
  return SYMCOMM_ERR_INTERNAL;
}

/* ---- the worker */

static void sc_host_stream_free(sc_stream_t *s) {
  pthread_cond_destroy(&s->idle_cond);
  pthread_cond_destroy(&s->work_cond);
  pthread_mutex_destroy(&s->mutex);
  free(s);
}

/* Records the failure, discards what was queued, and wakes synchronize. The
 * events recorded behind the failure fail before anyone can see the stream
 * failed (the lock order is stream, then event). */
static void sc_host_stream_fail(sc_stream_t *s, sc_result_t result, const char *sentence) {
  SC_RAISE(result, SC_HOST_LOG, "stream stopped: %s", sentence);
  pthread_mutex_lock(&s->mutex);
  snprintf(s->sentence, sizeof(s->sentence), "%s", sentence);
  while (s->head != NULL) {
    sc_host_item_t *it = s->head;
    s->head = it->next;
    sc_host_item_discard(it, result, sentence, true);
  }
  s->tail = NULL;
  s->result = result;
  s->pending = 0;
  pthread_cond_broadcast(&s->idle_cond);
  pthread_mutex_unlock(&s->mutex);
}

static void *sc_host_stream_main(void *arg) {
  sc_stream_t *s = arg;
  char sentence[SC_HOST_SENTENCE_BYTES];
  pthread_mutex_lock(&s->mutex);
  for (;;) {
    while (s->head == NULL && !s->closing)
      pthread_cond_wait(&s->work_cond, &s->mutex);
    sc_host_item_t *it = s->head;
    if (it == NULL)
      break; /* closing, and nothing left */
    s->head = it->next;
    if (s->head == NULL)
      s->tail = NULL;
    pthread_mutex_unlock(&s->mutex);

    sentence[0] = '\0';
    sc_result_t r = sc_host_item_run(it, sentence, sizeof(sentence));
    if (it->kind == SC_HOST_ITEM_RECORD || it->kind == SC_HOST_ITEM_WAIT_EVENT)
      sc_host_event_release(it->u.event.event);
    free(it);
    if (r != SYMCOMM_OK)
      sc_host_stream_fail(s, r, sentence);

    pthread_mutex_lock(&s->mutex);
    if (r == SYMCOMM_OK && --s->pending == 0)
      pthread_cond_broadcast(&s->idle_cond);
  }
  bool orphaned = s->orphaned;
  s->exited = true;
  pthread_cond_broadcast(&s->idle_cond);
  pthread_mutex_unlock(&s->mutex);
  if (orphaned)
    sc_host_stream_free(s); /* nobody will join this thread */
  return NULL;
}

/* ---- create, destroy, wait */

sc_result_t sc_host_stream_create(sc_device_t *device, sc_stream_t **stream) {
  sc_result_t r = SYMCOMM_OK;
  sc_stream_t *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_HOST_LOG, "no memory for a stream");
  s->device = device;
  s->result = SYMCOMM_OK;
  pthread_mutex_init(&s->mutex, NULL);
  SC_CHECK_GOTO(sc_host_cond_init(&s->work_cond), r, fail_mutex);
  SC_CHECK_GOTO(sc_host_cond_init(&s->idle_cond), r, fail_work_cond);

  /* The worker takes no signals: they go to the application's threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&s->thread, NULL, sc_host_stream_main, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    r = SC_RAISE(SYMCOMM_ERR_SYSTEM, SC_HOST_LOG, "cannot start a stream's worker thread: %s",
                 strerror(rc));
    goto fail_idle_cond;
  }
  pthread_setname_np(s->thread, "symcomm-stream");
  *stream = s;
  return SYMCOMM_OK;

fail_idle_cond:
  pthread_cond_destroy(&s->idle_cond);
fail_work_cond:
  pthread_cond_destroy(&s->work_cond);
fail_mutex:
  pthread_mutex_destroy(&s->mutex);
  free(s);
  return r;
}

void sc_host_stream_destroy(sc_stream_t *stream, int64_t deadline_ms) {
  if (stream == NULL)
    return;
  /* The worker runs what is queued, then exits. */
  pthread_mutex_lock(&stream->mutex);
  stream->closing = true;
  pthread_cond_signal(&stream->work_cond);
  bool timed_out = false;
  while (!stream->exited && !timed_out)
    timed_out = sc_host_cond_wait_until(&stream->idle_cond, &stream->mutex, deadline_ms) != 0;
  bool exited = stream->exited;
  size_t pending = stream->pending;
  if (!exited) {
    /* Its work may read and write memory of its communicators, which they
     * keep as long as it runs; the stream itself is freed by its worker. */
    stream->orphaned = true;
    pthread_detach(stream->thread);
  }
  pthread_mutex_unlock(&stream->mutex);
  if (!exited) {
    SC_WARN(SC_HOST_LOG,
            "destroying simulated-GPU stream %p: %zu work item%s still queued or running at the "
            "deadline (SYMCOMM_TIMEOUT); the stream finishes them, then frees itself",
            (void *)stream, pending, pending == 1 ? "" : "s");
    return;
  }
  pthread_join(stream->thread, NULL);
  sc_host_stream_free(stream);
}

/* The stream's failure, with its sentence now this thread's last error (it
 * was logged once, by the worker that saw it). Mutex held. */
static sc_result_t sc_host_stream_failed_locked(sc_stream_t *s) {
  return sc_error_pass(s->result, s->sentence);
}

/* Waits until the stream is idle or failed, or the deadline: its result, and
 * how many items were left. */
static sc_result_t sc_host_stream_wait(sc_stream_t *stream, int64_t deadline_ms, size_t *left) {
  pthread_mutex_lock(&stream->mutex);
  bool timed_out = false;
  while (stream->pending > 0 && stream->result == SYMCOMM_OK && !timed_out)
    timed_out = sc_host_cond_wait_until(&stream->idle_cond, &stream->mutex, deadline_ms) != 0;
  sc_result_t r = stream->result;
  *left = stream->pending;
  if (r != SYMCOMM_OK)
    r = sc_host_stream_failed_locked(stream);
  pthread_mutex_unlock(&stream->mutex);
  return r;
}

sc_result_t sc_host_stream_drain(sc_stream_t *stream, int64_t deadline_ms) {
  size_t pending = 0;
  sc_result_t r = sc_host_stream_wait(stream, deadline_ms, &pending);
  if (r != SYMCOMM_OK || pending == 0)
    return r;
  char text[160];
  snprintf(text, sizeof(text), "simulated-GPU stream %p still had %zu work item%s queued or running",
           (void *)stream, pending, pending == 1 ? "" : "s");
  return sc_error_pass(SYMCOMM_IN_PROGRESS, text);
}

sc_result_t sc_host_stream_synchronize(sc_stream_t *stream, int64_t deadline_ms) {
  size_t pending = 0;
  sc_result_t r = sc_host_stream_wait(stream, deadline_ms, &pending);
  if (r == SYMCOMM_OK && pending > 0)
    return SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_HOST_LOG,
                    "the stream still had %zu work item%s queued or running at the deadline "
                    "(they go on running)",
                    pending, pending == 1 ? "" : "s");
  return r;
}

sc_result_t sc_host_stream_query(sc_stream_t *stream) {
  pthread_mutex_lock(&stream->mutex);
  sc_result_t r = stream->result;
  if (r != SYMCOMM_OK)
    r = sc_host_stream_failed_locked(stream);
  else if (stream->pending > 0)
    r = SYMCOMM_IN_PROGRESS;
  pthread_mutex_unlock(&stream->mutex);
  return r;
}

const char *sc_host_stream_error(sc_stream_t *stream) {
  /* Written once, before result leaves OK, and never again. */
  pthread_mutex_lock(&stream->mutex);
  const char *text = stream->result == SYMCOMM_OK ? "" : stream->sentence;
  pthread_mutex_unlock(&stream->mutex);
  return text;
}

/* ---- enqueue */

/* Queues `it`, or, on a stream that failed, discards it and returns the failure. */
static sc_result_t sc_host_enqueue(sc_stream_t *s, sc_host_item_t *it) {
  pthread_mutex_lock(&s->mutex);
  sc_result_t r = s->result;
  if (r == SYMCOMM_OK) {
    if (s->tail != NULL)
      s->tail->next = it;
    else
      s->head = it;
    s->tail = it;
    s->pending++;
    pthread_cond_signal(&s->work_cond);
  } else {
    r = sc_host_stream_failed_locked(s);
  }
  pthread_mutex_unlock(&s->mutex);
  if (r != SYMCOMM_OK)
    sc_host_item_discard(it, r, s->sentence, false);
  return r;
}

sc_result_t sc_host_copy(sc_stream_t *stream, void *dst, const void *src, size_t bytes) {
  if (bytes > 0 && (dst == NULL || src == NULL))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_HOST_LOG,
                    "a stream copy of %zu bytes from %p to %p", bytes, src, dst);
  sc_host_item_t *it = NULL;
  SC_CHECK(sc_host_item_new(0, SC_HOST_ITEM_COPY, &it));
  it->u.copy.dst = dst;
  it->u.copy.src = src;
  it->u.copy.bytes = bytes;
  return sc_host_enqueue(stream, it);
}

sc_result_t sc_host_launch(sc_stream_t *stream, sc_program_t program, const void *args,
                           size_t args_bytes, const sc_launch_t *how) {
  SC_CHECK(sc_host_program_check(program, args, args_bytes));
  if (how == NULL || how->blocks < 1)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_HOST_LOG,
                    "a launch of a device program needs at least one block");
  sc_host_item_t *it = NULL;
  SC_CHECK(sc_host_item_new(args_bytes, SC_HOST_ITEM_LAUNCH, &it));
  it->u.launch.program = program;
  it->u.launch.blocks = how->blocks;
  memcpy(it->args, args, args_bytes);
  return sc_host_enqueue(stream, it);
}

sc_result_t sc_host_event_record(sc_event_t *event, sc_stream_t *stream) {
  sc_host_item_t *it = NULL;
  SC_CHECK(sc_host_item_new(0, SC_HOST_ITEM_RECORD, &it));
  /* Every generation handed out is completed: by the worker, or by a discard. */
  sc_host_event_hold(event);
  it->u.event.event = event;
  it->u.event.gen = sc_host_event_next_generation(event);
  return sc_host_enqueue(stream, it);
}

sc_result_t sc_host_stream_wait_event(sc_stream_t *stream, sc_event_t *event) {
  uint64_t gen = sc_host_event_generation(event);
  if (gen == 0)
    return SYMCOMM_OK; /* never recorded: complete */
  sc_host_item_t *it = NULL;
  SC_CHECK(sc_host_item_new(0, SC_HOST_ITEM_WAIT_EVENT, &it));
  sc_host_event_hold(event);
  it->u.event.event = event;
  it->u.event.gen = gen;
  return sc_host_enqueue(stream, it);
}

sc_result_t sc_host_stream_wrap(sc_device_t *device, void *native, sc_stream_t **stream) {
  (void)device;
  (void)native;
  (void)stream;
  return SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_HOST_LOG,
                  "the simulated-GPU backend has no native streams to wrap (a CUDA stream needs "
                  "the CUDA backend)");
}

/* The simulated backend has no graphs: its streams always run their work. */
bool sc_host_stream_capturing(sc_stream_t *stream) {
  (void)stream;
  return false;
}
