/* The CUDA backend's sc_dev_reduce (device/reduce.h): the sources are mostly
 * other GPUs' memory over NVLink, so a thread needs many independent 16-byte
 * loads in flight, where the portable loop has one element. When dst and
 * every source sit equally far past a 16-byte boundary (a whole number of
 * elements), the elements before the first boundary (the head) and after the
 * last whole vector (the tail) go through the portable element step, and the
 * vectors between them through a loop of its own: each thread takes U
 * vectors of source 0, and of source k + 1 while it folds source k in, in
 * rank order, then stores its U vectors of dst. Otherwise the whole
 * reduction is the portable loop.
 *
 * The results are the portable loop's bit for bit: the loop is built from
 * the same list (SC_RED_EACH) of accumulator types, element operations and
 * conversions, applied to each element in the same order; only which thread
 * does an element, and how its bytes are loaded, differ. A thread reads
 * every source of its vectors before it writes them, so dst may be a source
 * (in place), as in the portable loop. */
#ifndef SC_BACKEND_CUDA_REDUCE_CUH
#define SC_BACKEND_CUDA_REDUCE_CUH

#include <stdint.h>

#include <type_traits>

#define SC_DEV_HAS_REDUCE 1
#include "device/reduce.h"

/* Vectors per thread and source: 2, but 1 for 1-byte elements (16
 * accumulators each, as many as the 2-byte formats' 2 x 8 floats): more
 * spilled inside the loop at the coll kernel's 64 registers. */
#ifndef SC_CUDA_RED_UNROLL
#define SC_CUDA_RED_UNROLL(ELEM) ((ELEM) == 1 ? 1 : 2)
#endif

/* ---- elements inside a 16-byte vector. Indices are constants once the loops
 * are unrolled, so the vector stays in registers. */

SC_DEV_FN uint32_t sc_cuda_word(const uint4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

SC_DEV_FN void sc_cuda_word_or(uint4 &v, int i, uint32_t bits) {
  if (i == 0)
    v.x |= bits;
  else if (i == 1)
    v.y |= bits;
  else if (i == 2)
    v.z |= bits;
  else
    v.w |= bits;
}

template <typename T> SC_DEV_FN T sc_cuda_from_bits(uint64_t b) {
  if constexpr (std::is_same_v<T, float>)
    return __uint_as_float((uint32_t)b);
  else if constexpr (std::is_same_v<T, double>)
    return __longlong_as_double((long long)b);
  else
    return (T)(std::make_unsigned_t<T>)b;
}

/* Zero-extended, so that it can be or-ed into its place. */
template <typename T> SC_DEV_FN uint64_t sc_cuda_to_bits(T x) {
  if constexpr (std::is_same_v<T, float>)
    return __float_as_uint(x);
  else if constexpr (std::is_same_v<T, double>)
    return (uint64_t)__double_as_longlong(x);
  else
    return (uint64_t)(std::make_unsigned_t<T>)x;
}

/* Element j of v (little-endian, as memory holds it). */
template <typename T> SC_DEV_FN T sc_cuda_lane(const uint4 &v, int j) {
  constexpr int size = (int)sizeof(T);
  if constexpr (size == 8)
    return sc_cuda_from_bits<T>((uint64_t)sc_cuda_word(v, 2 * j + 1) << 32 |
                                sc_cuda_word(v, 2 * j));
  else
    return sc_cuda_from_bits<T>(sc_cuda_word(v, j * size / 4) >> (8 * (j * size % 4)));
}

/* Element j of v, whose bits there are still zero, becomes x. */
template <typename T> SC_DEV_FN void sc_cuda_set_lane(uint4 &v, int j, T x) {
  constexpr int size = (int)sizeof(T);
  uint64_t bits = sc_cuda_to_bits<T>(x);
  if constexpr (size == 8) {
    sc_cuda_word_or(v, 2 * j, (uint32_t)bits);
    sc_cuda_word_or(v, 2 * j + 1, (uint32_t)(bits >> 32));
  } else {
    sc_cuda_word_or(v, j * size / 4, (uint32_t)bits << (8 * (j * size % 4)));
  }
}

/* ---- the vector loop */

/* Elements of `elem` bytes before dst's first 16-byte boundary, when dst and
 * every source are equally far past one (and that distance is whole
 * elements); else count: then no vector is whole and everything is the
 * portable loop's. */
SC_DEV_FN size_t sc_cuda_red_head(const void *dst, const void *const *srcs, int nsrcs, size_t count,
                                  size_t elem) {
  uintptr_t past = (uintptr_t)dst & 15;
  for (int k = 0; k < nsrcs; k++)
    if (((uintptr_t)srcs[k] & 15) != past)
      return count;
  if (past % elem != 0)
    return count;
  size_t head = (16 - past) % 16 / elem;
  return head < count ? head : count;
}

/* Vectors v + u x nt (u < U) of the vectors of src from element `head` on,
 * those below nvec (the others zero), all loads issued before any is used. */
template <typename T, int U>
SC_DEV_FN void sc_cuda_red_load(uint4 (&x)[U], const void *src, size_t head, size_t v, size_t nt,
                                size_t nvec) {
  const uint4 *s = (const uint4 *)((const T *)src + head);
#pragma unroll
  for (int u = 0; u < U; u++)
    x[u] = v + u * nt < nvec ? s[v + u * nt] : make_uint4(0, 0, 0, 0);
}

/* FN##_vec: FN (the portable loop, device/reduce.h's SC_RED_DEFINE) with the
 * vectors in between done U per thread. E elements per vector, acc[u * E + j]
 * element j of vector u; head and tail one element per thread, with the
 * portable loop's element step (SC_RED_BLOCK_BODY on one element at base). */
#define SC_CUDA_RED_DEFINE(FN, T, A, D, LOAD, OP, FINISH)                                          \
  SC_DEV_FN void FN##_vec(sc_dev_ctx_t *ctx, void *dst_v, const void *const *srcs, int nsrcs,      \
                          size_t count, int divisor) {                                             \
    constexpr int E = 16 / (int)sizeof(T), U = SC_CUDA_RED_UNROLL(sizeof(T));                      \
    T *dst = (T *)dst_v;                                                                           \
    size_t head = sc_cuda_red_head(dst_v, srcs, nsrcs, count, sizeof(T));                          \
    if (head == count) {                                                                           \
      FN(ctx, dst_v, srcs, nsrcs, count, divisor);                                                 \
      return;                                                                                      \
    }                                                                                              \
    (void)divisor;                                                                                 \
    size_t nvec = (count - head) / E, nt = sc_dev_threads(ctx), t = sc_dev_thread(ctx);            \
    for (size_t base = t; base < head; base += nt)                                                 \
      SC_RED_BLOCK_BODY(T, A, D, LOAD, OP, FINISH, 1);                                             \
    for (size_t base = head + nvec * E + t; base < count; base += nt)                              \
      SC_RED_BLOCK_BODY(T, A, D, LOAD, OP, FINISH, 1);                                             \
    uint4 *dv = (uint4 *)(dst + head);                                                             \
    for (size_t v = t; v < nvec; v += (size_t)U * nt) {                                            \
      uint4 cur[U], next[U];                                                                       \
      A acc[U * E];                                                                                \
      sc_cuda_red_load<T, U>(cur, srcs[0], head, v, nt, nvec);                                     \
      if (nsrcs > 1)                                                                               \
        sc_cuda_red_load<T, U>(next, srcs[1], head, v, nt, nvec);                                  \
      _Pragma("unroll") for (int i = 0; i < U * E; i++) acc[i] =                                   \
          (A)LOAD(sc_cuda_lane<T>(cur[i / E], i % E));                                             \
      for (int k = 1; k < nsrcs; k++) {                                                            \
        _Pragma("unroll") for (int u = 0; u < U; u++) cur[u] = next[u];                            \
        if (k + 1 < nsrcs)                                                                         \
          sc_cuda_red_load<T, U>(next, srcs[k + 1], head, v, nt, nvec);                            \
        _Pragma("unroll") for (int i = 0; i < U * E; i++) acc[i] =                                 \
            OP(acc[i], (A)LOAD(sc_cuda_lane<T>(cur[i / E], i % E)));                               \
      }                                                                                            \
      _Pragma("unroll") for (int u = 0; u < U; u++) {                                              \
        uint4 out = make_uint4(0, 0, 0, 0);                                                        \
        _Pragma("unroll") for (int j = 0; j < E; j++)                                              \
            sc_cuda_set_lane<T>(out, j, (T)FINISH(T, D, acc[u * E + j], divisor));                 \
        if (v + u * nt < nvec)                                                                     \
          dv[v + u * nt] = out;                                                                    \
      }                                                                                            \
    }                                                                                              \
  }

SC_RED_EACH(SC_CUDA_RED_DEFINE)

/* The vector loops, by dtype and op. A function of its own, called where
 * the program reduces: inlined at each of the collective program's call
 * sites, its 50 unrolled loops would multiply the kernel's code, and its
 * compile time (minutes), by their number, and take registers from the whole
 * kernel. */
static __device__ __noinline__ void sc_cuda_reduce_vec(sc_dev_ctx_t *ctx, void *dst,
                                                       const void *const *srcs, int nsrcs,
                                                       size_t count, int dtype, int op,
                                                       int divisor) {
  SC_RED_SWITCH(_vec)
}

/* Called by every thread of the block together, with arguments
 * sc_dev_reduce_ok accepts (AVG divides by `divisor`). An element per thread
 * at most is one pass of the portable loop, not worth a call. */
SC_DEV_FN void sc_dev_reduce(sc_dev_ctx_t *ctx, void *dst, const void *const *srcs, int nsrcs,
                             size_t count, int dtype, int op, int divisor) {
  if (count <= sc_dev_threads(ctx))
    sc_dev_reduce_elems(ctx, dst, srcs, nsrcs, count, dtype, op, divisor);
  else
    sc_cuda_reduce_vec(ctx, dst, srcs, nsrcs, count, dtype, op, divisor);
}

#endif
