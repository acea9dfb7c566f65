/* Test data that shows where it came from: every byte depends on a seed (one
 * per message or call), the rank that produced it and its position, so that no
 * two chunks, messages or ranks carry the same bytes and a piece that lands in
 * the wrong place, comes from the wrong rank or is left over from an earlier
 * call is noticed. Outputs start as a sentinel, and guard bytes around them
 * show writes outside. */
#ifndef SC_TEST_DATA_H
#define SC_TEST_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "symcomm.h"

/* A 64-bit hash of (seed, rank, index), well mixed in every bit. */
uint64_t td_mix(uint64_t seed, int rank, uint64_t index);

/* Byte i of the data `from` produces for `seed`: byte i % 8 of
 * td_mix(seed, from, i / 8), counted from the start of the message. */
void td_fill(void *buf, size_t bytes, uint64_t seed, int from);
/* Fails the test unless buf holds exactly that data, naming `what`, how many
 * bytes are wrong, the first of them and its chunk of the default 512 KiB. */
void td_check(const void *buf, size_t bytes, uint64_t seed, int from, const char *what);
/* How many bytes differ from that data (no failure). */
size_t td_count_wrong(const void *buf, size_t bytes, uint64_t seed, int from);

/* What outputs hold before a call writes them. */
#define TD_SENTINEL 0xa5
void td_reset(void *buf, size_t bytes);
/* Fails unless every byte of buf is still the sentinel. */
void td_check_untouched(const void *buf, size_t bytes, const char *what);

/* Guard bytes: TD_GUARD bytes on each side of [data, data + bytes), which the
 * caller provides, set to a pattern no call produces; td_check_guards fails
 * the test if any of them changed. */
#define TD_GUARD 64
void td_arm_guards(void *data, size_t bytes);
void td_check_guards(const void *data, size_t bytes, const char *what);

/* A heap buffer of `bytes` at `misalign` bytes past a 64-byte boundary, with
 * armed guards and its contents set to the sentinel. */
typedef struct td_buf {
  unsigned char *data;
  size_t bytes;
  unsigned char *mem; /* what to free */
} td_buf_t;
td_buf_t td_buf_alloc(size_t bytes, size_t misalign);
void td_buf_free(td_buf_t *b);

/* ---- typed values for reductions: small integers in every dtype, so that
 * results are exact in any order and compare bit for bit */

size_t td_dtype_size(symcomm_dtype_t t);
int td_dtype_signed(symcomm_dtype_t t); /* int8/32/64 */
int td_dtype_float(symcomm_dtype_t t);  /* fp16, bf16, fp32, fp64 */

/* The input of `rank` at element i for a reduction by op over nranks ranks:
 * for PROD 1 or 2 (2 one time in eight; negated one time in eight where the
 * type has a sign), else in [-4, 4] ([0, 8] unsigned). */
int64_t td_small_value(uint64_t seed, int rank, uint64_t i, symcomm_op_t op, symcomm_dtype_t t);
/* buf[i] = td_small_value(seed, rank, first + i, op, t) in type t, for i < count. */
void td_fill_small(void *buf, size_t count, symcomm_dtype_t t, symcomm_op_t op, uint64_t seed,
                   int rank, uint64_t first);

/* Stores v, an integer or a float the type holds to within rounding, as
 * element i of buf in type t (fp16/bf16 rounded to nearest even). */
void td_store(void *buf, symcomm_dtype_t t, size_t i, double v);

/* Fails unless buf[i], for every i < count, is the exact result of op over
 * the inputs td_small_value(seed, r, first + i, op, t) of ranks 0..nranks-1,
 * as symcomm documents it: integers wrap, AVG truncates toward zero (C
 * division, in int for 8-bit types), fp16/bf16 accumulate in float and round
 * once. */
void td_check_reduced(const void *buf, size_t count, symcomm_dtype_t t, symcomm_op_t op,
                      uint64_t seed, uint64_t first, int nranks, const char *what);

/* Elements of t that are random bit patterns (NaNs included), for operations
 * that only move data: element i is the low bytes of td_mix(seed, rank,
 * first + i). */
void td_fill_elems(void *buf, size_t count, symcomm_dtype_t t, uint64_t seed, int rank,
                   uint64_t first);
void td_check_elems(const void *buf, size_t count, symcomm_dtype_t t, uint64_t seed, int rank,
                    uint64_t first, const char *what);

/* Round a float to the 16-bit formats, to nearest even (the tests' values are
 * zero, normal numbers, or overflow to infinity). */
uint16_t td_float_to_half(float f);
uint16_t td_float_to_bf16(float f);

#endif
