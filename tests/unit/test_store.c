/* The root's store protocol, with a server in this process and clients in
 * threads or raw sockets: set/get/wait/add, gather, broadcast, and every way a
 * job can go wrong (missing, duplicate, lost or departed ranks, garbage), and
 * what strangers and runaway clients cannot do (fail a job, hold sessions,
 * memory or descriptors). */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootstrap/root.h"
#include "bootstrap/store_client.h"
#include "bootstrap/store_proto.h"
#include "test_util.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/wakeup.h"

#define SESSION 0x1234abcdULL

/* A root serving the sessions `config` says (SESSION alone by default). */
static sc_root_addr_t start_root_with(sc_store_server_config_t config, sc_store_server_t **server) {
  sc_sockaddr_t where;
  TEST_OK(sc_sockaddr_parse("127.0.0.1", 0, &where));
  int fd;
  sc_sockaddr_t bound;
  TEST_OK(sc_socket_listen(&where, &fd, &bound));
  if (config.only_session == 0 && config.serves == NULL)
    config.only_session = SESSION;
  if (config.idle_timeout_ms == 0)
    config.idle_timeout_ms = 5000;
  TEST_OK(sc_store_server_start(fd, &config, server));
  sc_root_addr_t root = {.addr = bound, .session = SESSION};
  return root;
}

static sc_root_addr_t start_root(uint64_t only_session, sc_store_server_t **server) {
  return start_root_with((sc_store_server_config_t){.only_session = only_session}, server);
}

typedef struct client_job {
  sc_root_addr_t root;
  int rank, nranks;
  int64_t timeout_ms;
  int abort_fd;
  void (*body)(struct client_job *job, sc_store_client_t *c);
  sc_result_t result; /* of body's last checked call */
  char error[1024];
} client_job_t;

static void *client_thread(void *arg) {
  client_job_t *job = arg;
  sc_store_client_t c;
  job->result = sc_store_client_connect(&c, &job->root.addr, job->root.session, job->rank,
                                        job->nranks, job->timeout_ms, job->abort_fd);
  if (job->result == SYMCOMM_OK) {
    job->body(job, &c);
    sc_store_client_close(&c);
  }
  snprintf(job->error, sizeof(job->error), "%s", sc_error_last());
  return NULL;
}

/* Runs body on ranks [0, started) of an nranks job, each in a thread. */
static void run_clients(sc_root_addr_t root, int nranks, int started, int64_t timeout_ms,
                        void (*body)(client_job_t *, sc_store_client_t *), client_job_t *jobs) {
  pthread_t threads[16];
  for (int r = 0; r < started; r++) {
    jobs[r] = (client_job_t){.root = root, .rank = r, .nranks = nranks, .timeout_ms = timeout_ms,
                             .abort_fd = -1, .body = body};
    pthread_create(&threads[r], NULL, client_thread, &jobs[r]);
  }
  for (int r = 0; r < started; r++)
    pthread_join(threads[r], NULL);
}

/* ---- set / get / wait / add */
static void body_kv(client_job_t *job, sc_store_client_t *c) {
  if (job->rank == 0) {
    TEST_OK(sc_store_set(c, "greeting", "hello", 5));
  } else {
    void *v = NULL;
    size_t len = 0;
    TEST_OK(sc_store_get(c, "greeting", &v, &len)); /* waits for rank 0 */
    TEST_ASSERT(len == 5 && memcmp(v, "hello", 5) == 0);
    free(v);
  }
  TEST_OK(sc_store_wait(c, "greeting"));
  int64_t after = 0;
  TEST_OK(sc_store_add(c, "counter", 10, &after));
  TEST_ASSERT(after == 10 || after == 20, "counter is %lld", (long long)after);
  job->result = SYMCOMM_OK;
}

/* ---- gather and broadcast */
static void body_collectives(client_job_t *job, sc_store_client_t *c) {
  int mine[2] = {job->rank, job->rank * 100};
  int all[2 * 4];
  TEST_OK(sc_store_gather(c, "g#0", mine, sizeof(mine), all));
  for (int r = 0; r < 4; r++)
    TEST_ASSERT(all[2 * r] == r && all[2 * r + 1] == r * 100);
  TEST_OK(sc_store_gather(c, "barrier#1", NULL, 0, NULL));
  char buf[32] = "";
  if (job->rank == 2)
    snprintf(buf, sizeof(buf), "from rank two");
  TEST_OK(sc_store_bcast(c, "b#2", 2, buf, sizeof(buf)));
  TEST_ASSERT(strcmp(buf, "from rank two") == 0, "got '%s'", buf);
  job->result = SYMCOMM_OK;
}

/* ---- a gather that one rank never reaches */
static void body_gather_only(client_job_t *job, sc_store_client_t *c) {
  int x = job->rank;
  int all[8];
  job->result = sc_store_gather(c, "init:hosts#0", &x, sizeof(x), all);
}

static void test_basic(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  client_job_t jobs[4];
  run_clients(root, 2, 2, 5000, body_kv, jobs);
  for (int r = 0; r < 2; r++)
    TEST_ASSERT(jobs[r].result == SYMCOMM_OK, "rank %d: %s", r, jobs[r].error);
  sc_store_server_release(server);

  root = start_root(SESSION, &server);
  run_clients(root, 4, 4, 5000, body_collectives, jobs);
  for (int r = 0; r < 4; r++)
    TEST_ASSERT(jobs[r].result == SYMCOMM_OK, "rank %d: %s", r, jobs[r].error);
  sc_store_server_release(server);
}

static void test_missing_rank_times_out(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  client_job_t jobs[3];
  double t0 = test_now();
  run_clients(root, 3, 2, 500, body_gather_only, jobs);
  double dt = test_now() - t0;
  for (int r = 0; r < 2; r++) {
    TEST_ASSERT(jobs[r].result == SYMCOMM_ERR_TIMEOUT, "rank %d: %s", r,
                symcomm_result_string(jobs[r].result));
    TEST_ASSERT(test_contains(jobs[r].error, "missing 2"), "sentence: %s", jobs[r].error);
    TEST_ASSERT(test_contains(jobs[r].error, "never connected to the root: rank 2"), "sentence: %s",
                jobs[r].error);
    TEST_ASSERT(test_contains(jobs[r].error, "init:hosts#0"), "sentence: %s", jobs[r].error);
  }
  TEST_ASSERT(dt < 3.0, "timeout of 0.5 s took %.2f s", dt);
  sc_store_server_release(server);
}

/* Connects a raw socket to the root. */
static int raw_connect(sc_root_addr_t root) {
  int fd;
  TEST_OK(sc_socket_connect(&root.addr, sc_deadline_after(2000), -1, &fd));
  return fd;
}

static void raw_hello(int fd, uint64_t session, int rank, int nranks, uint16_t version,
                      sc_store_reply_t *reply, char *text, size_t text_len) {
  sc_store_hello_t hello = {.magic = SC_STORE_MAGIC, .version = version, .op = SC_STORE_OP_HELLO,
                            .session = session, .rank = rank, .nranks = nranks};
  TEST_OK(sc_socket_send_all(fd, &hello, sizeof(hello), sc_deadline_after(2000), -1, "root"));
  TEST_OK(sc_socket_recv_all(fd, reply, sizeof(*reply), sc_deadline_after(2000), -1, "root"));
  TEST_ASSERT(reply->text_len < text_len);
  TEST_OK(sc_socket_recv_all(fd, text, reply->text_len, sc_deadline_after(2000), -1, "root"));
  text[reply->text_len] = '\0';
}

/* Reads until the root closes the connection; false if it stays open 2 s. */
static int closed_by_root(int fd) {
  char buf[256];
  int64_t deadline = sc_deadline_after(2000);
  sc_result_t r;
  while ((r = sc_socket_recv_all(fd, buf, 1, deadline, -1, "root")) == SYMCOMM_OK) {
  }
  return r == SYMCOMM_ERR_REMOTE;
}

static void test_garbage_and_bad_hellos(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  /* Not our protocol at all: closed without a word. */
  int fd = raw_connect(root);
  const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  TEST_OK(sc_socket_send_all(fd, http, sizeof(http) - 1, sc_deadline_after(1000), -1, "root"));
  TEST_ASSERT(closed_by_root(fd), "garbage was not closed");
  close(fd);
  /* Our magic, another protocol version: told why, then closed. */
  fd = raw_connect(root);
  sc_store_reply_t reply;
  char text[1100];
  raw_hello(fd, SESSION, 0, 2, SC_STORE_VERSION + 1, &reply, text, sizeof(text));
  TEST_ASSERT(reply.status == SYMCOMM_ERR_INVALID_USAGE && test_contains(text, "protocol version"),
              "reply %u '%s'", reply.status, text);
  TEST_ASSERT(closed_by_root(fd));
  close(fd);
  /* Another job's id: refused, without naming the session the root serves. */
  fd = raw_connect(root);
  raw_hello(fd, SESSION + 1, 0, 2, SC_STORE_VERSION, &reply, text, sizeof(text));
  TEST_ASSERT(reply.status == SYMCOMM_ERR_INVALID_USAGE && test_contains(text, "does not serve"),
              "reply %u '%s'", reply.status, text);
  char served[32];
  snprintf(served, sizeof(served), "%016llx", (unsigned long long)SESSION);
  TEST_ASSERT(!test_contains(text, served), "the refusal hands out the session: %s", text);
  close(fd);
  /* A rank that cannot be. */
  fd = raw_connect(root);
  raw_hello(fd, SESSION, 5, 2, SC_STORE_VERSION, &reply, text, sizeof(text));
  TEST_ASSERT(reply.status == SYMCOMM_ERR_INVALID_ARGUMENT, "reply %u '%s'", reply.status, text);
  close(fd);
  /* A client that sends half a hello and idles does not stop the job. */
  int idle = raw_connect(root);
  TEST_OK(sc_socket_send_all(idle, "SYMC", 4, sc_deadline_after(1000), -1, "root"));

  client_job_t jobs[4];
  run_clients(root, 4, 4, 5000, body_collectives, jobs);
  for (int r = 0; r < 4; r++)
    TEST_ASSERT(jobs[r].result == SYMCOMM_OK, "rank %d after garbage: %s", r, jobs[r].error);
  close(idle);
  sc_store_server_release(server);
}

static void test_duplicate_and_mismatch(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  sc_store_client_t a, b;
  TEST_OK(sc_store_client_connect(&a, &root.addr, SESSION, 0, 2, 2000, -1));
  TEST_EXPECT_RESULT(sc_store_client_connect(&b, &root.addr, SESSION, 0, 2, 2000, -1),
                     SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(sc_error_last(), "rank 0 joined twice"), "%s", sc_error_last());
  /* The job is failed for everyone, with the same explanation. */
  int x = 0, all[2];
  TEST_EXPECT_RESULT(sc_store_gather(&a, "g#0", &x, sizeof(x), all), SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(sc_error_last(), "joined twice"), "%s", sc_error_last());
  sc_store_client_close(&a);
  sc_store_server_release(server);

  root = start_root(SESSION, &server);
  TEST_OK(sc_store_client_connect(&a, &root.addr, SESSION, 0, 2, 2000, -1));
  TEST_EXPECT_RESULT(sc_store_client_connect(&b, &root.addr, SESSION, 1, 3, 2000, -1),
                     SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(sc_error_last(), "says the job has 3 ranks"), "%s", sc_error_last());
  sc_store_client_close(&a);
  sc_store_server_release(server);
}

/* ---- a rank that leaves (BYE) or is lost while another waits for it */
typedef struct leaver {
  sc_root_addr_t root;
  int polite;
} leaver_t;

static void *leave_soon(void *arg) {
  leaver_t *l = arg;
  sc_store_client_t c;
  TEST_OK(sc_store_client_connect(&c, &l->root.addr, SESSION, 1, 2, 5000, -1));
  usleep(200 * 1000);
  if (l->polite) {
    sc_store_client_close(&c);
  } else {
    close(c.fd); /* as if the process died: no goodbye */
  }
  return NULL;
}

static void test_departures(void) {
  for (int polite = 0; polite <= 1; polite++) {
    sc_store_server_t *server;
    sc_root_addr_t root = start_root(SESSION, &server);
    sc_store_client_t a;
    TEST_OK(sc_store_client_connect(&a, &root.addr, SESSION, 0, 2, 10000, -1));
    leaver_t l = {.root = root, .polite = polite};
    pthread_t t;
    pthread_create(&t, NULL, leave_soon, &l);
    int x = 0, all[2];
    double t0 = test_now();
    TEST_EXPECT_RESULT(sc_store_gather(&a, "step#0", &x, sizeof(x), all), SYMCOMM_ERR_REMOTE);
    TEST_ASSERT(test_now() - t0 < 5.0, "took %.1f s to notice", test_now() - t0);
    const char *expect = polite ? "rank 1 destroyed its communicator before taking part in 'step#0'"
                                : "rank 1 (";
    TEST_ASSERT(test_contains(sc_error_last(), expect), "%s", sc_error_last());
    if (!polite)
      TEST_ASSERT(test_contains(sc_error_last(), "lost its connection"), "%s", sc_error_last());
    pthread_join(t, NULL);
    sc_store_client_close(&a);
    sc_store_server_release(server);
  }
}

/* ---- abort and owner-declared failure */
static void *signal_later(void *arg) {
  usleep(200 * 1000);
  sc_wakeup_signal(arg);
  return NULL;
}

typedef struct failer {
  sc_store_server_t *server;
} failer_t;

static void *fail_later(void *arg) {
  failer_t *f = arg;
  usleep(200 * 1000);
  sc_store_server_fail_session(f->server, SESSION, SYMCOMM_ERR_REMOTE, "rank 0 aborted the job");
  return NULL;
}

static void test_abort_and_fail(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  sc_wakeup_t wake;
  TEST_OK(sc_wakeup_open(&wake));
  sc_store_client_t a;
  TEST_OK(sc_store_client_connect(&a, &root.addr, SESSION, 0, 2, 30000, wake.fd));
  pthread_t t;
  pthread_create(&t, NULL, signal_later, &wake);
  int x = 0, all[2];
  double t0 = test_now();
  TEST_EXPECT_RESULT(sc_store_gather(&a, "wait#0", &x, sizeof(x), all), SYMCOMM_ERR_ABORTED);
  TEST_ASSERT(test_now() - t0 < 2.0);
  pthread_join(t, NULL);
  /* After an interrupted request the connection refuses further use. */
  TEST_EXPECT_RESULT(sc_store_set(&a, "k", "v", 1), SYMCOMM_ERR_INVALID_USAGE);
  sc_store_client_close(&a);
  sc_wakeup_close(&wake);

  sc_store_server_release(server);

  root = start_root(SESSION, &server);
  TEST_OK(sc_store_client_connect(&a, &root.addr, SESSION, 0, 2, 30000, -1));
  failer_t f = {.server = server};
  pthread_create(&t, NULL, fail_later, &f);
  TEST_EXPECT_RESULT(sc_store_gather(&a, "wait#0", &x, sizeof(x), all), SYMCOMM_ERR_REMOTE);
  TEST_ASSERT(test_contains(sc_error_last(), "rank 0 aborted the job"), "%s", sc_error_last());
  pthread_join(t, NULL);
  sc_store_client_close(&a);
  sc_store_server_release(server);
}

static void test_disagreement(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  sc_store_client_t a, b;
  TEST_OK(sc_store_client_connect(&a, &root.addr, SESSION, 0, 2, 5000, -1));
  TEST_OK(sc_store_client_connect(&b, &root.addr, SESSION, 1, 2, 5000, -1));
  /* Ranks giving different sizes to one gather is a bug the root names. */
  char big[16] = {0}, all[32];
  sc_store_request_t req = {.magic = SC_STORE_MAGIC, .op = SC_STORE_OP_GATHER, .key_len = 3,
                            .value_len = 8, .timeout_ms = 5000};
  TEST_OK(sc_socket_send_all(b.fd, &req, sizeof(req), sc_deadline_after(1000), -1, "root"));
  TEST_OK(sc_socket_send_all(b.fd, "g#0", 3, sc_deadline_after(1000), -1, "root"));
  TEST_OK(sc_socket_send_all(b.fd, big, 8, sc_deadline_after(1000), -1, "root"));
  TEST_EXPECT_RESULT(sc_store_gather(&a, "g#0", big, 16, all), SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(sc_error_last(), "ranks disagree on 'g#0'"), "%s", sc_error_last());
  sc_store_client_close(&a);
  sc_store_client_close(&b);
  sc_store_server_release(server);
}

static void test_counter_overflow(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  sc_store_client_t a;
  TEST_OK(sc_store_client_connect(&a, &root.addr, SESSION, 0, 1, 2000, -1));
  int64_t v = 0;
  TEST_OK(sc_store_add(&a, "c", INT64_MAX, &v));
  TEST_EXPECT_RESULT(sc_store_add(&a, "c", 1, &v), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "overflows"), "%s", sc_error_last());
  TEST_OK(sc_store_add(&a, "c", -5, &v)); /* the stream is still in step */
  TEST_ASSERT(v == INT64_MAX - 5);
  sc_store_client_close(&a);
  sc_store_server_release(server);
}

/* ---- what strangers (clients that do not know a session's id) can do */

/* Rank 0 waits in a gather for rank 1; a stranger's hello claiming rank 1 of
 * a guessed session is refused, and the job goes on when rank 1 comes. */
static void *gather_as_rank0(void *arg) {
  client_job_t *job = arg;
  sc_store_client_t c;
  TEST_OK(sc_store_client_connect(&c, &job->root.addr, SESSION, 0, 2, job->timeout_ms, -1));
  int x = 10, all[2];
  job->result = sc_store_gather(&c, "init:hosts#0", &x, sizeof(x), all);
  if (job->result == SYMCOMM_OK)
    TEST_ASSERT(all[0] == 10 && all[1] == 11, "gathered %d %d", all[0], all[1]);
  snprintf(job->error, sizeof(job->error), "%s", sc_error_last());
  sc_store_client_close(&c);
  return NULL;
}

static void join_as_rank1_and_gather(sc_root_addr_t root) {
  sc_store_client_t c;
  TEST_OK(sc_store_client_connect(&c, &root.addr, SESSION, 1, 2, 5000, -1));
  int x = 11, all[2];
  TEST_OK(sc_store_gather(&c, "init:hosts#0", &x, sizeof(x), all));
  sc_store_client_close(&c);
}

static void test_stranger_cannot_fail_a_job(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  client_job_t job = {.root = root, .timeout_ms = 10000};
  pthread_t t;
  pthread_create(&t, NULL, gather_as_rank0, &job);
  usleep(200 * 1000);
  sc_store_reply_t reply;
  char text[1100];
  /* The session id as the old launcher root numbered it, and a random one. */
  uint64_t guesses[] = {0xa8c7f832281a39c5ULL, 0x0123456789abcdefULL};
  for (int i = 0; i < 2; i++) {
    int fd = raw_connect(root);
    raw_hello(fd, guesses[i], 1, 2, SC_STORE_VERSION, &reply, text, sizeof(text));
    TEST_ASSERT(reply.status == SYMCOMM_ERR_INVALID_USAGE && test_contains(text, "does not serve"),
                "reply %u '%s'", reply.status, text);
    TEST_ASSERT(closed_by_root(fd));
    close(fd);
  }
  join_as_rank1_and_gather(root);
  pthread_join(t, NULL);
  TEST_ASSERT(job.result == SYMCOMM_OK, "the job failed after a stranger's hello: %s", job.error);
  sc_store_server_release(server);
}

/* A root that decides which new sessions it serves (a launcher's root). */
static bool serves_even(void *ctx, uint64_t session) {
  (*(int *)ctx)++;
  return session % 2 == 0;
}

static void test_serves(void) {
  int asked = 0;
  sc_store_server_t *server;
  sc_root_addr_t root = start_root_with(
      (sc_store_server_config_t){.serves = serves_even, .serves_ctx = &asked}, &server);
  sc_store_client_t a, b, c;
  TEST_OK(sc_store_client_connect(&a, &root.addr, 1000, 0, 2, 2000, -1));
  TEST_OK(sc_store_client_connect(&b, &root.addr, 1000, 1, 2, 2000, -1));
  TEST_ASSERT(asked == 1, "asked %d times about a session it already had", asked);
  TEST_EXPECT_RESULT(sc_store_client_connect(&c, &root.addr, 1001, 0, 2, 2000, -1),
                     SYMCOMM_ERR_INVALID_USAGE);
  TEST_ASSERT(test_contains(sc_error_last(), "does not serve session 00000000000003e9"), "%s",
              sc_error_last());
  TEST_OK(sc_store_set(&a, "k", "v", 1));
  TEST_OK(sc_store_wait(&b, "k"));
  sc_store_client_close(&a);
  sc_store_client_close(&b);
  sc_store_server_release(server);
}

/* Under AddressSanitizer freed memory waits in a quarantine (256 MiB by
 * default) before reuse; a small one keeps this process's memory a measure
 * of what the root holds. (Read only by ASan builds.) */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "quarantine_size_mb=4"; }

/* Resident memory of this process, in bytes. */
static long long rss_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  TEST_ASSERT(f != NULL);
  char line[256];
  long long kb = -1;
  while (fgets(line, sizeof(line), f) != NULL)
    if (sscanf(line, "VmRSS: %lld kB", &kb) == 1)
      break;
  fclose(f);
  return kb * 1024;
}

/* A client that stores without end: refused past the session's limit, its
 * connection still in step, and the root's process does not grow. */
static void test_kv_limit(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  sc_store_client_t a;
  TEST_OK(sc_store_client_connect(&a, &root.addr, SESSION, 0, 1, 5000, -1));
  enum { MIB = 1 << 20, SETS = 1000 };
  char *value = malloc(MIB);
  TEST_ASSERT(value != NULL);
  memset(value, 0x5a, MIB);
  long long rss0 = rss_bytes();
  int stored = 0, refused = 0;
  for (int i = 0; i < SETS; i++) {
    char key[32];
    snprintf(key, sizeof(key), "big#%d", i);
    sc_result_t r = sc_store_set(&a, key, value, MIB);
    if (r == SYMCOMM_OK) {
      TEST_ASSERT(refused == 0, "SET %d was stored after one was refused", i);
      stored++;
      continue;
    }
    TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE && test_contains(sc_error_last(), "limit of"), "%s",
                sc_error_last());
    refused++;
  }
  long long grown = rss_bytes() - rss0;
  TEST_ASSERT(stored == (int)(SC_STORE_MAX_SESSION_KV / MIB) - 1, "%d values of 1 MiB stored",
              stored);
  /* Still in step: reads, and replacing a value within the limit. */
  void *v = NULL;
  size_t len = 0;
  TEST_OK(sc_store_get(&a, "big#0", &v, &len));
  TEST_ASSERT(len == MIB && ((char *)v)[MIB - 1] == 0x5a);
  free(v);
  TEST_OK(sc_store_set(&a, "big#0", value, MIB / 2));
  TEST_OK(sc_store_set(&a, "big#0", value, MIB));
  printf("test_store: %d SETs of 1 MiB: %d stored, %d refused; resident memory grew by %.1f MiB\n",
         SETS, stored, refused, (double)grown / MIB);
#if defined(__SANITIZE_THREAD__)
  /* ThreadSanitizer's shadow memory grows with every byte touched: here the
   * count of values stored above is the bound that is checked. */
  printf("test_store: resident memory not checked under ThreadSanitizer\n");
#else
  TEST_ASSERT(grown < 48LL * MIB, "the process grew by %lld MiB", grown / MIB);
#endif
  free(value);
  sc_store_client_close(&a);
  sc_store_server_release(server);
}

static int count_open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  TEST_ASSERT(d != NULL);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* Many connections that never say hello: the root keeps a bounded number
 * (its process keeps its descriptors) and a job still forms among them. */
static void test_silent_flood(void) {
  enum { FLOOD = 300 };
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  int base = count_open_fds();
  int fds[FLOOD];
  for (int i = 0; i < FLOOD; i++)
    fds[i] = raw_connect(root);
  /* The root accepts them all and closes all but the newest few. */
  int closed = 0;
  for (int tries = 0; tries < 200 && closed < FLOOD - SC_STORE_MAX_UNGREETED; tries++) {
    usleep(10 * 1000);
    closed = 0;
    for (int i = 0; i < FLOOD; i++) {
      char c;
      closed += recv(fds[i], &c, 1, MSG_DONTWAIT | MSG_PEEK) == 0;
    }
  }
  TEST_ASSERT(closed >= FLOOD - SC_STORE_MAX_UNGREETED, "the root kept %d silent connections",
              FLOOD - closed);
  int held = count_open_fds() - base - FLOOD;
  TEST_ASSERT(held <= SC_STORE_MAX_UNGREETED + 4, "the root holds %d descriptors", held);
  client_job_t jobs[4];
  run_clients(root, 4, 4, 5000, body_collectives, jobs);
  for (int r = 0; r < 4; r++)
    TEST_ASSERT(jobs[r].result == SYMCOMM_OK, "rank %d among silent connections: %s", r,
                jobs[r].error);
  for (int i = 0; i < FLOOD; i++)
    close(fds[i]);
  sc_store_server_release(server);
}

static void *barrier_in_thread(void *arg) {
  TEST_OK(sc_store_gather(arg, "init:hosts#0", NULL, 0, NULL));
  return NULL;
}

/* A hello, then nothing, before the session's first all-gather: the root
 * drops it and the rank's place is free again. Once an all-gather has
 * completed, idle connections stay (a job between two steps). */
static void test_forming_idle(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root_with(
      (sc_store_server_config_t){.only_session = SESSION, .forming_idle_ms = 500}, &server);
  client_job_t job = {.root = root, .timeout_ms = 10000};
  pthread_t t;
  pthread_create(&t, NULL, gather_as_rank0, &job);
  usleep(100 * 1000);
  int fd = raw_connect(root);
  sc_store_reply_t reply;
  char text[1100];
  raw_hello(fd, SESSION, 1, 2, SC_STORE_VERSION, &reply, text, sizeof(text));
  TEST_ASSERT(reply.status == SYMCOMM_OK, "reply %u '%s'", reply.status, text);
  double t0 = test_now();
  TEST_ASSERT(closed_by_root(fd), "an idle rank in a forming session was kept");
  double held = test_now() - t0;
  TEST_ASSERT(held > 0.3 && held < 1.5, "dropped after %.2f s", held);
  close(fd);
  join_as_rank1_and_gather(root);
  pthread_join(t, NULL);
  TEST_ASSERT(job.result == SYMCOMM_OK, "rank 0: %s", job.error);

  /* Formed: both idle longer than the limit, then still connected. */
  sc_store_client_t a, b;
  uint64_t formed = SESSION + 2;
  sc_store_server_release(server);
  root = start_root_with(
      (sc_store_server_config_t){.only_session = formed, .forming_idle_ms = 300}, &server);
  TEST_OK(sc_store_client_connect(&a, &root.addr, formed, 0, 2, 5000, -1));
  TEST_OK(sc_store_client_connect(&b, &root.addr, formed, 1, 2, 5000, -1));
  pthread_create(&t, NULL, barrier_in_thread, &a);
  TEST_OK(sc_store_gather(&b, "init:hosts#0", NULL, 0, NULL));
  pthread_join(t, NULL);
  usleep(1000 * 1000);
  TEST_OK(sc_store_set(&a, "k", "v", 1));
  TEST_OK(sc_store_wait(&b, "k"));
  sc_store_client_close(&a);
  sc_store_client_close(&b);
  sc_store_server_release(server);
}

/* A root that drops the first connections unanswered, as a flooded root may
 * drop a rank's connection before its hello is read: the rank says hello
 * again on a new connection and joins. */
typedef struct dropper {
  int listen_fd;
  int dropped;
  sc_store_server_t *server;
} dropper_t;

static void *drop_then_serve(void *arg) {
  dropper_t *d = arg;
  for (; d->dropped < 3; d->dropped++) {
    int fd = accept(d->listen_fd, NULL, NULL);
    TEST_ASSERT(fd >= 0);
    close(fd);
  }
  sc_store_server_config_t config = {.only_session = SESSION, .idle_timeout_ms = 5000};
  TEST_OK(sc_store_server_start(d->listen_fd, &config, &d->server));
  return NULL;
}

static void test_hello_dropped(void) {
  sc_sockaddr_t where, bound;
  TEST_OK(sc_sockaddr_parse("127.0.0.1", 0, &where));
  dropper_t d = {.listen_fd = -1};
  TEST_OK(sc_socket_listen(&where, &d.listen_fd, &bound));
  pthread_t t;
  pthread_create(&t, NULL, drop_then_serve, &d);
  sc_store_client_t a;
  TEST_OK(sc_store_client_connect(&a, &bound, SESSION, 0, 1, 5000, -1));
  pthread_join(t, NULL);
  TEST_ASSERT(d.dropped == 3);
  TEST_OK(sc_store_set(&a, "k", "v", 1));
  sc_store_client_close(&a);
  sc_store_server_release(d.server);
}

/* CPU seconds this process used, all threads. */
static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

/* A root must sleep, not spin: when it cannot accept (no descriptors left),
 * and when it waits, released and unjoined, past its idle time with a
 * connection that never says hello. */
static void test_no_spinning(void) {
  struct rlimit saved;
  getrlimit(RLIMIT_NOFILE, &saved);
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(SESSION, &server);
  pid_t child = fork();
  TEST_ASSERT(child >= 0);
  if (child == 0) {
    /* Many connections from another process, so that the root runs out. */
    int fds[64];
    for (int i = 0; i < 64; i++)
      fds[i] = -1, sc_socket_connect(&root.addr, sc_deadline_after(2000), -1, &fds[i]);
    sleep(2);
    _exit(0);
  }
  /* Leave the root only a few descriptors more than it has now. */
  int probe = dup(0);
  struct rlimit tight = {.rlim_cur = (rlim_t)probe + 4, .rlim_max = saved.rlim_max};
  close(probe);
  setrlimit(RLIMIT_NOFILE, &tight);
  usleep(300 * 1000);
  double c0 = cpu_seconds(), t0 = test_now();
  usleep(1000 * 1000);
  double busy = (cpu_seconds() - c0) / (test_now() - t0);
  setrlimit(RLIMIT_NOFILE, &saved);
  int status;
  waitpid(child, &status, 0);
  TEST_ASSERT(busy < 0.3, "the root used %.0f%% of a core while out of descriptors", busy * 100);
  sc_store_server_release(server);

  /* Released, nobody joined, idle time over, one silent connection. */
  sc_sockaddr_t where;
  TEST_OK(sc_sockaddr_parse("127.0.0.1", 0, &where));
  int fd;
  sc_sockaddr_t bound;
  TEST_OK(sc_socket_listen(&where, &fd, &bound));
  sc_store_server_config_t config = {.only_session = SESSION, .idle_timeout_ms = 100};
  TEST_OK(sc_store_server_start(fd, &config, &server));
  sc_store_server_release(server);
  int silent;
  TEST_OK(sc_socket_connect(&bound, sc_deadline_after(2000), -1, &silent));
  usleep(300 * 1000);
  c0 = cpu_seconds();
  t0 = test_now();
  usleep(1000 * 1000);
  busy = (cpu_seconds() - c0) / (test_now() - t0);
  TEST_ASSERT(busy < 0.3, "an idle root used %.0f%% of a core", busy * 100);
  close(silent);
}

int main(void) {
  test_counter_overflow();
  test_no_spinning();
  test_basic();
  test_missing_rank_times_out();
  test_garbage_and_bad_hellos();
  test_duplicate_and_mismatch();
  test_departures();
  test_abort_and_fail();
  test_disagreement();
  test_stranger_cannot_fail_a_job();
  test_serves();
  test_kv_limit();
  test_silent_flood();
  test_forming_idle();
  test_hello_dropped();
  printf("test_store: all passed\n");
  return 0;
}
