/* Every public call refuses bad arguments with INVALID_ARGUMENT (or
 * INVALID_USAGE) and a sentence, before doing anything; a call that names a
 * communicator, directly or through a window, leaves that sentence in
 * symcomm_last_error(comm) too. Environment variables that no job could work
 * with are refused at init, and a topology "file" that is a FIFO is refused
 * at once. One process, communicators of one rank. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

#define EXPECT_BAD(call, needle)                                                              \
  do {                                                                                        \
    symcomm_result_t r_ = (call);                                                             \
    TEST_ASSERT(r_ == SYMCOMM_ERR_INVALID_ARGUMENT, "%s gave %s", #call,                      \
                symcomm_result_string(r_));                                                   \
    TEST_ASSERT(test_contains(symcomm_last_error(NULL), needle), "%s: '%s' not in '%s'", #call, \
                needle, symcomm_last_error(NULL));                                            \
  } while (0)

/* A failed call must replace the communicator's last sentence: set an older
 * one first (a bad peer), then check that the call's own took its place. */
#define EXPECT_COMM_SENTENCE(comm, call, expected, needle)                                         \
  do {                                                                                             \
    int x_;                                                                                        \
    TEST_EXPECT_RESULT(symcomm_comm_peer_host((comm), 99, &x_), SYMCOMM_ERR_INVALID_ARGUMENT);     \
    symcomm_result_t r_ = (call);                                                                  \
    TEST_ASSERT(r_ == (expected), "%s gave %s (%s)", #call, symcomm_result_string(r_),              \
                symcomm_last_error(NULL));                                                         \
    TEST_ASSERT(test_contains(symcomm_last_error(comm), needle),                                   \
                "%s: the communicator's sentence is '%s', not one with '%s'", #call,              \
                symcomm_last_error(comm), needle);                                                 \
  } while (0)

static void test_comm_sentences(symcomm_comm_t comm) {
  symcomm_stream_t stream;
  TEST_OK(symcomm_stream_create(comm, &stream));
  symcomm_window_t live, freed, w = NULL;
  TEST_OK(symcomm_window_alloc(comm, 4096, &live));
  TEST_OK(symcomm_window_alloc(comm, 4096, &freed));
  TEST_OK(symcomm_window_free(freed));
  static unsigned char buf[64];
  void *p = NULL;
  const symcomm_result_t usage = SYMCOMM_ERR_INVALID_USAGE, bad = SYMCOMM_ERR_INVALID_ARGUMENT;
  /* A freed window still leads to its communicator. */
  EXPECT_COMM_SENTENCE(comm, symcomm_put(freed, 0, 0, buf, 8, stream), usage, "symcomm_put: the window was freed");
  EXPECT_COMM_SENTENCE(comm, symcomm_signal(freed, 0, 0, 1, SYMCOMM_SIGNAL_ADD, stream), usage, "was freed");
  EXPECT_COMM_SENTENCE(comm, symcomm_put_signal(freed, 0, 0, buf, 8, 0, 1, SYMCOMM_SIGNAL_ADD, stream),
                       usage, "was freed");
  EXPECT_COMM_SENTENCE(comm, symcomm_wait_signal(freed, 0, SYMCOMM_CMP_GE, 1, stream), usage,
                       "symcomm_wait_signal: the window was freed");
  EXPECT_COMM_SENTENCE(comm, symcomm_window_free(freed), usage, "already freed");
  /* Streams that are no stream. */
  EXPECT_COMM_SENTENCE(comm, symcomm_put(live, 0, 0, buf, 8, NULL), bad, "stream is NULL");
  EXPECT_COMM_SENTENCE(comm, symcomm_signal(live, 0, 0, 1, SYMCOMM_SIGNAL_SET, NULL), bad, "stream is NULL");
  EXPECT_COMM_SENTENCE(comm, symcomm_wait_signal(live, 0, SYMCOMM_CMP_GE, 1, NULL), bad, "stream is NULL");
  EXPECT_COMM_SENTENCE(comm, symcomm_send(buf, 8, SYMCOMM_UINT8, 0, comm, NULL), bad, "stream is NULL");
  EXPECT_COMM_SENTENCE(comm, symcomm_allreduce(buf, buf, 8, SYMCOMM_UINT8, SYMCOMM_SUM, comm, NULL), bad,
                       "stream is NULL");
  /* Arguments of every other kind of call. */
  EXPECT_COMM_SENTENCE(comm, symcomm_put(live, 0, 4090, buf, 8, stream), bad, "pass the window's end");
  EXPECT_COMM_SENTENCE(comm, symcomm_wait_signal(live, SYMCOMM_SIGNAL_SLOTS, SYMCOMM_CMP_GE, 1, stream),
                       bad, "signal slot 64");
  EXPECT_COMM_SENTENCE(comm, symcomm_recv(buf, 8, SYMCOMM_UINT8, 3, comm, stream), bad, "rank 3 is not in");
  EXPECT_COMM_SENTENCE(comm, symcomm_broadcast(buf, buf, 8, SYMCOMM_UINT8, 2, comm, stream), bad, "root 2");
  /* Buffers whose bytes would run past the end of the address space. */
  void *near_end = (void *)(UINTPTR_MAX - 15);
  EXPECT_COMM_SENTENCE(comm, symcomm_allreduce(near_end, buf, 8, SYMCOMM_INT32, SYMCOMM_SUM, comm, stream),
                       bad, "sendbuf of 32 bytes at");
  EXPECT_COMM_SENTENCE(comm, symcomm_allgather(buf, near_end, 17, SYMCOMM_UINT8, comm, stream), bad,
                       "recvbuf of 17 bytes at");
  EXPECT_COMM_SENTENCE(comm, symcomm_send(near_end, 3, SYMCOMM_INT64, 1, comm, stream), bad,
                       "past the end of the address space");
  EXPECT_COMM_SENTENCE(comm, symcomm_put(live, 0, 0, near_end, 17, stream), bad,
                       "past the end of the address space");
  EXPECT_COMM_SENTENCE(comm, symcomm_mem_alloc(comm, 0, &p), bad, "0 bytes");
  EXPECT_COMM_SENTENCE(comm, symcomm_mem_free(comm, buf), bad, "is not a buffer from symcomm_mem_alloc");
  EXPECT_COMM_SENTENCE(comm, symcomm_window_alloc(comm, 0, &w), bad, "a window of 0 bytes");
  EXPECT_COMM_SENTENCE(comm, symcomm_window_register(comm, NULL, 64, &w), bad, "ptr is NULL");
  EXPECT_COMM_SENTENCE(comm, symcomm_window_register_flags(comm, NULL, 64, SYMCOMM_WINDOW_ANY_OFFSET, &w),
                       bad, "ptr is NULL");
  EXPECT_COMM_SENTENCE(comm, symcomm_window_register_flags(comm, buf, 64, SYMCOMM_WINDOW_ANY_OFFSET | 0x6, &w),
                       bad, "unknown flags 0x6");
  EXPECT_COMM_SENTENCE(comm, symcomm_stream_create(comm, NULL), bad, "stream is NULL");
  EXPECT_COMM_SENTENCE(comm, symcomm_comm_host_topo(comm, 4, NULL), bad, "topo is NULL");
  EXPECT_COMM_SENTENCE(comm, symcomm_comm_split(comm, -4, 0, NULL), bad, "newcomm is NULL");
  EXPECT_COMM_SENTENCE(comm, symcomm_comm_host_name(comm, 0, (char *)buf, 0), bad, "len is 0");
  TEST_ASSERT(w == NULL && p == NULL, "an output was set by a failed call");
  /* Sizes that cannot be rounded up to whole pages are refused as such,
   * not as whatever the rounding wrapped around to. */
  size_t huge[] = {SIZE_MAX, SIZE_MAX - 4094, SIZE_MAX / 2 + 2};
  for (int i = 0; i < 3; i++) {
    symcomm_result_t r = symcomm_window_alloc(comm, huge[i], &w);
    TEST_ASSERT(r != SYMCOMM_OK && w == NULL, "a window of %zu bytes", huge[i]);
    TEST_ASSERT(!test_contains(symcomm_last_error(comm), " 0 bytes"), "%zu bytes: %s", huge[i],
                symcomm_last_error(comm));
    TEST_ASSERT(r == bad && test_contains(symcomm_last_error(comm), "too large"), "%zu bytes: %s: %s",
                huge[i], symcomm_result_string(r), symcomm_last_error(comm));
  }
  EXPECT_COMM_SENTENCE(comm, symcomm_mem_alloc(comm, SIZE_MAX, &p), bad, "too large");
  TEST_OK(symcomm_window_alloc(comm, 4096, &w)); /* the failures left nothing behind */
  TEST_OK(symcomm_window_free(w));
  /* After an abort, even a call on a live window says so. */
  TEST_OK(symcomm_comm_abort(comm));
  EXPECT_COMM_SENTENCE(comm, symcomm_put(live, 0, 0, buf, 8, stream), SYMCOMM_ERR_ABORTED, "aborted");
  EXPECT_COMM_SENTENCE(comm, symcomm_wait_signal(live, 0, SYMCOMM_CMP_GE, 1, stream), SYMCOMM_ERR_ABORTED,
                       "aborted");
  TEST_OK(symcomm_stream_destroy(stream));
}

/* A one-rank communicator with the variable set to value: refused at init,
 * naming the variable, or made. */
static void expect_env(const char *var, const char *value, symcomm_result_t expected, const char *needle) {
  setenv(var, value, 1);
  symcomm_unique_id_t id;
  symcomm_comm_t comm = NULL;
  double t0 = test_now();
  symcomm_result_t r = symcomm_get_unique_id(&id);
  if (r == SYMCOMM_OK)
    r = symcomm_comm_init(&comm, 1, &id, 0, NULL);
  double dt = test_now() - t0;
  unsetenv(var);
  TEST_ASSERT(r == expected, "%s=%s: %s (%s)", var, value, symcomm_result_string(r), symcomm_last_error(NULL));
  TEST_ASSERT(dt < 5.0, "%s=%s: %.1f s", var, value, dt);
  if (r == SYMCOMM_OK)
    TEST_OK(symcomm_comm_destroy(comm));
  else
    TEST_ASSERT(comm == NULL && test_contains(symcomm_last_error(NULL), needle), "%s=%s: '%s'", var, value,
                symcomm_last_error(NULL));
}

static void test_env_values(void) {
  expect_env("SYMCOMM_TIMEOUT", "0", SYMCOMM_ERR_INVALID_ARGUMENT, "SYMCOMM_TIMEOUT=0: every wait");
  expect_env("SYMCOMM_TIMEOUT", "0.0001", SYMCOMM_ERR_INVALID_ARGUMENT, "SYMCOMM_TIMEOUT=0.0001");
  /* Accepted once, but then no init could finish: its exchanges get half of it. */
  expect_env("SYMCOMM_TIMEOUT", "0.001", SYMCOMM_ERR_INVALID_ARGUMENT, "at least 0.1");
  expect_env("SYMCOMM_TIMEOUT", "0.1", SYMCOMM_OK, "");
  expect_env("SYMCOMM_TIMEOUT", "-3", SYMCOMM_ERR_INVALID_ARGUMENT, "SYMCOMM_TIMEOUT");
  expect_env("SYMCOMM_TIMEOUT", "0.5", SYMCOMM_OK, "");
  expect_env("SYMCOMM_SPIN_US", "-2", SYMCOMM_ERR_INVALID_ARGUMENT, "SYMCOMM_SPIN_US=-2");
  expect_env("SYMCOMM_SPIN_US", "2000000", SYMCOMM_ERR_INVALID_ARGUMENT, "SYMCOMM_SPIN_US=2000000");
  expect_env("SYMCOMM_CHECK", "2", SYMCOMM_ERR_INVALID_ARGUMENT, "SYMCOMM_CHECK=2");
  /* A FIFO nobody writes to: opening it for reading would wait for a writer. */
  char fifo[] = "/tmp/symcomm-test-fifo-XXXXXX";
  TEST_ASSERT(mkdtemp(fifo) != NULL, "%s", strerror(errno));
  char path[sizeof(fifo) + 16];
  snprintf(path, sizeof(path), "%s/topo.xml", fifo);
  TEST_ASSERT(mkfifo(path, 0600) == 0, "%s", strerror(errno));
  alarm(20); /* a hang fails the test here rather than at the suite's limit */
  symcomm_topo_t topo = NULL;
  EXPECT_BAD(symcomm_topo_load(path, &topo), "not a regular file");
  expect_env("SYMCOMM_TOPO_FILE", path, SYMCOMM_ERR_INVALID_ARGUMENT, "not a regular file");
  alarm(0);
  unlink(path);
  rmdir(fifo);
  printf("test_api_args: SYMCOMM_TIMEOUT, SYMCOMM_SPIN_US, SYMCOMM_CHECK and a FIFO topology refused\n");
}

int main(void) {
  /* Library calls. */
  int version = 0;
  TEST_OK(symcomm_get_version(&version));
  TEST_ASSERT(version == SYMCOMM_VERSION);
  EXPECT_BAD(symcomm_get_version(NULL), "version is NULL");
  TEST_ASSERT(strcmp(symcomm_result_string(SYMCOMM_ERR_TIMEOUT), "SYMCOMM_ERR_TIMEOUT") == 0);
  TEST_ASSERT(strcmp(symcomm_result_string(SYMCOMM_OK), "SYMCOMM_OK") == 0);
  TEST_ASSERT(symcomm_result_string((symcomm_result_t)99) != NULL);
  EXPECT_BAD(symcomm_get_unique_id(NULL), "id is NULL");

  /* Init and its config. */
  symcomm_unique_id_t id;
  TEST_OK(symcomm_get_unique_id(&id));
  symcomm_comm_t comm = NULL;
  EXPECT_BAD(symcomm_comm_init(NULL, 1, &id, 0, NULL), "comm is NULL");
  EXPECT_BAD(symcomm_comm_init(&comm, 1, NULL, 0, NULL), "id is NULL");
  EXPECT_BAD(symcomm_comm_init(&comm, 0, &id, 0, NULL), "nranks = 0");
  EXPECT_BAD(symcomm_comm_init(&comm, -3, &id, 0, NULL), "nranks = -3");
  EXPECT_BAD(symcomm_comm_init(&comm, 2, &id, 2, NULL), "rank 2 is not in [0, 2)");
  EXPECT_BAD(symcomm_comm_init(&comm, 2, &id, -1, NULL), "rank -1");
  symcomm_config_t config = SYMCOMM_CONFIG_INITIALIZER;
  config.size = 4;
  EXPECT_BAD(symcomm_comm_init(&comm, 1, &id, 0, &config), "SYMCOMM_CONFIG_INITIALIZER");
  config = (symcomm_config_t)SYMCOMM_CONFIG_INITIALIZER;
  config.timeout_ms = -5;
  EXPECT_BAD(symcomm_comm_init(&comm, 1, &id, 0, &config), "timeout_ms = -5");
  config = (symcomm_config_t)SYMCOMM_CONFIG_INITIALIZER;
  config.device = 1000;
  EXPECT_BAD(symcomm_comm_init(&comm, 1, &id, 0, &config), "config.device = 1000");
  config = (symcomm_config_t)SYMCOMM_CONFIG_INITIALIZER;
  config.max_blocks = 129;
  EXPECT_BAD(symcomm_comm_init(&comm, 1, &id, 0, &config), "config.max_blocks = 129");
  config.max_blocks = -1;
  EXPECT_BAD(symcomm_comm_init(&comm, 1, &id, 0, &config), "config.max_blocks = -1");
  config = (symcomm_config_t)SYMCOMM_CONFIG_INITIALIZER;
  config.backend = "gpu";
  EXPECT_BAD(symcomm_comm_init(&comm, 1, &id, 0, &config), "config.backend = 'gpu'");
  config = (symcomm_config_t)SYMCOMM_CONFIG_INITIALIZER;
  config.version = SYMCOMM_VERSION + 10000;
  TEST_EXPECT_RESULT(symcomm_comm_init(&comm, 1, &id, 0, &config), SYMCOMM_ERR_UNSUPPORTED);
  TEST_ASSERT(comm == NULL, "an output was set by a failed call");

  config = (symcomm_config_t)SYMCOMM_CONFIG_INITIALIZER;
  config.name = "args";
  config.timeout_ms = 20000;
  config.backend = "host";
  TEST_OK(symcomm_comm_init(&comm, 1, &id, 0, &config));
  const char *backend = NULL;
  int device = -2;
  TEST_OK(symcomm_comm_device(comm, &backend, &device));
  TEST_ASSERT(backend != NULL && strcmp(backend, "host") == 0 && device == 0, "%s %d",
              backend ? backend : "(null)", device);
  TEST_OK(symcomm_comm_device(comm, NULL, NULL));

  /* Queries. */
  int x;
  EXPECT_BAD(symcomm_comm_rank(NULL, &x), "communicator is NULL");
  EXPECT_BAD(symcomm_comm_rank(comm, NULL), "output pointer is NULL");
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "output pointer is NULL"),
              "the comm's sentence: %s", symcomm_last_error(comm));
  EXPECT_BAD(symcomm_comm_size(comm, NULL), "NULL");
  EXPECT_BAD(symcomm_comm_local_rank(comm, NULL), "NULL");
  EXPECT_BAD(symcomm_comm_local_size(comm, NULL), "NULL");
  EXPECT_BAD(symcomm_comm_host_count(comm, NULL), "NULL");
  EXPECT_BAD(symcomm_comm_host_index(comm, NULL), "NULL");
  EXPECT_BAD(symcomm_comm_peer_host(comm, 1, &x), "rank 1 is not in [0, 1)");
  EXPECT_BAD(symcomm_comm_peer_world_rank(comm, -1, &x), "rank -1");
  char busid[32];
  EXPECT_BAD(symcomm_comm_peer_busid(comm, 0, busid, 5), "cannot hold a bus id");
  EXPECT_BAD(symcomm_comm_host_name(comm, 3, busid, sizeof(busid)), "host 3 is not in [0, 1)");
  TEST_OK(symcomm_comm_peer_busid(comm, 0, busid, sizeof(busid)));
  TEST_ASSERT(strlen(busid) == 12, "busId '%s'", busid);

  /* Split. */
  symcomm_comm_t sub;
  EXPECT_BAD(symcomm_comm_split(comm, 0, 0, NULL), "newcomm is NULL");
  EXPECT_BAD(symcomm_comm_split(comm, -7, 0, &sub), "color -7 is negative");
  EXPECT_BAD(symcomm_comm_split(NULL, 0, 0, &sub), "communicator is NULL");

  /* Topology. */
  symcomm_topo_t topo;
  EXPECT_BAD(symcomm_topo_load(NULL, &topo), "path is NULL");
  TEST_ASSERT(symcomm_topo_load("/nonexistent/topo.xml", &topo) != SYMCOMM_OK);
  TEST_ASSERT(test_contains(symcomm_last_error(NULL), "/nonexistent/topo.xml"), "%s",
              symcomm_last_error(NULL));
  EXPECT_BAD(symcomm_comm_host_topo(comm, 1, &topo), "host 1 is not in [0, 1)");
  TEST_OK(symcomm_comm_host_topo(comm, 0, &topo));
  symcomm_link_t link;
  EXPECT_BAD(symcomm_topo_link(topo, 0, 1, &link, NULL), "GPU 1 is not in [0, 1)");
  EXPECT_BAD(symcomm_topo_link(topo, 0, 0, NULL, NULL), "NULL");
  EXPECT_BAD(symcomm_topo_gpu_busid(topo, 0, busid, 4), "cannot hold a bus id");
  EXPECT_BAD(symcomm_topo_gpu_count(NULL, &x), "NULL");
  TEST_OK(symcomm_topo_link(topo, 0, 0, &link, NULL));
  TEST_ASSERT(link == SYMCOMM_LINK_SELF);
  TEST_OK(symcomm_topo_free(topo));
  TEST_ASSERT(strcmp(symcomm_topo_class_string(SYMCOMM_TOPO_HYBRID_CUBE_MESH), "HYBRID_CUBE_MESH") == 0);
  TEST_ASSERT(strcmp(symcomm_link_string(SYMCOMM_LINK_PXB), "PXB") == 0);

  /* Each failed call's sentence on the communicator it names. */
  symcomm_comm_t sub2;
  TEST_OK(symcomm_comm_split(comm, 0, 0, &sub2));
  test_comm_sentences(sub2);
  TEST_OK(symcomm_comm_destroy(sub2));
  test_env_values();

  /* Abort, then everything but destroy says ABORTED. */
  TEST_OK(symcomm_comm_abort(comm));
  TEST_OK(symcomm_comm_abort(comm));
  TEST_EXPECT_RESULT(symcomm_comm_split(comm, 0, 0, &sub), SYMCOMM_ERR_ABORTED);
  TEST_OK(symcomm_comm_destroy(comm));
  EXPECT_BAD(symcomm_comm_destroy(NULL), "communicator is NULL");
  printf("test_api_args: all passed\n");
  return 0;
}
