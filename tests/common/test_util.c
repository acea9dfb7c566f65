#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

int test_device_shared(void) {
  const char *share = getenv("SYMCOMM_SHARE_DEVICE");
  return share != NULL && strtoll(share, NULL, 0) == 1;
}

double test_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int test_free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  TEST_ASSERT(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
  TEST_ASSERT(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
  close(fd);
  return ntohs(a.sin_port);
}

void test_set_rank_env(int rank, int nranks, int port) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%d", rank);
  setenv("SYMCOMM_RANK", buf, 1);
  snprintf(buf, sizeof(buf), "%d", nranks);
  setenv("SYMCOMM_WORLD_SIZE", buf, 1);
  snprintf(buf, sizeof(buf), "127.0.0.1:%d", port);
  setenv("SYMCOMM_ADDR", buf, 1);
  /* TEST_HOSTS=H: the ranks on H simulated hosts, contiguous, as symcomm-run --hosts puts them. */
  const char *hosts = getenv("TEST_HOSTS");
  if (hosts != NULL && atoi(hosts) > 1) {
    snprintf(buf, sizeof(buf), "%d", rank * atoi(hosts) / nranks);
    setenv("SYMCOMM_HOSTID", buf, 1);
  }
}

void test_reap_ranks(const int *pids, int n, int killed) {
  for (int q = 0; q < n; q++) {
    int status;
    TEST_ASSERT(waitpid(pids[q], &status, 0) == pids[q]);
    if (q == killed)
      TEST_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    else
      TEST_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rank %d ended with status %d", q,
                  status);
  }
}

void test_init_pair(symcomm_comm_t *comm, int *rank) {
  int size = 0;
  TEST_OK(symcomm_init_from_env(comm, NULL));
  TEST_OK(symcomm_comm_rank(*comm, rank));
  TEST_OK(symcomm_comm_size(*comm, &size));
  TEST_ASSERT(size == 2, "run with 2 ranks, not %d", size);
}
