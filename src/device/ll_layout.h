/* Where the LL protocol's lines are (device/coll_ll.h), for it and for the
 * barrier, which looks for a peer's LL tag line when the peer never
 * arrives. Include after the backend's runtime. */
#ifndef SC_DEVICE_LL_LAYOUT_H
#define SC_DEVICE_LL_LAYOUT_H

#include "device/runtime.h"

/* Line l of source src's part of rank r's region, half h, as mapped here. */
SC_DEV_FN uint64_t *sc_ll_line(const sc_coll_desc_t *d, int r, int h, int src, uint64_t l) {
  uint64_t part = ((uint64_t)h * (uint64_t)d->nranks + (uint64_t)src) * d->ll_lines;
  return d->ll[r] + (part + l) * (SC_LL_LINE_BYTES / 8);
}

/* Never 0, which a line holds before it was first written. */
SC_DEV_FN uint32_t sc_ll_flag(uint64_t seq) { return (uint32_t)(seq % 0xffffffffu) + 1; }

/* Whether a line's two words (w0, w1) carry `flag`; if so, its 8 data
 * bytes in *v. sc_ll_read: the same of the line at `line`. */
SC_DEV_FN int sc_ll_decode(uint64_t w0, uint64_t w1, uint32_t flag, uint64_t *v) {
  if ((uint32_t)(w0 >> 32) != flag || (uint32_t)(w1 >> 32) != flag)
    return 0;
  *v = (w0 & 0xffffffffu) | w1 << 32;
  return 1;
}

SC_DEV_FN int sc_ll_read(const uint64_t *line, uint32_t flag, uint64_t *v) {
  uint64_t w0, w1;
  sc_dev_ll_load(line, &w0, &w1);
  return sc_ll_decode(w0, w1, flag, v);
}

#endif
