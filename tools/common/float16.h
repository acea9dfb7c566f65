/* float to the 16-bit formats of SYMCOMM_FLOAT16 (IEEE binary16) and
 * SYMCOMM_BFLOAT16, rounded to nearest, ties to even. The tools compute
 * expected results with these instead of the library's own conversions
 * (src/device/reduce_types.h): ordinary arithmetic rather than bit
 * manipulation, so a mistake in either shows up as a wrong element.
 * NaN becomes a quiet NaN of the same sign (its payload is not kept). */
#ifndef FLOAT16_H
#define FLOAT16_H

#include <stdint.h>

uint16_t float16_from_float(float f);
uint16_t bfloat16_from_float(float f);

#endif
