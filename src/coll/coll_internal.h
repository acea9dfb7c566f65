/* What the files of coll/ share: the state of a communicator's collectives. */
#ifndef SC_COLL_INTERNAL_H
#define SC_COLL_INTERNAL_H

#include "coll/coll.h"

struct sc_coll {
  sc_comm_view_t *view;
  sc_window_t *scratch;  /* 4 areas, this rank's sc_coll_sync_t, then its LL region */
  size_t area;           /* bytes of one staging or result area */
  uint64_t calls;        /* collectives queued so far: part of each call's tag */
  size_t oneshot_max;
  size_t ll_max;         /* SYMCOMM_LL_MAX_BYTES, 0 where the LL protocol is off */
  size_t ll_offset;      /* of this rank's LL region in the scratch window */
  uint32_t blocks;       /* SYMCOMM_COLL_BLOCKS: 0 = chosen by size */
  uint32_t max_blocks;   /* SYMCOMM_COLL_MAX_BLOCKS, or SC_COLL_MAX_BLOCKS: caps those chosen by size */
  bool early_start;      /* SYMCOMM_COLL_EARLY_START */
  sc_coll_algo_t forced[SC_COLL_KIND_COUNT];
  /* The block count last logged at INFO for each kind and algorithm (0: none
   * yet): a line each time it changes, so that a sweep of sizes tells how many
   * SMs each size class occupies. */
  uint32_t logged_blocks[SC_COLL_KIND_COUNT][SC_ALGO_SPLIT + 1];
  sc_coll_desc_t *desc;   /* device memory: what every launch points to */
  sc_coll_state_t *state; /* device memory: epochs and the call count, advanced by the program */
  uint64_t *failed;       /* host memory the device writes: 1 + a failed collective's number */
  sc_event_t *order;      /* marks the last collective's end on its stream */
};

/* Rank r's sync block (after the four areas of its scratch), as mapped here. */
sc_coll_sync_t *sc_coll_sync_of(const sc_coll_t *c, int r);

/* Logs the algorithm and block count chosen: at INFO the first time for this
 * kind and algorithm and whenever its block count changes, else at TRACE. */
void sc_coll_log_choice(sc_coll_t *c, sc_coll_kind_t kind, sc_coll_algo_t algo, size_t bytes,
                        uint32_t blocks);

/* What every rank must agree on for a call: its place in the sequence, the
 * operation, count, type, reduction, root and the scratch size. Never 0. */
uint64_t sc_coll_tag(const sc_coll_t *c, const sc_coll_call_t *call);
/* A tag with more that ranks must agree on (an algorithm's choices). */
uint64_t sc_coll_tag_with(uint64_t tag, const uint64_t *extra, int n);

#endif
