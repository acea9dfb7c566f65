/* Watches on the root (bootstrap/store_proto.h): a rank's second connection,
 * answered only when its session fails, with the rank that failure names and
 * why; and a rank's own FAIL on its watch, which fails the session for all.
 * The server runs in this process; clients are plain store clients. */
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/root.h"
#include "bootstrap/store_client.h"
#include "bootstrap/store_watch.h"
#include "test_util.h"

#define SESSION 0x77a7c4ULL

static sc_root_addr_t start_root(sc_store_server_t **server) {
  sc_sockaddr_t where;
  TEST_OK(sc_sockaddr_parse("127.0.0.1", 0, &where));
  int fd;
  sc_sockaddr_t bound;
  TEST_OK(sc_socket_listen(&where, &fd, &bound));
  sc_store_server_config_t config = {.only_session = SESSION, .idle_timeout_ms = 5000};
  TEST_OK(sc_store_server_start(fd, &config, server));
  return (sc_root_addr_t){.addr = bound, .session = SESSION};
}

/* The next news on a watch, waiting at most 5 s for it: 1 news, -1 closed. */
static int next_news(sc_store_watch_t *w, sc_store_watch_news_t *news) {
  double until = test_now() + 5;
  for (;;) {
    int got = sc_store_watch_read(w, news);
    if (got != 0)
      return got;
    TEST_ASSERT(test_now() < until, "no news on the watch within 5 s");
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    poll(&p, 1, 100);
  }
}

static void open_watch(sc_root_addr_t root, int rank, int nranks, sc_store_watch_t *w) {
  int fd = -1;
  TEST_OK(sc_store_client_watch(&root.addr, SESSION, rank, nranks, 10000, -1, &fd));
  sc_store_watch_init(w, fd);
  sc_store_watch_news_t news;
  TEST_ASSERT(sc_store_watch_read(w, &news) == 0, "news on a watch of a job that works");
}

/* Ranks 0..n-1 join, each with its watch. */
static void join_with_watches(sc_root_addr_t root, int n, sc_store_client_t *c, sc_store_watch_t *w) {
  for (int r = 0; r < n; r++) {
    TEST_OK(sc_store_client_connect(&c[r], &root.addr, SESSION, r, n, 10000, -1));
    open_watch(root, r, n, &w[r]);
  }
}

/* A rank whose connection drops: every watch hears it named, as lost. */
static void test_lost_rank(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  sc_store_client_t c[3];
  sc_store_watch_t w[3];
  join_with_watches(root, 3, c, w);
  usleep(100 * 1000);
  sc_store_watch_news_t news;
  TEST_ASSERT(sc_store_watch_read(&w[0], &news) == 0, "news before anything failed");
  /* Rank 2 dies: its connections close without a word. */
  close(c[2].fd);
  sc_store_watch_close(&w[2]);
  double t0 = test_now();
  for (int r = 0; r < 2; r++) {
    TEST_ASSERT(next_news(&w[r], &news) == 1);
    TEST_ASSERT(news.rank == 2 && news.cause == SC_STORE_CAUSE_LOST && news.result == SYMCOMM_ERR_REMOTE,
                "rank %d, cause %d, %s", news.rank, news.cause, symcomm_result_string(news.result));
    TEST_ASSERT(test_contains(news.text, "rank 2"), "%s", news.text);
  }
  TEST_ASSERT(test_now() - t0 < 2.0, "the watches heard after %.2f s", test_now() - t0);
  /* After its news, the root closes the watch. */
  TEST_ASSERT(next_news(&w[0], &news) == -1);
  for (int r = 0; r < 2; r++) {
    sc_store_watch_close(&w[r]);
    sc_store_client_close(&c[r]);
  }
  sc_store_server_release(server);
}

/* A rank says on its watch that it aborted, or that it failed: the session
 * fails naming it, with its own sentence; the requests of the session fail too. */
static void test_told(sc_store_cause_t cause) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  sc_store_client_t c[2];
  sc_store_watch_t w[2];
  join_with_watches(root, 2, c, w);
  const char *why = cause == SC_STORE_CAUSE_ABORTED ? "symcomm_comm_abort" : "waited 3.0 s for rank 0";
  TEST_ASSERT(sc_store_watch_tell(&w[1], cause, why));
  sc_store_watch_news_t news;
  for (int r = 0; r < 2; r++) {
    TEST_ASSERT(next_news(&w[r], &news) == 1);
    TEST_ASSERT(news.rank == 1 && news.cause == cause, "rank %d cause %d", news.rank, news.cause);
    TEST_ASSERT(strcmp(news.text, why) == 0, "the watch got '%s'", news.text);
  }
  int x = 0, all[2];
  TEST_EXPECT_RESULT(sc_store_gather(&c[0], "after#0", &x, sizeof(x), all), SYMCOMM_ERR_REMOTE);
  TEST_ASSERT(test_contains(sc_error_last(), cause == SC_STORE_CAUSE_ABORTED ? "rank 1 aborted"
                                                                             : "rank 1 failed: waited"),
              "%s", sc_error_last());
  TEST_ASSERT(c[0].session_failed, "the reply did not say that the session failed");
  /* Rank 1 hears its own failure, naming itself once. */
  TEST_EXPECT_RESULT(sc_store_gather(&c[1], "after#0", &x, sizeof(x), all), SYMCOMM_ERR_REMOTE);
  TEST_ASSERT(strncmp(sc_error_last(), "rank 1 failed: waited", 21) == 0 ||
                  strncmp(sc_error_last(), "rank 1 aborted", 14) == 0,
              "%s", sc_error_last());
  /* A watch opened after the failure hears it at once. */
  sc_store_client_t late;
  TEST_ASSERT(sc_store_client_connect(&late, &root.addr, SESSION, 0, 2, 10000, -1) != SYMCOMM_OK,
              "joined a failed session");
  for (int r = 0; r < 2; r++) {
    sc_store_watch_close(&w[r]);
    sc_store_client_close(&c[r]);
  }
  sc_store_server_release(server);
}

/* A watch for a rank that has not joined, or a second one, is refused; a
 * rank that leaves on purpose fails nothing: the other watches hear that it
 * left (once, with result OK), also one opened afterwards, and nothing more. */
static void test_refusals_and_leaving(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  int fd = -1;
  sc_store_client_t c[2];
  TEST_OK(sc_store_client_connect(&c[0], &root.addr, SESSION, 0, 2, 10000, -1));
  TEST_EXPECT_RESULT(sc_store_client_watch(&root.addr, SESSION, 1, 2, 10000, -1, &fd),
                     SYMCOMM_ERR_INVALID_USAGE);
  sc_store_watch_t w[2];
  open_watch(root, 0, 2, &w[0]);
  TEST_EXPECT_RESULT(sc_store_client_watch(&root.addr, SESSION, 0, 2, 10000, -1, &fd),
                     SYMCOMM_ERR_INVALID_USAGE);
  TEST_OK(sc_store_client_connect(&c[1], &root.addr, SESSION, 1, 2, 10000, -1));
  open_watch(root, 1, 2, &w[1]);
  /* Rank 1 leaves: watch closed first, then BYE (as destroy does). */
  sc_store_watch_close(&w[1]);
  sc_store_client_close(&c[1]);
  usleep(200 * 1000);
  sc_store_watch_news_t news;
  TEST_ASSERT(sc_store_watch_read(&w[0], &news) == 1, "no news after a rank left on purpose");
  TEST_ASSERT(news.cause == SC_STORE_CAUSE_LEFT && news.rank == 1 && news.result == SYMCOMM_OK,
              "cause %d rank %d result %d", (int)news.cause, news.rank, (int)news.result);
  TEST_ASSERT(sc_store_watch_read(&w[0], &news) == 0, "more news after a rank left on purpose");
  /* Rank 0's watch again, after the departure: it hears of it too. */
  sc_store_watch_close(&w[0]);
  usleep(100 * 1000);
  TEST_OK(sc_store_client_watch(&root.addr, SESSION, 0, 2, 10000, -1, &fd));
  sc_store_watch_init(&w[0], fd);
  usleep(200 * 1000);
  TEST_ASSERT(sc_store_watch_read(&w[0], &news) == 1 && news.cause == SC_STORE_CAUSE_LEFT &&
                  news.rank == 1,
              "a later watch did not hear that rank 1 left");
  TEST_ASSERT(sc_store_watch_read(&w[0], &news) == 0, "more news on the later watch");
  sc_store_watch_close(&w[0]);
  sc_store_client_close(&c[0]);
  sc_store_server_release(server);
}

int main(void) {
  test_lost_rank();
  test_told(SC_STORE_CAUSE_ABORTED);
  test_told(SC_STORE_CAUSE_FAILED);
  test_refusals_and_leaving();
  printf("test_store_watch: all passed\n");
  return 0;
}
