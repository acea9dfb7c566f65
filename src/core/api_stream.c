/* Public streams and their registry. */
#include <stdio.h>
#include <stdlib.h>

#include "core/stream.h"
#include "util/clock.h"
#include "util/log.h"

static pthread_mutex_t sc_streams_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sc_streams_unpinned = PTHREAD_COND_INITIALIZER;
static struct symcomm_stream *sc_streams;

static bool sc_stream_registered(const struct symcomm_stream *stream) {
  for (const struct symcomm_stream *s = sc_streams; s != NULL; s = s->next)
    if (s == stream)
      return true;
  return false;
}

static sc_result_t sc_stream_check(const struct symcomm_stream *stream) {
  if (stream == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "the stream is NULL");
  if (stream->magic != SC_STREAM_MAGIC)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                    "not a stream (a stray pointer, or one already destroyed)");
  return SYMCOMM_OK;
}

sc_result_t sc_stream_use(struct symcomm_stream *stream, struct symcomm_comm *comm) {
  SC_CHECK(sc_stream_check(stream));
  if (stream->ops != comm->ops)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                    "the stream belongs to another backend than the communicator");
  pthread_mutex_lock(&comm->lock);
  sc_result_t res = SYMCOMM_OK;
  bool known = false;
  for (int i = 0; i < comm->nused && !known; i++)
    known = comm->used[i] == stream;
  if (!known) {
    if (comm->nused == comm->used_cap) {
      int cap = comm->used_cap ? 2 * comm->used_cap : 8;
      struct symcomm_stream **grown = realloc(comm->used, sizeof(*grown) * (size_t)cap);
      if (grown == NULL)
        res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory to track streams");
      else {
        comm->used = grown;
        comm->used_cap = cap;
      }
    }
    if (res == SYMCOMM_OK)
      comm->used[comm->nused++] = stream;
  }
  pthread_mutex_unlock(&comm->lock);
  return res;
}

bool sc_comm_drain(struct symcomm_comm *comm) {
  pthread_mutex_lock(&comm->lock);
  int n = comm->nused;
  struct symcomm_stream **pinned = n > 0 ? malloc(sizeof(*pinned) * (size_t)n) : NULL;
  int npinned = 0;
  /* Pin the ones still alive, so that nobody destroys them while we wait. */
  pthread_mutex_lock(&sc_streams_lock);
  for (int i = 0; i < n && pinned != NULL; i++)
    if (sc_stream_registered(comm->used[i])) {
      comm->used[i]->pins++;
      pinned[npinned++] = comm->used[i];
    }
  pthread_mutex_unlock(&sc_streams_lock);
  pthread_mutex_unlock(&comm->lock);
  /* Every wait in that work is bounded, but a caller's own work on a
   * wrapped stream, or a wait that keeps seeing progress, is not ours to
   * outwait. */
  int64_t deadline = sc_deadline_after(comm->options.timeout_ms);
  bool settled = pinned != NULL || n == 0;
  for (int i = 0; i < npinned; i++)
    if (pinned[i]->ops->stream_drain(pinned[i]->stream, deadline) == SYMCOMM_IN_PROGRESS) {
      SC_WARN(SC_INIT,
              "comm %p rank %d: gave up waiting for its work after %.1f s (SYMCOMM_TIMEOUT): %s; "
              "what that work may use is kept (leaked), not freed under it",
              (void *)comm, comm->rank, (double)comm->options.timeout_ms / 1000.0, sc_error_last());
      settled = false;
    }
  pthread_mutex_lock(&sc_streams_lock);
  for (int i = 0; i < npinned; i++)
    pinned[i]->pins--;
  pthread_cond_broadcast(&sc_streams_unpinned);
  pthread_mutex_unlock(&sc_streams_lock);
  free(pinned);
  sc_error_clear(); /* the streams keep their own errors */
  return settled;
}

sc_result_t sc_stream_follow(const struct symcomm_stream *before, struct symcomm_stream *after,
                             sc_event_t *event) {
  sc_result_t res = SYMCOMM_OK;
  /* Under the registry lock a destroy cannot free it while we record. */
  pthread_mutex_lock(&sc_streams_lock);
  if (before != NULL && before != after && sc_stream_registered(before) &&
      !before->ops->stream_capturing(before->stream) && !after->ops->stream_capturing(after->stream)) {
    /* A record refused means `before` stopped: what it held has ended, and a
     * collective it discarded left its failure where the next one looks. */
    if (before->ops->event_record(event, before->stream) == SYMCOMM_OK)
      res = after->ops->stream_wait_event(after->stream, event);
    else
      sc_error_clear();
  }
  pthread_mutex_unlock(&sc_streams_lock);
  return res;
}

void sc_comm_forget_streams(struct symcomm_comm *comm) {
  pthread_mutex_lock(&sc_streams_lock);
  for (struct symcomm_stream *s = sc_streams; s != NULL; s = s->next)
    if (s->creator == comm)
      s->creator = NULL;
  pthread_mutex_unlock(&sc_streams_lock);
}

/* A stream made by `make` (the backend's create or wrap) on comm's device. */
static sc_result_t sc_stream_new(symcomm_comm_t comm, symcomm_stream_t *out, const char *call,
                                 void *native, bool wrap) {
  sc_result_t res = SYMCOMM_OK;
  struct symcomm_stream *s = NULL;
  if (out == NULL)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "%s: stream is NULL", call);
  else if ((res = sc_comm_check_alive(comm)) == SYMCOMM_OK &&
           (s = calloc(1, sizeof(*s))) == NULL)
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory for a stream");
  if (res == SYMCOMM_OK)
    res = wrap ? comm->ops->stream_wrap(comm->device, native, &s->stream)
               : comm->ops->stream_create(comm->device, &s->stream);
  if (res == SYMCOMM_OK) {
    s->magic = SC_STREAM_MAGIC;
    s->ops = comm->ops;
    s->creator = comm;
    s->timeout_ms = comm->options.timeout_ms;
    pthread_mutex_lock(&sc_streams_lock);
    s->next = sc_streams;
    sc_streams = s;
    pthread_mutex_unlock(&sc_streams_lock);
    *out = s;
  } else {
    free(s);
  }
  return res;
}

symcomm_result_t symcomm_stream_create(symcomm_comm_t comm, symcomm_stream_t *out) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  return sc_comm_finish(comm, sc_stream_new(comm, out, "symcomm_stream_create", NULL, false));
}

symcomm_result_t symcomm_stream_from_cuda(symcomm_comm_t comm, void *cuda_stream,
                                          symcomm_stream_t *out) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  return sc_comm_finish(comm, sc_stream_new(comm, out, "symcomm_stream_from_cuda", cuda_stream, true));
}

/* A stream that stopped: its sentence becomes the caller's error. */
static sc_result_t sc_stream_failure(struct symcomm_stream *s, sc_result_t res) {
  if (res == SYMCOMM_OK || res == SYMCOMM_IN_PROGRESS)
    return res;
  /* The stream logged it when it stopped; pass its sentence on quietly. A
   * failure that did not stop the stream (a deadline) has its own already. */
  const char *why = s->ops->stream_error(s->stream);
  if (why[0] != '\0')
    sc_error_pass(res, why);
  pthread_mutex_lock(&sc_streams_lock);
  struct symcomm_comm *creator = s->creator;
  if (creator != NULL)
    sc_comm_note_error(creator);
  pthread_mutex_unlock(&sc_streams_lock);
  return res;
}

symcomm_result_t symcomm_stream_synchronize(symcomm_stream_t stream) {
  sc_error_clear();
  SC_CHECK(sc_stream_check(stream));
  /* No deadline here: every wait inside the stream's work is bounded by its
   * communicator's timeout and abort, so the stream always ends. */
  return sc_stream_failure(stream, stream->ops->stream_synchronize(stream->stream, SC_DEADLINE_NEVER));
}

symcomm_result_t symcomm_stream_query(symcomm_stream_t stream) {
  sc_error_clear();
  SC_CHECK(sc_stream_check(stream));
  return sc_stream_failure(stream, stream->ops->stream_query(stream->stream));
}

symcomm_result_t symcomm_stream_destroy(symcomm_stream_t stream) {
  sc_error_clear();
  SC_CHECK(sc_stream_check(stream));
  pthread_mutex_lock(&sc_streams_lock);
  while (stream->pins > 0) /* a communicator is waiting on it */
    pthread_cond_wait(&sc_streams_unpinned, &sc_streams_lock);
  for (struct symcomm_stream **p = &sc_streams; *p != NULL; p = &(*p)->next)
    if (*p == stream) {
      *p = stream->next;
      break;
    }
  pthread_mutex_unlock(&sc_streams_lock);
  stream->ops->stream_destroy(stream->stream, sc_deadline_after(stream->timeout_ms));
  stream->magic = 0;
  free(stream);
  return SYMCOMM_OK;
}
