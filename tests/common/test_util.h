/* Small helpers shared by the tests: assertions that print where they failed
 * and exit non-zero, so that every test is a plain program. */
#ifndef SC_TEST_UTIL_H
#define SC_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symcomm.h"

void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

void test_fail_assert(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));

/* TEST_ASSERT(cond) or TEST_ASSERT(cond, "format", args...) */
#define TEST_ASSERT(cond, ...)                                             \
  do {                                                                     \
    if (!(cond))                                                           \
      test_fail_assert(__FILE__, __LINE__, #cond, " " __VA_ARGS__);        \
  } while (0)

/* A symcomm call that must return `expected`; prints the error sentence otherwise. */
#define TEST_EXPECT_RESULT(call, expected)                                                 \
  do {                                                                                     \
    symcomm_result_t test_r_ = (call);                                                     \
    if (test_r_ != (expected))                                                             \
      test_fail(__FILE__, __LINE__, "%s returned %s, expected %s (last error: %s)", #call, \
                symcomm_result_string(test_r_), symcomm_result_string(expected),          \
                symcomm_last_error(NULL));                                                 \
  } while (0)

#define TEST_OK(call) TEST_EXPECT_RESULT(call, SYMCOMM_OK)

/* Whether `haystack` contains `needle`, for checking error sentences. */
int test_contains(const char *haystack, const char *needle);

/* Seconds since an arbitrary start, monotonic. */
double test_now(void);

/* Whether SYMCOMM_SHARE_DEVICE=1 (make test-gpu's SHARE_GPU on a one-GPU host)
 * lets ranks share a device on purpose: read as the library reads it. */
int test_device_shared(void);

/* One of the 2 ranks of a job under a launcher (symcomm_init_from_env):
 * its communicator and rank; fails clearly on any other rank count. */
void test_init_pair(symcomm_comm_t *comm, int *rank);

/* A loopback TCP port that was free a moment ago (for SYMCOMM_ADDR). */
int test_free_port(void);

/* What a user would set by hand for one rank of a job started without a
 * launcher: SYMCOMM_RANK, SYMCOMM_WORLD_SIZE, SYMCOMM_ADDR=127.0.0.1:port. */
void test_set_rank_env(int rank, int nranks, int port);

/* Waits for the ranks' processes: `killed` (-1: none) must have died of
 * SIGKILL, every other one exited with status 0. */
void test_reap_ranks(const int *pids, int n, int killed);

#endif
