/* What the collective algorithms share: the state and the steps. */
#ifndef SC_COLL_INTERNAL_H
#define SC_COLL_INTERNAL_H

#include "coll/coll.h"

struct sc_coll {
  sc_comm_view_t *view;
  sc_window_t *scratch;
  size_t area;           /* bytes of one staging or result area */
  uint64_t rounds;       /* rounds so far: which half of the scratch is next */
  uint64_t barriers;     /* barriers so far: their counters' targets */
  uint64_t calls;        /* collectives so far: their order across streams */
  sc_stream_t *last_stream;
  sc_guard_t guard;      /* the view's, naming the call being queued (for error sentences) */
  size_t oneshot_max;
  sc_coll_algo_t forced[SC_COLL_KIND_COUNT];
  unsigned logged[SC_COLL_KIND_COUNT]; /* algorithms already logged at INFO, a bit each */
};

/* Signal pad slots of the scratch window. */
enum {
  SC_COLL_SLOT_BARRIER = 0,
  SC_COLL_SLOT_ORDER = 1,
  SC_COLL_SLOT_TAG = 2, /* and 3 */
  SC_COLL_SLOT_ARRIVED = 4
};

/* Where rank r's staging or result area of the current half is, as mapped here. */
char *sc_coll_stage(const sc_coll_t *c, int r, int half);
char *sc_coll_result(const sc_coll_t *c, int r, int half);

/* The half of the scratch the next round uses. */
int sc_coll_next_half(sc_coll_t *c);

/* Steps, each queued on the stream. */
sc_result_t sc_coll_copy(sc_coll_t *c, sc_stream_t *s, void *dst, const void *src, size_t bytes);
/* Every rank of the communicator arrives before any leaves; with a non-zero
 * tag, every rank must have passed the same one (a cheap check that they run
 * the same collective). */
sc_result_t sc_coll_barrier(sc_coll_t *c, sc_stream_t *s, uint64_t tag);
sc_result_t sc_coll_reduce(sc_coll_t *c, sc_stream_t *s, void *dst, const void *const *srcs,
                           int nsrcs, size_t count, int dtype, int op);
/* Up to SC_MAX_LOCAL_RANKS copies per launch; more are split into several. */
sc_result_t sc_coll_copies(sc_coll_t *c, sc_stream_t *s, void *const *dst, const void *const *src,
                           const size_t *bytes, int n);

/* Round steps on the scratch half `half` for the elements [off, off + chunk)
 * of each block. The staging ones end with the barrier, which carries the
 * call's tag on the first round (off 0). */
/* This rank's part of sendbuf into its staging area. */
sc_result_t sc_coll_stage_input(sc_coll_t *c, sc_stream_t *s, const sc_coll_call_t *call,
                                size_t off, size_t chunk, int half, uint64_t tag);
/* Each of the nranks blocks of sendbuf (count elements each) into the staging
 * area, block b at b * chunk elements. */
sc_result_t sc_coll_stage_blocks(sc_coll_t *c, sc_stream_t *s, const sc_coll_call_t *call,
                                 size_t off, size_t chunk, int half, uint64_t tag);
/* Into each block r of recvbuf, from rank r's staging area at element `at`. */
sc_result_t sc_coll_gather_blocks(sc_coll_t *c, sc_stream_t *s, const sc_coll_call_t *call,
                                  size_t off, size_t chunk, int half, size_t at);

/* The algorithms (coll_reduce_ops.c, coll_data_ops.c). */
sc_result_t sc_coll_allreduce(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s, uint64_t tag);
sc_result_t sc_coll_reduce_root(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s, uint64_t tag);
sc_result_t sc_coll_reducescatter(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s,
                                  uint64_t tag);
sc_result_t sc_coll_broadcast(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s, uint64_t tag);
sc_result_t sc_coll_allgather(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s, uint64_t tag);
sc_result_t sc_coll_alltoall(sc_coll_t *c, const sc_coll_call_t *call, sc_stream_t *s, uint64_t tag);

/* A call's tag with more that ranks must agree on (an algorithm's choices). */
uint64_t sc_coll_tag_with(uint64_t tag, const uint64_t *extra, int n);

/* Logs the algorithm chosen: the first time for this kind at INFO, every time at TRACE. */
void sc_coll_log_choice(sc_coll_t *c, sc_coll_kind_t kind, sc_coll_algo_t algo, size_t bytes);

#endif
