/* Collectives within a host, written against the backend's stream primitives
 * and device programs (copy, BARRIER, REDUCE, COPIES), so that the CUDA
 * backend runs the same algorithms and only brings faster primitives.
 *
 * Every rank stages its part in its collective scratch window and the ranks
 * read each other's scratch through their mappings. The scratch has two
 * halves used by alternate rounds (a round = one stage + its barrier), each
 * with a staging area and a result area of SYMCOMM_COLL_SCRATCH_BYTES / 4:
 * writing a half two rounds later is safe because passing the barrier of the
 * round in between means every rank has finished reading it. Large
 * operations run in chunks of one area. */
#ifndef SC_COLL_COLL_H
#define SC_COLL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "window/window.h"

typedef enum sc_coll_kind {
  SC_COLL_ALLREDUCE = 0,
  SC_COLL_REDUCE,
  SC_COLL_BROADCAST,
  SC_COLL_ALLGATHER,
  SC_COLL_REDUCESCATTER,
  SC_COLL_ALLTOALL,
  SC_COLL_KIND_COUNT
} sc_coll_kind_t;

typedef enum sc_coll_algo {
  SC_ALGO_AUTO = 0,
  SC_ALGO_ONESHOT, /* each rank reads every peer's staged input and reduces it all */
  SC_ALGO_TWOSHOT, /* each rank reduces its share from every peer, then all gather the shares */
  SC_ALGO_DIRECT,  /* stage, then read what one needs straight from the peers */
  SC_ALGO_WINDOWS  /* two-shot straight on buffers that are windows: nothing staged */
} sc_coll_algo_t;

/* One collective call, as the public entry point checked it. */
typedef struct sc_coll_call {
  sc_coll_kind_t kind;
  const void *sendbuf;
  void *recvbuf;
  size_t count; /* allreduce, reduce, broadcast: elements; allgather: per rank sent;
                   reducescatter: per rank received; alltoall: per peer */
  int dtype, op, root;
  size_t elem; /* bytes per element */
} sc_coll_call_t;

typedef struct sc_coll sc_coll_t;

/* Collective: the scratch window; parses SYMCOMM_ALGO. */
sc_result_t sc_coll_create(sc_comm_view_t *view, sc_coll_t **coll);
void sc_coll_destroy(sc_coll_t *coll);

/* Queues the collective on stream. */
sc_result_t sc_coll_enqueue(sc_coll_t *coll, const sc_coll_call_t *call, sc_stream_t *stream);

const char *sc_coll_kind_name(sc_coll_kind_t kind);

#endif
