/* PCI bus ids: text "dddd:bb:dd.f" <-> the number NCCL uses (the hex digits
 * read as one value), and the PCI domain inside that number. */
#include <stdio.h>
#include <string.h>

#include "topo/topo_internal.h"
#include "util/log.h"

/* Field widths inside the number: function 4 bits, device 8, bus 8, domain
 * the rest (NCCL's layout, which keeps "0000:07:00.0" -> 0x7000). */
#define SC_BUSID_DOMAIN_SHIFT 20
#define SC_BUSID_LOCAL_MASK ((INT64_C(1) << SC_BUSID_DOMAIN_SHIFT) - 1)
/* nvidia-smi prints 8 domain digits ("00000000:07:00.0"); NCCL prints 4. */
#define SC_BUSID_MAX_DOMAIN_DIGITS 8

static int sc_hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Reads exactly `digits` hex digits (or, with digits == 0, 1 to 8 of them)
 * from *text and moves it past them. */
static bool sc_hex_field(const char **text, int digits, uint32_t *value) {
  int max = digits == 0 ? SC_BUSID_MAX_DOMAIN_DIGITS : digits;
  uint32_t v = 0;
  int n = 0;
  while (n < max && sc_hex_digit((*text)[n]) >= 0) {
    v = (v << 4) | (uint32_t)sc_hex_digit((*text)[n]);
    n++;
  }
  if (n == 0 || (digits != 0 && n != digits))
    return false;
  *text += n;
  *value = v;
  return true;
}

bool sc_busid_scan(const char *text, int64_t *busid) {
  if (text == NULL)
    return false;
  /* With a domain there are two ':' before the '.', without one only one. */
  const char *dot = strchr(text, '.');
  int colons = 0;
  for (const char *c = text; *c != '\0' && (dot == NULL || c < dot); c++)
    colons += *c == ':';
  const char *p = text;
  uint32_t domain = 0, bus, device, function;
  if (colons == 2) {
    if (!sc_hex_field(&p, 0, &domain) || *p++ != ':')
      return false;
  } else if (colons != 1) {
    return false;
  }
  if (!sc_hex_field(&p, 2, &bus) || *p++ != ':')
    return false;
  if (!sc_hex_field(&p, 2, &device) || *p++ != '.')
    return false;
  if (!sc_hex_field(&p, 1, &function) || *p != '\0')
    return false;
  *busid = ((int64_t)domain << SC_BUSID_DOMAIN_SHIFT) | ((int64_t)bus << 12) |
           ((int64_t)device << 4) | (int64_t)function;
  return true;
}

sc_result_t sc_busid_parse(const char *text, int64_t *busid) {
  int64_t value;
  if (busid == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "sc_busid_parse: busid is NULL");
  if (!sc_busid_scan(text, &value))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO,
                    "bad PCI bus id '%s': expected dddd:bb:dd.f or bb:dd.f in hex",
                    text == NULL ? "(null)" : text);
  *busid = value;
  return SYMCOMM_OK;
}

void sc_busid_format(int64_t busid, char *buf, size_t len) {
  if (buf == NULL || len == 0)
    return;
  uint64_t v = (uint64_t)busid;
  snprintf(buf, len, "%04llx:%02x:%02x.%x", (unsigned long long)(v >> SC_BUSID_DOMAIN_SHIFT),
           (unsigned)((v >> 12) & 0xff), (unsigned)((v >> 4) & 0xff), (unsigned)(v & 0xf));
}

int sc_busid_domain(int64_t busid) { return (int)((uint64_t)busid >> SC_BUSID_DOMAIN_SHIFT); }

int64_t sc_busid_with_domain(int64_t busid, int domain) {
  return (busid & SC_BUSID_LOCAL_MASK) | ((int64_t)(uint32_t)domain << SC_BUSID_DOMAIN_SHIFT);
}
