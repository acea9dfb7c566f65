/* Reduction: dst[i] = srcs[0][i] OP srcs[1][i] OP ... OP srcs[nsrcs-1][i]
 * for i < count, sources combined in that order, for every dtype x op of
 * symcomm.h; the collective program's reduction steps (device/coll.h).
 * Include after the backend's runtime (device/runtime.h).
 *
 * Exact semantics:
 * - integers: SUM and PROD wrap modulo 2^bits (computed in an unsigned type,
 *   so no signed overflow); MIN and MAX compare signed types as signed; AVG
 *   divides the wrapped sum by avg_divisor with C division (toward zero).
 * - FLOAT16 and BFLOAT16: every element becomes a float, sources accumulate in
 *   float, AVG divides that float, and the result is rounded back once (to
 *   nearest, ties to even; device/reduce_types.h).
 * - FLOAT32 and FLOAT64 accumulate in their own type; AVG divides the sum.
 * - float MIN and MAX: NaN if any source is NaN; -0.0 and +0.0 compare equal,
 *   and then MIN gives -0.0 and MAX +0.0 whatever the order of the sources.
 * - nsrcs 1 copies (AVG still divides). dst may be one of srcs (in place), but
 *   must not overlap a source at another offset.
 *
 * Elements go in blocks of SC_REDUCE_BLOCK: a block of every source is folded
 * into an accumulator before the block of dst is written, which is what makes
 * dst == srcs[k] safe, and the inner loops are plain loops over arrays that
 * the compiler vectorises. The threads of a device block take the blocks of
 * elements in turn (block k on thread k % threads).
 *
 * A backend may bring a faster sc_dev_reduce of its own (the CUDA backend's
 * 16-byte vectors, backend/cuda/cuda_reduce.cuh): it defines
 * SC_DEV_HAS_REDUCE before it includes this header, builds its loops from
 * SC_RED_EACH (the same element types, operations and conversions) and falls
 * back on sc_dev_reduce_elems, the portable loop below. */
#ifndef SC_DEVICE_REDUCE_H
#define SC_DEVICE_REDUCE_H

#include <string.h>

#include "device/reduce_types.h"
#include "device/runtime.h"
#include "symcomm.h"

#ifndef SC_REDUCE_BLOCK
#ifdef __CUDA_ARCH__
#define SC_REDUCE_BLOCK 1 /* one element per step: the accumulator stays in registers */
#else
#define SC_REDUCE_BLOCK 256
#endif
#endif

/* ---- element-wise operations on accumulators */

#define SC_RED_ADD(a, b) ((a) + (b))
#define SC_RED_MUL(a, b) ((a) * (b))
#define SC_RED_IMIN(a, b) ((b) < (a) ? (b) : (a))
#define SC_RED_IMAX(a, b) ((b) > (a) ? (b) : (a))

/* MIN/MAX of floats: NaN if either is NaN; equal values (only +-0 can
 * differ) give -0.0 for MIN and +0.0 for MAX, so the result does not depend
 * on the order of the sources. Written as one select each, which the
 * compiler vectorises. */
#define SC_RED_DEFINE_FMINMAX(T, BITS, SIGN, MIN, MAX)                                             \
  SC_DEV_FN T MIN(T a, T b) {                                                                      \
    int b_neg = (BITS(b) & (SIGN)) != 0;                                                           \
    return (b < a) | (b != b) | ((a == b) & b_neg) ? b : a;                                        \
  }                                                                                                \
  SC_DEV_FN T MAX(T a, T b) {                                                                      \
    int b_neg = (BITS(b) & (SIGN)) != 0;                                                           \
    return (b > a) | (b != b) | ((a == b) & !b_neg) ? b : a;                                       \
  }

SC_RED_DEFINE_FMINMAX(float, sc_float_bits, 0x80000000u, sc_red_fminf, sc_red_fmaxf)
SC_RED_DEFINE_FMINMAX(double, sc_double_bits, 0x8000000000000000ull, sc_red_fmin, sc_red_fmax)

/* ---- loading an element into its accumulator, and finishing it
 * FINISH(T, D, acc, divisor) gives the element of type T that acc stands for;
 * D is the type AVG divides in. */

#define SC_RED_LOAD(x) (x)
#define SC_RED_FIN_CAST(T, D, acc, divisor) ((T)(acc))
/* integer AVG: the wrapped sum as T, then C division (D: T, or int where T
 * would promote to int anyway) */
#define SC_RED_FIN_IDIV(T, D, acc, divisor) ((T)((D)(T)(acc) / (D)(divisor)))
#define SC_RED_FIN_FDIV(T, D, acc, divisor) ((T)((acc) / (D)(divisor)))
#define SC_RED_FIN_FP16(T, D, acc, divisor) sc_float_to_fp16(acc)
#define SC_RED_FIN_FP16_AVG(T, D, acc, divisor) sc_float_to_fp16((acc) / (float)(divisor))
#define SC_RED_FIN_BF16(T, D, acc, divisor) sc_float_to_bf16(acc)
#define SC_RED_FIN_BF16_AVG(T, D, acc, divisor) sc_float_to_bf16((acc) / (float)(divisor))

/* ---- one loop, instantiated per (dtype, op)
 * FN(dst, srcs, nsrcs, count, divisor) reduces T elements in A accumulators.
 * SC_RED_BLOCK_BODY is one block of N elements from `base`, written in FN's
 * scope (it uses dst, srcs, nsrcs, base and divisor); FN's main loop passes
 * the constant SC_REDUCE_BLOCK, so that those loops have a known trip count. */
#define SC_RED_BLOCK_BODY(T, A, D, LOAD, OP, FINISH, N)                                            \
  do {                                                                                             \
    A acc_[SC_REDUCE_BLOCK];                                                                       \
    const T *s_ = (const T *)srcs[0] + base;                                                       \
    for (size_t i_ = 0; i_ < (N); i_++)                                                            \
      acc_[i_] = (A)LOAD(s_[i_]);                                                                  \
    for (int k_ = 1; k_ < nsrcs; k_++) {                                                           \
      s_ = (const T *)srcs[k_] + base;                                                             \
      for (size_t i_ = 0; i_ < (N); i_++)                                                          \
        acc_[i_] = OP(acc_[i_], (A)LOAD(s_[i_]));                                                  \
    }                                                                                              \
    for (size_t i_ = 0; i_ < (N); i_++)                                                            \
      dst[base + i_] = FINISH(T, D, acc_[i_], divisor);                                            \
  } while (0)

/* The partial block at `full` goes to the thread whose turn it is there. */
#define SC_RED_DEFINE(FN, T, A, D, LOAD, OP, FINISH)                                               \
  SC_DEV_FN void FN(sc_dev_ctx_t *ctx, void *dst_v, const void *const *srcs, int nsrcs,           \
                    size_t count, int divisor) {                                                   \
    T *dst = (T *)dst_v;                                                                           \
    size_t full = count - count % SC_REDUCE_BLOCK;                                                 \
    size_t step = (size_t)sc_dev_threads(ctx) * SC_REDUCE_BLOCK;                                   \
    size_t base = (size_t)sc_dev_thread(ctx) * SC_REDUCE_BLOCK;                                    \
    (void)divisor;                                                                                 \
    for (; base < full; base += step)                                                              \
      SC_RED_BLOCK_BODY(T, A, D, LOAD, OP, FINISH, SC_REDUCE_BLOCK);                               \
    if (base == full && base < count)                                                              \
      SC_RED_BLOCK_BODY(T, A, D, LOAD, OP, FINISH, count - base);                                  \
  }

/* A line of the LL protocol (device/coll_ll.h): FN_line(w, nsrcs, divisor)
 * reduces the elements of 8-byte words, word k of w from source k (k <
 * nsrcs <= SC_LL_MAX_RANKS), as FN does elements in memory: bit for bit the
 * same (sources in order, the same accumulators and conversions). Every
 * element of the words is reduced (a partial line's last bytes are 0 in
 * every source; its caller writes only the call's bytes). No pointer to an
 * element is taken: with constant indices after unrolling, w and the
 * accumulators stay in registers. */
#define SC_RED_DEFINE_LINE(FN, T, A, D, LOAD, OP, FINISH)                                          \
  SC_DEV_FN T FN##_lane(uint64_t word, int i) {                                                    \
    T x_;                                                                                          \
    uint64_t bits_ = word >> (8 * sizeof(T) * (unsigned)i);                                        \
    memcpy(&x_, &bits_, sizeof(T));                                                                \
    return x_;                                                                                     \
  }                                                                                                \
  SC_DEV_FN uint64_t FN##_line(const uint64_t *w, int nsrcs, int divisor) {                       \
    uint64_t out_ = 0;                                                                             \
    (void)divisor;                                                                                 \
    SC_DEV_UNROLL for (int i_ = 0; i_ < (int)(8 / sizeof(T)); i_++) {                              \
      A acc_ = (A)LOAD(FN##_lane(w[0], i_));                                                       \
      SC_DEV_UNROLL for (int k_ = 1; k_ < SC_LL_MAX_RANKS; k_++) {                                 \
        if (k_ < nsrcs)                                                                            \
          acc_ = OP(acc_, (A)LOAD(FN##_lane(w[k_], i_)));                                          \
      }                                                                                            \
      T x_ = FINISH(T, D, acc_, divisor);                                                          \
      uint64_t bits_ = 0;                                                                          \
      memcpy(&bits_, &x_, sizeof(T));                                                              \
      out_ |= bits_ << (8 * sizeof(T) * (unsigned)i_);                                             \
    }                                                                                              \
    return out_;                                                                                   \
  }

/* Integers: T the element, U the unsigned type SUM/PROD/AVG wrap in, D the
 * type AVG divides in. DEF is SC_RED_DEFINE or a backend's own loop. */
#define SC_RED_DEFINE_INT(DEF, NAME, T, U, D)                                                      \
  DEF(sc_red_##NAME##_sum, T, U, D, SC_RED_LOAD, SC_RED_ADD, SC_RED_FIN_CAST)                      \
  DEF(sc_red_##NAME##_prod, T, U, D, SC_RED_LOAD, SC_RED_MUL, SC_RED_FIN_CAST)                     \
  DEF(sc_red_##NAME##_min, T, T, D, SC_RED_LOAD, SC_RED_IMIN, SC_RED_FIN_CAST)                     \
  DEF(sc_red_##NAME##_max, T, T, D, SC_RED_LOAD, SC_RED_IMAX, SC_RED_FIN_CAST)                     \
  DEF(sc_red_##NAME##_avg, T, U, D, SC_RED_LOAD, SC_RED_ADD, SC_RED_FIN_IDIV)

/* Floating point: T the element (bits for the 16-bit formats), A the
 * accumulator, LOAD and FIN/FIN_AVG the conversions, MIN/MAX on A. */
#define SC_RED_DEFINE_FLOAT(DEF, NAME, T, A, LOAD, FIN, FIN_AVG, MIN, MAX)                         \
  DEF(sc_red_##NAME##_sum, T, A, A, LOAD, SC_RED_ADD, FIN)                                         \
  DEF(sc_red_##NAME##_prod, T, A, A, LOAD, SC_RED_MUL, FIN)                                        \
  DEF(sc_red_##NAME##_min, T, A, A, LOAD, MIN, FIN)                                                \
  DEF(sc_red_##NAME##_max, T, A, A, LOAD, MAX, FIN)                                                \
  DEF(sc_red_##NAME##_avg, T, A, A, LOAD, SC_RED_ADD, FIN_AVG)

/* Every dtype x op, as DEF(FN, T, A, D, LOAD, OP, FINISH). uint8_t and int8_t
 * promote to int, so their AVG divides in int; uint32_t must not (a sum past
 * INT_MAX is a valid unsigned sum). */
#define SC_RED_EACH(DEF)                                                                           \
  SC_RED_DEFINE_INT(DEF, i8, int8_t, uint32_t, int)                                                \
  SC_RED_DEFINE_INT(DEF, u8, uint8_t, uint32_t, int)                                               \
  SC_RED_DEFINE_INT(DEF, i32, int32_t, uint32_t, int32_t)                                          \
  SC_RED_DEFINE_INT(DEF, u32, uint32_t, uint32_t, uint32_t)                                        \
  SC_RED_DEFINE_INT(DEF, i64, int64_t, uint64_t, int64_t)                                          \
  SC_RED_DEFINE_INT(DEF, u64, uint64_t, uint64_t, uint64_t)                                        \
  SC_RED_DEFINE_FLOAT(DEF, f16, uint16_t, float, sc_fp16_to_float, SC_RED_FIN_FP16,                \
                      SC_RED_FIN_FP16_AVG, sc_red_fminf, sc_red_fmaxf)                             \
  SC_RED_DEFINE_FLOAT(DEF, bf16, uint16_t, float, sc_bf16_to_float, SC_RED_FIN_BF16,               \
                      SC_RED_FIN_BF16_AVG, sc_red_fminf, sc_red_fmaxf)                             \
  SC_RED_DEFINE_FLOAT(DEF, f32, float, float, SC_RED_LOAD, SC_RED_FIN_CAST, SC_RED_FIN_FDIV,       \
                      sc_red_fminf, sc_red_fmaxf)                                                  \
  SC_RED_DEFINE_FLOAT(DEF, f64, double, double, SC_RED_LOAD, SC_RED_FIN_CAST, SC_RED_FIN_FDIV,     \
                      sc_red_fmin, sc_red_fmax)

SC_RED_EACH(SC_RED_DEFINE)
SC_RED_EACH(SC_RED_DEFINE_LINE)

/* ---- entry points */

/* Whether a reduction of nsrcs sources can run: a dtype, an op, and a
 * divisor for AVG. */
SC_DEV_FN int sc_dev_reduce_ok(int nsrcs, int dtype, int op, int avg_divisor) {
  if (nsrcs < 1 || nsrcs > SC_MAX_LOCAL_RANKS)
    return 0;
  if (dtype < 0 || dtype >= SYMCOMM_DTYPE_COUNT || op < 0 || op >= SYMCOMM_OP_COUNT)
    return 0;
  return op != SYMCOMM_AVG || avg_divisor >= 1;
}

/* The five ops of one dtype, sc_red_<dtype>_<op><SUFFIX>(ctx, dst, srcs,
 * nsrcs, count, divisor) each; SC_RED_SWITCH(SUFFIX) picks by dtype and op. */
#define SC_RED_CASE(DTYPE, NAME, SUFFIX)                                                           \
  case DTYPE:                                                                                      \
    switch (op) {                                                                                  \
    case SYMCOMM_SUM: sc_red_##NAME##_sum##SUFFIX(ctx, dst, srcs, nsrcs, count, divisor); break;   \
    case SYMCOMM_PROD: sc_red_##NAME##_prod##SUFFIX(ctx, dst, srcs, nsrcs, count, divisor); break; \
    case SYMCOMM_MIN: sc_red_##NAME##_min##SUFFIX(ctx, dst, srcs, nsrcs, count, divisor); break;   \
    case SYMCOMM_MAX: sc_red_##NAME##_max##SUFFIX(ctx, dst, srcs, nsrcs, count, divisor); break;   \
    case SYMCOMM_AVG: sc_red_##NAME##_avg##SUFFIX(ctx, dst, srcs, nsrcs, count, divisor); break;   \
    }                                                                                              \
    break

#define SC_RED_SWITCH(SUFFIX)                                                                      \
  switch (dtype) {                                                                                 \
    SC_RED_CASE(SYMCOMM_INT8, i8, SUFFIX);                                                         \
    SC_RED_CASE(SYMCOMM_UINT8, u8, SUFFIX);                                                        \
    SC_RED_CASE(SYMCOMM_INT32, i32, SUFFIX);                                                       \
    SC_RED_CASE(SYMCOMM_UINT32, u32, SUFFIX);                                                      \
    SC_RED_CASE(SYMCOMM_INT64, i64, SUFFIX);                                                       \
    SC_RED_CASE(SYMCOMM_UINT64, u64, SUFFIX);                                                      \
    SC_RED_CASE(SYMCOMM_FLOAT16, f16, SUFFIX);                                                     \
    SC_RED_CASE(SYMCOMM_BFLOAT16, bf16, SUFFIX);                                                   \
    SC_RED_CASE(SYMCOMM_FLOAT32, f32, SUFFIX);                                                     \
    SC_RED_CASE(SYMCOMM_FLOAT64, f64, SUFFIX);                                                     \
  }

#define SC_RED_LINE_CASE(DTYPE, NAME)                                                              \
  case DTYPE:                                                                                      \
    switch (op) {                                                                                  \
    case SYMCOMM_SUM: return sc_red_##NAME##_sum_line(w, nsrcs, divisor);                          \
    case SYMCOMM_PROD: return sc_red_##NAME##_prod_line(w, nsrcs, divisor);                        \
    case SYMCOMM_MIN: return sc_red_##NAME##_min_line(w, nsrcs, divisor);                          \
    case SYMCOMM_MAX: return sc_red_##NAME##_max_line(w, nsrcs, divisor);                          \
    case SYMCOMM_AVG: return sc_red_##NAME##_avg_line(w, nsrcs, divisor);                          \
    }                                                                                              \
    break

/* A line of 8-byte words, one a source (SC_RED_DEFINE_LINE), by one thread,
 * with arguments sc_dev_reduce_ok accepts; 0 for any others. */
SC_DEV_FN uint64_t sc_dev_reduce_line(const uint64_t *w, int nsrcs, int dtype, int op, int divisor) {
  switch (dtype) {
    SC_RED_LINE_CASE(SYMCOMM_INT8, i8);
    SC_RED_LINE_CASE(SYMCOMM_UINT8, u8);
    SC_RED_LINE_CASE(SYMCOMM_INT32, i32);
    SC_RED_LINE_CASE(SYMCOMM_UINT32, u32);
    SC_RED_LINE_CASE(SYMCOMM_INT64, i64);
    SC_RED_LINE_CASE(SYMCOMM_UINT64, u64);
    SC_RED_LINE_CASE(SYMCOMM_FLOAT16, f16);
    SC_RED_LINE_CASE(SYMCOMM_BFLOAT16, bf16);
    SC_RED_LINE_CASE(SYMCOMM_FLOAT32, f32);
    SC_RED_LINE_CASE(SYMCOMM_FLOAT64, f64);
  }
  return 0;
}

/* The portable loop, called by every thread of the block together, with
 * arguments sc_dev_reduce_ok accepts (AVG divides by `divisor`). */
SC_DEV_FN void sc_dev_reduce_elems(sc_dev_ctx_t *ctx, void *dst, const void *const *srcs, int nsrcs,
                                   size_t count, int dtype, int op, int divisor) {
  SC_RED_SWITCH()
}

#ifndef SC_DEV_HAS_REDUCE
/* The reduction of the collective program: the portable loop, unless the
 * backend has its own (SC_DEV_HAS_REDUCE), with the same results bit for bit. */
SC_DEV_FN void sc_dev_reduce(sc_dev_ctx_t *ctx, void *dst, const void *const *srcs, int nsrcs,
                             size_t count, int dtype, int op, int divisor) {
  sc_dev_reduce_elems(ctx, dst, srcs, nsrcs, count, dtype, op, divisor);
}
#endif

#endif
