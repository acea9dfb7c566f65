/* Where the LL protocol's lines are (device/coll_ll.h), for it and for the
 * barrier, which looks for a peer's LL tag line when the peer never
 * arrives. Include after the backend's runtime. */
#ifndef SC_DEVICE_LL_LAYOUT_H
#define SC_DEVICE_LL_LAYOUT_H

#include "device/ll_line.h"

/* Line l of source src's part of rank r's region, half h, as mapped here. */
SC_DEV_FN uint64_t *sc_ll_line(const sc_coll_desc_t *d, int r, int h, int src, uint64_t l) {
  uint64_t part = ((uint64_t)h * (uint64_t)d->nranks + (uint64_t)src) * d->ll_lines;
  return d->ll[r] + (part + l) * (SC_LL_LINE_BYTES / 8);
}

#endif
