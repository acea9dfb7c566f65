/* config.abort_fd, the fd symcomm's init watches, under symcomm-run (every
 * rank runs the same case):
 *   test_init_abort bad_fd     an fd that is not open: INVALID_ARGUMENT, at once
 *   test_init_abort readable   already readable: init fails, promptly, as aborted
 *   test_init_abort old_size   a config from before the field (its size ends
 *                              before it), with a readable fd there: the field
 *                              is not read, init works and an all-reduce is right
 *   test_init_abort split      init watching an fd that becomes readable after
 *                              init: the communicator and a split of it work
 * Run it with a short SYMCOMM_TIMEOUT: a wrong wait must not be long. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "test_util.h"

static int readable_fd(int ready) {
  int fd = eventfd(0, EFD_CLOEXEC);
  TEST_ASSERT(fd > 0, "eventfd");
  if (ready) {
    uint64_t one = 1;
    TEST_ASSERT(write(fd, &one, sizeof(one)) == (ssize_t)sizeof(one), "eventfd write");
  }
  return fd;
}

/* Every element of an all-reduce of the ranks' numbers plus the index. */
static void check_sum(symcomm_comm_t comm) {
  enum { N = 1000 };
  int rank = -1, size = 0;
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  int32_t *buf = malloc(sizeof(int32_t) * N);
  TEST_ASSERT(buf != NULL);
  for (int i = 0; i < N; i++)
    buf[i] = rank * 7 + i;
  TEST_OK(symcomm_allreduce(buf, buf, N, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream));
  TEST_OK(symcomm_stream_synchronize(stream));
  for (int i = 0; i < N; i++)
    TEST_ASSERT(buf[i] == 7 * size * (size - 1) / 2 + size * i, "element %d is %d", i, buf[i]);
  free(buf);
  TEST_OK(symcomm_stream_destroy(stream));
}

int main(int argc, char **argv) {
  TEST_ASSERT(argc == 2, "usage: test_init_abort bad_fd|readable|old_size|split");
  const char *what = argv[1];
  symcomm_config_t config = SYMCOMM_CONFIG_INITIALIZER;
  symcomm_comm_t comm = NULL;
  if (strcmp(what, "bad_fd") == 0) {
    int fd = readable_fd(0);
    TEST_ASSERT(close(fd) == 0);
    config.abort_fd = fd;
    double t0 = test_now();
    TEST_EXPECT_RESULT(symcomm_init_from_env(&comm, &config), SYMCOMM_ERR_INVALID_ARGUMENT);
    TEST_ASSERT(test_contains(symcomm_last_error(NULL), "abort_fd"), "%s", symcomm_last_error(NULL));
    TEST_ASSERT(test_now() - t0 < 5, "refusing took %.1f s", test_now() - t0);
  } else if (strcmp(what, "readable") == 0) {
    config.abort_fd = readable_fd(1);
    double t0 = test_now();
    symcomm_result_t r = symcomm_init_from_env(&comm, &config);
    TEST_ASSERT(r != SYMCOMM_OK, "init with a readable abort_fd succeeded");
    TEST_ASSERT(test_contains(symcomm_last_error(NULL), "abort"), "%s: %s",
                symcomm_result_string(r), symcomm_last_error(NULL));
    TEST_ASSERT(test_now() - t0 < 5, "init took %.1f s to give up", test_now() - t0);
  } else if (strcmp(what, "old_size") == 0) {
    config.size = offsetof(symcomm_config_t, abort_fd);
    config.abort_fd = readable_fd(1);
    TEST_OK(symcomm_init_from_env(&comm, &config));
    check_sum(comm);
    TEST_OK(symcomm_comm_destroy(comm));
  } else if (strcmp(what, "split") == 0) {
    int fd = readable_fd(0);
    config.abort_fd = fd;
    TEST_OK(symcomm_init_from_env(&comm, &config));
    uint64_t one = 1;
    TEST_ASSERT(write(fd, &one, sizeof(one)) == (ssize_t)sizeof(one));
    check_sum(comm);
    int rank = -1;
    TEST_OK(symcomm_comm_rank(comm, &rank));
    symcomm_comm_t half = NULL;
    TEST_OK(symcomm_comm_split(comm, rank % 2, rank, &half));
    check_sum(half);
    TEST_OK(symcomm_comm_destroy(half));
    TEST_OK(symcomm_comm_destroy(comm));
    TEST_ASSERT(close(fd) == 0);
  } else {
    TEST_ASSERT(0, "unknown case '%s'", what);
  }
  printf("test_init_abort %s: passed\n", what);
  return 0;
}
