/* Where the LL protocol's lines are (device/coll_ll.h), for it and for the
 * barrier, which looks for a peer's LL tag line when the peer never
 * arrives. Include after the backend's runtime. */
#ifndef SC_DEVICE_LL_LAYOUT_H
#define SC_DEVICE_LL_LAYOUT_H

#include "device/ll_line.h"

/* Line l of source src's part, half h, of the LL region at `region` (a
 * rank's, as mapped here) of n ranks' parts of `lines` lines each. */
SC_DEV_FN uint64_t *sc_ll_at(uint64_t *region, int n, uint64_t lines, int h, int src, uint64_t l) {
  uint64_t part = ((uint64_t)h * (uint64_t)n + (uint64_t)src) * lines;
  return region + (part + l) * (SC_LL_LINE_BYTES / 8);
}

/* The same in rank r's region, from the descriptor. */
SC_DEV_FN uint64_t *sc_ll_line(const sc_coll_desc_t *d, int r, int h, int src, uint64_t l) {
  return sc_ll_at(d->ll[r], d->nranks, d->ll_lines, h, src, l);
}

#endif
