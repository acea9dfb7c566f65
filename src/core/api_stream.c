/* Public streams. */
#include <stdlib.h>

#include "core/stream.h"
#include "util/clock.h"
#include "util/log.h"

sc_result_t sc_stream_check(const struct symcomm_stream *stream, const struct symcomm_comm *comm) {
  if (stream == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "the stream is NULL");
  if (stream->magic != SC_STREAM_MAGIC)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                    "not a stream (a stray pointer, or one already destroyed)");
  if (comm != NULL && stream->comm->ops != comm->ops)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                    "the stream belongs to a communicator on another backend");
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_stream_create(symcomm_comm_t comm, symcomm_stream_t *out) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  sc_result_t res = SYMCOMM_OK;
  struct symcomm_stream *s = NULL;
  if (out == NULL)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "symcomm_stream_create: stream is NULL");
  else if ((res = sc_comm_check_alive(comm)) == SYMCOMM_OK &&
           (s = calloc(1, sizeof(*s))) == NULL)
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory for a stream");
  if (res == SYMCOMM_OK && (res = comm->ops->stream_create(comm->device, &s->stream)) == SYMCOMM_OK) {
    s->magic = SC_STREAM_MAGIC;
    s->comm = comm;
    *out = s;
  } else {
    free(s);
  }
  return sc_comm_finish(comm, res);
}

/* A stream that stopped: its sentence becomes the caller's error. */
static sc_result_t sc_stream_failure(struct symcomm_stream *s, sc_result_t res) {
  if (res == SYMCOMM_OK || res == SYMCOMM_IN_PROGRESS)
    return res;
  /* The stream logged it when it stopped; pass its sentence on quietly. A
   * failure that did not stop the stream (a deadline) has its own already. */
  const char *why = s->comm->ops->stream_error(s->stream);
  if (why[0] != '\0')
    sc_error_pass(res, why);
  return sc_comm_finish(s->comm, res);
}

symcomm_result_t symcomm_stream_synchronize(symcomm_stream_t stream) {
  sc_error_clear();
  SC_CHECK(sc_stream_check(stream, NULL));
  /* No deadline here: every wait inside the stream's work is bounded by its
   * communicator's timeout and abort, so the stream always ends. */
  return sc_stream_failure(stream, stream->comm->ops->stream_synchronize(stream->stream,
                                                                         SC_DEADLINE_NEVER));
}

symcomm_result_t symcomm_stream_query(symcomm_stream_t stream) {
  sc_error_clear();
  SC_CHECK(sc_stream_check(stream, NULL));
  return sc_stream_failure(stream, stream->comm->ops->stream_query(stream->stream));
}

symcomm_result_t symcomm_stream_destroy(symcomm_stream_t stream) {
  sc_error_clear();
  SC_CHECK(sc_stream_check(stream, NULL));
  stream->comm->ops->stream_destroy(stream->stream);
  stream->magic = 0;
  free(stream);
  return SYMCOMM_OK;
}
