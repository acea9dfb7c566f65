/* The 16-bit floating-point formats of symcomm's dtypes, as bit patterns in a
 * uint16_t: IEEE binary16 (SYMCOMM_FLOAT16) and bfloat16 (SYMCOMM_BFLOAT16).
 *
 *   float sc_fp16_to_float(uint16_t h)    exact
 *   uint16_t sc_float_to_fp16(float f)    round to nearest, ties to even
 *   float sc_bf16_to_float(uint16_t b)    exact
 *   uint16_t sc_float_to_bf16(float f)    round to nearest, ties to even
 *
 * Bit manipulation (and one float product that is always exact), so the
 * results do not depend on the FPU's rounding mode or on flush-to-zero:
 * subnormals both ways, overflow to infinity, NaN stays NaN with its sign and
 * as much of its payload as fits (all of it from fp16/bf16 to float and back;
 * a payload that would vanish becomes the quiet bit). Usable from host code
 * (this header needs nothing but <stdint.h>) and from CUDA device code. */
#ifndef SC_DEVICE_REDUCE_TYPES_H
#define SC_DEVICE_REDUCE_TYPES_H

#include <stdint.h>

#ifdef __CUDACC__
#define SC_HOST_DEV_FN static __host__ __device__ __forceinline__
#else
#define SC_HOST_DEV_FN static inline
#endif

SC_HOST_DEV_FN uint32_t sc_float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  union {
    float f;
    uint32_t u;
  } v;
  v.f = f;
  return v.u;
#endif
}

SC_HOST_DEV_FN float sc_bits_float(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  union {
    uint32_t u;
    float f;
  } v;
  v.u = u;
  return v.f;
#endif
}

SC_HOST_DEV_FN uint64_t sc_double_bits(double d) {
#ifdef __CUDA_ARCH__
  return (uint64_t)__double_as_longlong(d);
#else
  union {
    double d;
    uint64_t u;
  } v;
  v.d = d;
  return v.u;
#endif
}

/* ---- IEEE binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits */

SC_HOST_DEV_FN float sc_fp16_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu) /* infinity, or NaN keeping its payload */
    return sc_bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) /* normal: rebias 15 -> 127 */
    return sc_bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  /* zero or subnormal, mant * 2^-24: a normal float, computed exactly */
  return sc_bits_float(sign | sc_float_bits((float)mant * 0x1p-24f));
}

SC_HOST_DEV_FN uint16_t sc_float_to_fp16(float f) {
  uint32_t x = sc_float_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) { /* NaN: the top of the payload, never zero */
    uint32_t mant = (x >> 13) & 0x3ffu;
    return (uint16_t)(sign | 0x7c00u | (mant != 0 ? mant : 0x200u));
  }
  if (x >= 0x477ff000u) /* >= 65520, halfway from 65504 to 2^16: infinity */
    return (uint16_t)(sign | 0x7c00u);
  if (x >= 0x38800000u) { /* >= 2^-14: normal; round the 13 dropped bits */
    x += 0xfffu + ((x >> 13) & 1u);
    return (uint16_t)(sign | ((x - (112u << 23)) >> 13));
  }
  if (x <= 0x33000000u) /* <= 2^-25, half the smallest subnormal: zero (ties to even) */
    return sign;
  /* subnormal result: (2^23 + mantissa) * 2^(exp - 150) in units of 2^-24 */
  uint32_t shift = 126u - (x >> 23); /* 14..24 */
  uint32_t mant = (x & 0x7fffffu) | 0x800000u;
  uint32_t h = mant >> shift;
  uint32_t rest = mant & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (h & 1u) != 0))
    h++; /* may carry into the smallest normal, which is the right answer */
  return (uint16_t)(sign | h);
}

/* ---- bfloat16: the top half of a float */

SC_HOST_DEV_FN float sc_bf16_to_float(uint16_t b) { return sc_bits_float((uint32_t)b << 16); }

SC_HOST_DEV_FN uint16_t sc_float_to_bf16(float f) {
  uint32_t x = sc_float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) { /* NaN: keep sign and top of payload */
    uint16_t top = (uint16_t)(x >> 16);
    return (top & 0x7fu) != 0 ? top : (uint16_t)(top | 0x40u);
  }
  /* round the 16 dropped bits; a carry out of the largest finite value
   * makes infinity, as it should */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

#endif
