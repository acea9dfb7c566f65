#include "float16.h"

#include <math.h>

/* A float in a format of 1 sign, exp_bits exponent and mant_bits mantissa
 * bits: scale the value so that one unit is the format's last mantissa bit
 * at its exponent, and let nearbyint() round (ties to even). */
static uint16_t narrow(float f, int exp_bits, int mant_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1, emin = 1 - bias, emax = bias;
  const uint32_t exp_ones = ((1u << exp_bits) - 1u) << mant_bits;
  const uint32_t implicit = 1u << mant_bits;
  uint32_t sign = signbit(f) ? 0x8000u : 0u;
  if (isnan(f))
    return (uint16_t)(sign | exp_ones | (implicit >> 1));
  double a = fabs((double)f);
  if (isinf(a))
    return (uint16_t)(sign | exp_ones);
  int e = 0;
  frexp(a, &e); /* a in [2^(e-1), 2^e) */
  int exp = a == 0 ? emin : e - 1;
  if (exp < emin) /* subnormal: units of the smallest exponent */
    exp = emin;
  double units = nearbyint(ldexp(a, mant_bits - exp));
  if (units >= 2.0 * implicit) { /* rounded up to the next power of two */
    units /= 2;
    exp++;
  }
  if (exp > emax)
    return (uint16_t)(sign | exp_ones);
  uint32_t q = (uint32_t)units;
  if (q < implicit) /* subnormal or zero: exponent field 0 */
    return (uint16_t)(sign | q);
  return (uint16_t)(sign | ((uint32_t)(exp + bias) << mant_bits) | (q - implicit));
}

uint16_t float16_from_float(float f) { return narrow(f, 5, 10); }

uint16_t bfloat16_from_float(float f) { return narrow(f, 8, 7); }
