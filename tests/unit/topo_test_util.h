/* Helpers shared by the topology unit tests (test_topo_*.c). */
#ifndef SC_TEST_TOPO_TEST_UTIL_H
#define SC_TEST_TOPO_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/test_util.h"
#include "topo/topo.h"
#include "util/error.h"

/* A file of the repository, found through SYMCOMM_TEST_TOP (tests/run.sh sets
 * it), else relative to the current directory. */
static inline void topo_test_path(const char *relative, char *path, size_t len) {
  const char *top = getenv("SYMCOMM_TEST_TOP");
  snprintf(path, len, "%s/%s", top != NULL && top[0] != '\0' ? top : ".", relative);
}

static inline sc_topo_t *topo_test_parse(const char *xml) {
  sc_topo_t *topo = NULL;
  TEST_OK(sc_topo_parse_xml(xml, strlen(xml), "test.xml", &topo));
  TEST_ASSERT(topo != NULL);
  return topo;
}

static inline sc_topo_t *topo_test_load(const char *relative) {
  char path[1024];
  topo_test_path(relative, path, sizeof(path));
  sc_topo_t *topo = NULL;
  TEST_OK(sc_topo_load_file(path, &topo));
  TEST_ASSERT(topo != NULL);
  return topo;
}

/* Parsing `xml` must fail with INVALID_ARGUMENT and a sentence that starts
 * with "test.xml:<line>: " and contains `needle`; the output stays untouched. */
static inline void topo_test_parse_fails(const char *xml, int line, const char *needle,
                                         const char *file, int test_line) {
  sc_topo_t *topo = (sc_topo_t *)(uintptr_t)0x1;
  sc_error_clear();
  sc_result_t r = sc_topo_parse_xml(xml, strlen(xml), "test.xml", &topo);
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "test.xml:%d: ", line);
  const char *msg = sc_error_last();
  if (r != SYMCOMM_ERR_INVALID_ARGUMENT || strncmp(msg, prefix, strlen(prefix)) != 0 ||
      !test_contains(msg, needle) || topo != (sc_topo_t *)(uintptr_t)0x1)
    test_fail(file, test_line, "expected '%s...%s', got %s: '%s'", prefix, needle,
              sc_result_name(r), msg);
}
#define TOPO_PARSE_FAILS(xml, line, needle)                                                        \
  topo_test_parse_fails((xml), (line), (needle), __FILE__, __LINE__)

/* The link type and NVLink count between GPUs a and b, checked both ways. */
static inline void topo_test_link(const sc_topo_t *t, int a, int b, symcomm_link_t link,
                                  int nvlinks, const char *file, int test_line) {
  for (int k = 0; k < 2; k++) {
    int x = k == 0 ? a : b, y = k == 0 ? b : a;
    if (t->link[x][y] != link || (link == SYMCOMM_LINK_NVLINK && t->nvlinks[x][y] != nvlinks)) {
      char text[16];
      sc_topo_link_text(t, x, y, text, sizeof(text));
      test_fail(file, test_line, "link %d-%d is %s (link %d), expected link %d with %d NVLinks", x,
                y, text, t->link[x][y], (int)link, nvlinks);
    }
  }
}
#define TOPO_LINK(t, a, b, link, nvlinks)                                                          \
  topo_test_link((t), (a), (b), (link), (nvlinks), __FILE__, __LINE__)

static inline void topo_test_busid(const sc_topo_t *t, int gpu, const char *busid, const char *file,
                                   int test_line) {
  char text[32];
  sc_busid_format(t->busid[gpu], text, sizeof(text));
  if (strcmp(text, busid) != 0)
    test_fail(file, test_line, "GPU %d has bus id %s, expected %s", gpu, text, busid);
}
#define TOPO_BUSID(t, gpu, busid) topo_test_busid((t), (gpu), (busid), __FILE__, __LINE__)

#endif
