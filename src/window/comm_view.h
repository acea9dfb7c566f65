/* What the layers below core need to know of a communicator: its ranks on this
 * host, its bootstrap, its device, and what bounds its waits. Core fills one
 * per communicator; windows and transports keep a pointer to it (the
 * communicator outlives them). */
#ifndef SC_WINDOW_COMM_VIEW_H
#define SC_WINDOW_COMM_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "bootstrap/bootstrap.h"

typedef struct sc_comm_view {
  int rank, nranks;
  int local_rank, local_size;
  int max_local_size;    /* the most ranks any host of the communicator has */
  int topo_class;        /* symcomm_topo_class_t of this host's GPUs in the communicator */
  const int *local_of;   /* [nranks]: local rank of each rank on this host, -1 elsewhere */
  const int *local_rank_to_rank; /* [local_size]: rank of each local rank */
  const int *pids;       /* [nranks] */
  sc_secret_t secret;    /* known only to this communicator's ranks */
  sc_bootstrap_t *boot;
  const sc_backend_ops_t *ops;
  sc_device_t *device;
  sc_dev_status_t *status; /* device-readable: its stop word ends every wait of its programs */
  uint32_t *dev_stop;      /* the stop word's copy in device memory (copy_word), 0 until it stops */
  int abort_fd;            /* readable once aborted or failed (host-side waits) */
  int64_t timeout_ms;
  int max_blocks;          /* config.max_blocks: caps a collective's blocks; 0 = SYMCOMM_COLL_MAX_BLOCKS */
  sc_guard_t guard;        /* what bounds its programs' waits (status and timeout) */
  uint64_t exchanges; /* fd exchanges so far: every rank counts the same */
  sc_dev_window_t *windows; /* [SC_MAX_WINDOWS] live windows, for host code (peer: host arrays) */
  sc_dev_window_t *dev_windows; /* [SC_MAX_WINDOWS] the same in device memory (peer: device
                                   arrays): the only table programs may be given */
  uint32_t windows_made;    /* one past the highest window id given out; entries at or above are free */
  bool window_any_offset[SC_MAX_WINDOWS]; /* per live id: made with SYMCOMM_WINDOW_ANY_OFFSET (ranks
                                             may use it at different offsets); read by the host
                                             when a collective picks its path */
  struct sc_window_pads *reg_pads; /* pads of registered windows, one per id; NULL while none lives */
} sc_comm_view_t;

#endif
