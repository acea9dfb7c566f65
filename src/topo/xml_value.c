/* Numbers in XML attribute values, read strictly: the whole value must be the
 * number (no spaces, no trailing text), so that "4x" or "" is an error rather
 * than a silent 4 or 0 as atoi would make it. */
#include <stddef.h>

#include "topo/topo_internal.h"

bool sc_xml_value_int(const char *text, long min, long max, long *value) {
  if (text == NULL)
    return false;
  const char *p = text;
  bool negative = *p == '-';
  if (negative)
    p++;
  if (*p < '0' || *p > '9')
    return false;
  /* Ten digits are more than any value here needs and cannot overflow. */
  long long v = 0;
  int digits = 0;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (++digits > 10)
      return false;
    v = v * 10 + (*p - '0');
  }
  if (*p != '\0')
    return false;
  if (negative)
    v = -v;
  if (v < min || v > max)
    return false;
  *value = (long)v;
  return true;
}

bool sc_xml_value_hex(const char *text, uint64_t *value) {
  if (text == NULL)
    return false;
  const char *p = text;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
    p += 2;
  uint64_t v = 0;
  int n = 0;
  for (; *p != '\0'; p++, n++) {
    int d;
    if (*p >= '0' && *p <= '9')
      d = *p - '0';
    else if (*p >= 'a' && *p <= 'f')
      d = *p - 'a' + 10;
    else if (*p >= 'A' && *p <= 'F')
      d = *p - 'A' + 10;
    else
      return false;
    if (n == 16)
      return false;
    v = (v << 4) | (uint64_t)d;
  }
  if (n == 0)
    return false;
  *value = v;
  return true;
}
