/* The device programs whose arguments are a header, then a count of items
 * (device/program.h's collective peers, p2p_layout.h's and net_layout.h's
 * ops): where the count is, how large an item is, how many may come. Both
 * backends check a launch's bytes against it: the simulated one copies
 * exactly those bytes, the CUDA one passes no byte past them. */
#ifndef SC_BACKEND_PROGRAM_ITEMS_H
#define SC_BACKEND_PROGRAM_ITEMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "device/net_layout.h"
#include "device/p2p_layout.h"

typedef struct sc_program_items {
  size_t header;     /* bytes before the first item */
  size_t count_at;   /* the offset of the header's item count (uint32_t) */
  size_t item_bytes;
  uint32_t max;      /* items at most */
  const char *what;  /* what an item is, for sentences */
} sc_program_items_t;

/* False for a program whose arguments are one struct of fixed size. */
static inline bool sc_program_items(sc_program_t program, sc_program_items_t *items) {
  switch (program) {
  case SC_PROGRAM_P2P:
    *items = (sc_program_items_t){offsetof(sc_p2p_args_t, ops), offsetof(sc_p2p_args_t, nops),
                                  sizeof(sc_p2p_op_t), SC_P2P_MAX_OPS, "ops"};
    return true;
  case SC_PROGRAM_NET:
    *items = (sc_program_items_t){offsetof(sc_net_args_t, ops), offsetof(sc_net_args_t, nops),
                                  sizeof(sc_net_op_t), SC_NET_MAX_OPS, "ops"};
    return true;
  case SC_PROGRAM_COLL:
    *items = (sc_program_items_t){offsetof(sc_coll_args_t, peer), offsetof(sc_coll_args_t, npeers),
                                  sizeof(sc_coll_peer_t), SC_MAX_LOCAL_RANKS, "peers"};
    return true;
  default: return false;
  }
}

/* The count in a's header (its bytes reach past the header). */
static inline uint32_t sc_program_items_count(const sc_program_items_t *items, const void *a) {
  uint32_t n;
  memcpy(&n, (const char *)a + items->count_at, sizeof(n));
  return n;
}

#endif
