/* symcomm_copy: a stream-ordered copy between two buffers of this rank's
 * device, for what sends to a rank itself become (the NCCL shim's send and
 * receive of a rank with itself inside a group) and for staging without a
 * CUDA runtime of one's own. It queues one copy on the stream and never
 * waits for it, so it may be captured into a CUDA graph. */
#include "core/stream.h"
#include "util/round.h"

static sc_result_t sc_copy(struct symcomm_comm *comm, void *dst, const void *src, size_t bytes,
                           symcomm_stream_t stream) {
  SC_CHECK(sc_comm_check_alive(comm));
  SC_CHECK(sc_stream_use(stream, comm));
  if (bytes == 0)
    return SYMCOMM_OK;
  if (dst == NULL || src == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P, "symcomm_copy: %s is NULL",
                    dst == NULL ? "dst" : "src");
  if (sc_range_wraps(dst, bytes) || sc_range_wraps(src, bytes))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P,
                    "symcomm_copy: %zu bytes at %p run past the end of the address space", bytes,
                    sc_range_wraps(dst, bytes) ? dst : src);
  const char *d = dst, *s = src;
  if (d != s && d < s + bytes && s < d + bytes)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P,
                    "symcomm_copy: dst and src overlap (%zu bytes at %p and %p)", bytes, dst, src);
  if (d == s)
    return SYMCOMM_OK;
  SC_CHECK(sc_comm_check_buffers(comm, "symcomm_copy", src, bytes, "src", dst, bytes, "dst"));
  return comm->ops->copy(stream->stream, dst, src, bytes);
}

symcomm_result_t symcomm_copy(void *dst, const void *src, size_t bytes, symcomm_comm_t comm,
                              symcomm_stream_t stream) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  return sc_comm_finish(comm, sc_copy(comm, dst, src, bytes, stream));
}
