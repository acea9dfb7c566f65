#include "test_util.h"

#include <stdarg.h>
#include <time.h>
#include <unistd.h>

void test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "TEST FAILED (pid %d) %s:%d: ", (int)getpid(), file, line);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  exit(1);
}

void test_fail_assert(const char *file, int line, const char *cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "TEST FAILED (pid %d) %s:%d: assert(%s)", (int)getpid(), file, line, cond);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  exit(1);
}

int test_contains(const char *haystack, const char *needle) {
  return haystack != NULL && needle != NULL && strstr(haystack, needle) != NULL;
}

double test_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
