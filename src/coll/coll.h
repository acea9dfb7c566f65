/* Collectives within a host. coll/ chooses a call's algorithm and number of
 * blocks, builds one argument block and launches the COLL device program
 * (src/device/coll.h), which runs the whole collective: its rounds over the
 * scratch window, barriers, copies and reductions. Everything that changes
 * from call to call on the device (barrier epochs, the call's number) lives
 * in device memory that the program advances, so a launch can be repeated as
 * it is (a CUDA graph's replay).
 *
 * Every rank stages its part in its collective scratch window and the ranks
 * read each other's scratch through their mappings; the window's end holds
 * the rank's sync block, where the barriers meet. */
#ifndef SC_COLL_COLL_H
#define SC_COLL_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "window/window.h"

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

/* Collective: the scratch window, the device descriptor and counters; parses
 * SYMCOMM_ALGO and SYMCOMM_COLL_BLOCKS. */
/* SYMCOMM_COLL_SCRATCH_BYTES, or the backend's size where it is not set (is_set, if not
 * NULL: whether it was). */
sc_result_t sc_coll_scratch_param(const sc_comm_view_t *view, long long *bytes, bool *is_set);
sc_result_t sc_coll_create(sc_comm_view_t *view, sc_coll_t **coll);
void sc_coll_destroy(sc_coll_t *coll);

/* Queues the collective on stream: one launch. Collectives of a
 * communicator share its scratch, so a call on another stream than the
 * previous one must first wait for it (the caller orders them with
 * sc_coll_order_event). */
sc_result_t sc_coll_enqueue(sc_coll_t *coll, const sc_coll_call_t *call, sc_stream_t *stream);

/* The event that marks the previous collective's end on its stream, for the
 * next one on another stream to wait for. */
sc_event_t *sc_coll_order_event(sc_coll_t *coll);

/* Whether a collective failed on this rank (the device says so in host
 * memory): its number in *which. A plain read, no stream is asked. False
 * for a communicator without collective state (NULL: one rank). */
bool sc_coll_failed(const sc_coll_t *coll, uint64_t *which);

/* What sc_coll_enqueue launches for a call, without launching it (it counts
 * as a call: the next gets the next number). Tests launch it again and again,
 * as a CUDA graph replays a captured call. */
typedef struct sc_coll_launch {
  sc_coll_args_t args;
  uint32_t blocks;
} sc_coll_launch_t;
sc_result_t sc_coll_prepare(sc_coll_t *coll, const sc_coll_call_t *call, sc_coll_launch_t *launch);

const char *sc_coll_kind_name(sc_coll_kind_t kind);

#endif
