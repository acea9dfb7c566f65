/* Symmetric memory: a window is one buffer per rank of a communicator, of the
 * same size everywhere, each mapped by the other ranks of its host, plus a
 * signal pad per rank (a doorbell and SYMCOMM_SIGNAL_SLOTS counters). Memory
 * is exported as file descriptors and passed with SCM_RIGHTS (seed 004's
 * cuMemCreate / fd / cuMemMap flow, on whatever the backend's memory is).
 *
 * A window symcomm allocates holds its pad after the buffer, in the same
 * allocation (on CUDA a pad of its own would take a 2 MiB granule). A
 * registered window's pad is entry `id` of its communicator's pad region:
 * one allocation per rank for all registered windows, made with the first
 * and released with the last. The peer table that programs may read is a
 * copy in device memory (dev_peer, and view->dev_windows[id]). */
#ifndef SC_WINDOW_WINDOW_H
#define SC_WINDOW_WINDOW_H

#include <stdbool.h>
#include <stddef.h>

#include "window/comm_view.h"

#define SC_WINDOW_MAGIC 0x444e4957u /* "WIND" */
#define SC_WINDOW_FREED 0x46524545u /* "FREE": kept so that later use is caught */

typedef struct sc_window_pad {
  sc_doorbell_t bell;
  uint64_t slots[SYMCOMM_SIGNAL_SLOTS];
} sc_window_pad_t;

struct symcomm_window {
  uint32_t magic;
  sc_comm_view_t *view;
  size_t bytes;            /* as asked, rounded up to the granularity (registered: as asked) */
  sc_devmem_t *mem;        /* this rank's allocation */
  bool owns_mem;           /* false for a registered buffer */
  void **peer;             /* [nranks] each rank's buffer mapped here, NULL off this host */
  sc_window_pad_t **pads;  /* [nranks] likewise for the pads */
  void **dev_peer;         /* [nranks] peer, in device memory */
  sc_devmem_t **imported;  /* [local_size] peers' allocations */
  struct sc_window_pads *made_pads; /* registered: the pad region this creation made, until it
                                       is the view's */
  bool uses_pads;          /* registered, and counted as a user of view->reg_pads */
  int64_t id;              /* entry in view->windows, -1 if the table was full */
  bool kept;               /* freed while work that may use it still ran: kept for good */
  struct symcomm_window *next; /* the communicator's list */
};
typedef struct symcomm_window sc_window_t;

/* Collective over view's communicator. With user_mem, the buffer is
 * [mem_ptr(user_mem) + offset, + bytes) of an allocation the caller keeps;
 * else a new allocation of `bytes`. Every rank must pass the same size and
 * the same any_offset (SYMCOMM_WINDOW_ANY_OFFSET: ranks may use the window
 * at different offsets, so nothing may reach a peer's buffer at this rank's
 * offset). */
sc_result_t sc_window_create(sc_comm_view_t *view, size_t bytes, sc_devmem_t *user_mem,
                             size_t offset, bool any_offset, sc_window_t **win);

/* Collective: after a barrier (no peer still maps this rank's memory in use),
 * unmaps the peers' memory, then releases this rank's. The struct is left
 * with magic SC_WINDOW_FREED; sc_window_release() frees it. With idle false
 * (work this rank queued may still use the window), nothing is unmapped or
 * released: the window is kept for good (util/keep.h), entry and all. */
sc_result_t sc_window_destroy(sc_window_t *win, bool idle);
void sc_window_release(sc_window_t *win);

/* The live window of view's communicator (not an internal one: ids below
 * `first_id` are skipped) that holds [ptr, ptr + bytes) of this rank, as its
 * id and the offset of ptr in it; false if none does. */
bool sc_window_find(const sc_comm_view_t *view, uint32_t first_id, const void *ptr, size_t bytes,
                    uint32_t *id, size_t *offset);

/* Whether the ranks promised to use live window `id` at the same offsets
 * (it was not made with any_offset), so that a peer's buffer lies at this
 * rank's offset of the peer's part. */
bool sc_window_symmetric(const sc_comm_view_t *view, uint32_t id);

#endif
