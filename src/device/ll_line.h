/* The LL line (SC_LL_LINE_BYTES = 16): 8 data bytes in two words of 4,
 * each beside a 32-bit flag in the same single-copy-atomic store, so that a
 * word whose flag is the expected one holds the expected data, with no
 * fence and no separate flag. The collectives' LL protocol (device/coll_ll.h)
 * and send/recv's eager messages (device/p2p_eager.h) write these. Include
 * after the backend's runtime.
 *
 * Words are packed little-endian (x86 and NVIDIA GPUs both are). */
#ifndef SC_DEVICE_LL_LINE_H
#define SC_DEVICE_LL_LINE_H

#include "device/runtime.h"

/* Never 0, which a line holds before it was first written. */
SC_DEV_FN uint32_t sc_ll_flag(uint64_t seq) { return (uint32_t)(seq % 0xffffffffu) + 1; }

/* A line's 8 data bytes, from its two words (w0, w1), whatever their flags. */
SC_DEV_FN uint64_t sc_ll_data(uint64_t w0, uint64_t w1) { return (w0 & 0xffffffffu) | w1 << 32; }

/* Whether a line's two words (w0, w1) carry `flag`; if so, its 8 data
 * bytes in *v. sc_ll_read: the same of the line at `line`. */
SC_DEV_FN int sc_ll_decode(uint64_t w0, uint64_t w1, uint32_t flag, uint64_t *v) {
  if ((uint32_t)(w0 >> 32) != flag || (uint32_t)(w1 >> 32) != flag)
    return 0;
  *v = sc_ll_data(w0, w1);
  return 1;
}

SC_DEV_FN int sc_ll_read(const uint64_t *line, uint32_t flag, uint64_t *v) {
  uint64_t w0, w1;
  sc_dev_ll_load(line, &w0, &w1);
  return sc_ll_decode(w0, w1, flag, v);
}

SC_DEV_FN uint64_t sc_ll_word(uint32_t data, uint32_t flag) { return (uint64_t)flag << 32 | data; }

/* Bytes [8l, 8l + 8) of buf, those at or past `bytes` as 0. */
SC_DEV_FN uint64_t sc_ll_take(const void *buf, uint64_t l, uint64_t bytes) {
  const unsigned char *p = (const unsigned char *)buf + l * SC_LL_LINE_DATA;
  uint64_t left = bytes - l * SC_LL_LINE_DATA, v = 0;
  if (left >= SC_LL_LINE_DATA && ((uintptr_t)p & 7) == 0) {
#ifdef __CUDA_ARCH__
    return *(const uint64_t *)p;
#else
    memcpy(&v, p, sizeof(v));
    return v;
#endif
  }
  for (uint64_t i = 0; i < SC_LL_LINE_DATA && i < left; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* v into bytes [8l, 8l + 8) of buf, stopping at `bytes`. */
SC_DEV_FN void sc_ll_give(void *buf, uint64_t l, uint64_t bytes, uint64_t v) {
  unsigned char *p = (unsigned char *)buf + l * SC_LL_LINE_DATA;
  uint64_t left = bytes - l * SC_LL_LINE_DATA;
  if (left >= SC_LL_LINE_DATA && ((uintptr_t)p & 7) == 0) {
#ifdef __CUDA_ARCH__
    *(uint64_t *)p = v;
#else
    memcpy(p, &v, sizeof(v));
#endif
    return;
  }
  for (uint64_t i = 0; i < SC_LL_LINE_DATA && i < left; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

SC_DEV_FN void sc_ll_push(uint64_t *line, uint64_t v, uint32_t flag) {
  sc_dev_ll_store(line, sc_ll_word((uint32_t)v, flag), sc_ll_word((uint32_t)(v >> 32), flag));
}

#endif
