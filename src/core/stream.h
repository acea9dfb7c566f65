/* The public stream: a backend stream and the communicator it was made for. */
#ifndef SC_CORE_STREAM_H
#define SC_CORE_STREAM_H

#include "core/comm.h"

#define SC_STREAM_MAGIC 0x4d525453u /* "STRM" */

struct symcomm_stream {
  uint32_t magic;
  struct symcomm_comm *comm;
  sc_stream_t *stream;
};

/* Checks a stream passed with comm: alive, and on comm's device. */
sc_result_t sc_stream_check(const struct symcomm_stream *stream, const struct symcomm_comm *comm);

#endif
