/* Jobs that go wrong, each a scenario:  test_bootstrap_faults SCENARIO
 * The parent makes a unique id (the root lives in the parent), starts the
 * ranks as child processes (this program again, "child ..."), and checks that
 * each child saw what it should:
 *   missing    3 ranks expected, 2 start: both TIMEOUT within SYMCOMM_TIMEOUT, naming rank 2
 *   duplicate  rank 1 twice: everyone fails, naming the duplicate
 *   mismatch   ranks disagree on the world size: both fail
 *   garbage    junk connections to the root during init: the job still forms
 *   lost       a rank exits without destroying: the other's next step fails at once
 *   abort      symcomm_comm_abort in one thread ends another thread's wait
 *   failing    a rank fails during init: the others are told its reason */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "test_util.h"

#define MAX_CHILDREN 4

static void id_to_hex(const symcomm_unique_id_t *id, char *hex) {
  for (int i = 0; i < SYMCOMM_UNIQUE_ID_BYTES; i++)
    sprintf(hex + 2 * i, "%02x", (unsigned char)id->internal[i]);
}

static void hex_to_id(const char *hex, symcomm_unique_id_t *id) {
  for (int i = 0; i < SYMCOMM_UNIQUE_ID_BYTES; i++) {
    unsigned v;
    sscanf(hex + 2 * i, "%2x", &v);
    id->internal[i] = (char)v;
  }
}

/* ------------------------------------------------------------ children */

static void expect_failure(symcomm_result_t got, symcomm_result_t want, const char *needle) {
  TEST_ASSERT(got == want, "got %s, expected %s (%s)", symcomm_result_string(got),
              symcomm_result_string(want), symcomm_last_error(NULL));
  TEST_ASSERT(test_contains(symcomm_last_error(NULL), needle), "'%s' not in: %s", needle,
              symcomm_last_error(NULL));
}

typedef struct abort_ctx {
  symcomm_comm_t comm;
  symcomm_result_t result;
  double seconds;
} abort_ctx_t;

static void *split_in_thread(void *arg) {
  abort_ctx_t *ctx = arg;
  symcomm_comm_t out = NULL;
  double t0 = test_now();
  ctx->result = symcomm_comm_split(ctx->comm, 0, 0, &out);
  ctx->seconds = test_now() - t0;
  return NULL;
}

static int child(const char *scenario, int rank, int nranks, const symcomm_unique_id_t *id) {
  symcomm_comm_t comm = NULL;
  if (strcmp(scenario, "failing") == 0 && rank == 1)
    setenv("SYMCOMM_HOSTID", "999", 1); /* refused once rank 1 has joined */
  double t0 = test_now();
  symcomm_result_t res = symcomm_comm_init(&comm, nranks, id, rank, NULL);
  double dt = test_now() - t0;

  if (strcmp(scenario, "missing") == 0) {
    expect_failure(res, SYMCOMM_ERR_TIMEOUT, "never connected to the root: rank 2");
    TEST_ASSERT(dt < 1.0 + 4.0, "timeout of 1 s took %.1f s", dt);
    return 0;
  }
  if (strcmp(scenario, "failing") == 0) {
    if (rank == 1)
      expect_failure(res, SYMCOMM_ERR_INVALID_ARGUMENT, "SYMCOMM_HOSTID=999");
    else
      expect_failure(res, SYMCOMM_ERR_REMOTE, "rank 1 failed: SYMCOMM_HOSTID=999");
    return 0;
  }
  if (strcmp(scenario, "duplicate") == 0 || strcmp(scenario, "mismatch") == 0) {
    const char *needle = scenario[0] == 'd' ? "rank 1 joined twice" : "says the job has";
    if (res == SYMCOMM_OK) {
      /* Joined before the mistake arrived: the next step must fail. */
      symcomm_comm_t out;
      sleep(2); /* well after the duplicate (started 0.3 s later) has come and been refused */
      res = symcomm_comm_split(comm, 0, 0, &out);
      TEST_ASSERT(res != SYMCOMM_OK, "the job went on with %s", needle);
      TEST_ASSERT(test_contains(symcomm_last_error(comm), needle), "'%s' not in: %s", needle,
                  symcomm_last_error(comm));
      symcomm_comm_destroy(comm);
      return 0;
    }
    expect_failure(res, SYMCOMM_ERR_INVALID_USAGE, needle);
    return 0;
  }
  TEST_ASSERT(res == SYMCOMM_OK, "init: %s", symcomm_last_error(NULL));

  if (strcmp(scenario, "garbage") == 0) {
    symcomm_comm_t half;
    TEST_OK(symcomm_comm_split(comm, rank % 2, 0, &half));
    TEST_OK(symcomm_comm_destroy(half));
  } else if (strcmp(scenario, "lost") == 0) {
    if (rank == 1)
      _exit(0); /* no destroy: the root sees the connection drop */
    usleep(300 * 1000);
    symcomm_comm_t out;
    t0 = test_now();
    res = symcomm_comm_split(comm, 0, 0, &out);
    TEST_ASSERT(res == SYMCOMM_ERR_REMOTE, "got %s", symcomm_result_string(res));
    TEST_ASSERT(test_contains(symcomm_last_error(comm), "rank 1"), "%s", symcomm_last_error(comm));
    TEST_ASSERT(test_now() - t0 < 5.0, "noticed after %.1f s", test_now() - t0);
  } else if (strcmp(scenario, "abort") == 0) {
    if (rank == 0) {
      abort_ctx_t ctx = {.comm = comm};
      pthread_t t;
      pthread_create(&t, NULL, split_in_thread, &ctx);
      usleep(300 * 1000);
      TEST_OK(symcomm_comm_abort(comm));
      pthread_join(t, NULL);
      TEST_ASSERT(ctx.result == SYMCOMM_ERR_ABORTED, "waiting thread got %s",
                  symcomm_result_string(ctx.result));
      TEST_ASSERT(ctx.seconds < 2.0, "abort took %.1f s to end the wait", ctx.seconds);
      symcomm_comm_t out;
      TEST_EXPECT_RESULT(symcomm_comm_split(comm, 0, 0, &out), SYMCOMM_ERR_ABORTED);
    } else {
      sleep(1); /* rank 0 has aborted meanwhile: this split must fail fast */
      symcomm_comm_t out;
      t0 = test_now();
      res = symcomm_comm_split(comm, 0, 0, &out);
      TEST_ASSERT(res == SYMCOMM_ERR_REMOTE, "got %s", symcomm_result_string(res));
      TEST_ASSERT(test_now() - t0 < 5.0);
    }
  } else {
    fprintf(stderr, "unknown scenario %s\n", scenario);
    return 2;
  }
  TEST_OK(symcomm_comm_destroy(comm));
  return 0;
}

/* ------------------------------------------------------------ parent */

static pid_t spawn(const char *self, const char *scenario, int rank, int nranks, const char *hex) {
  pid_t pid = fork();
  TEST_ASSERT(pid >= 0);
  if (pid == 0) {
    char r[16], n[16];
    snprintf(r, sizeof(r), "%d", rank);
    snprintf(n, sizeof(n), "%d", nranks);
    execl(self, self, "child", scenario, r, n, hex, (char *)NULL);
    _exit(127);
  }
  return pid;
}

/* A port that was free a moment ago, for a root at a known address. */
static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(addr);
  TEST_ASSERT(bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0);
  TEST_ASSERT(getsockname(fd, (struct sockaddr *)&addr, &len) == 0);
  close(fd);
  return ntohs(addr.sin_port);
}

/* Connections a confused client or a port scanner might make. */
static void send_garbage(int port) {
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  const char *junk[] = {"GET / HTTP/1.1\r\n\r\n", "SYMCgarbage-after-the-magic-xxxxxxxxxxxxxxxxx", ""};
  for (int i = 0; i < 3; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    TEST_ASSERT(connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0);
    if (junk[i][0] != '\0')
      TEST_ASSERT(write(fd, junk[i], strlen(junk[i])) > 0);
    close(fd);
  }
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "child") == 0) {
    symcomm_unique_id_t id;
    hex_to_id(argv[5], &id);
    return child(argv[2], atoi(argv[3]), atoi(argv[4]), &id);
  }
  if (argc != 2) {
    fprintf(stderr, "usage: test_bootstrap_faults missing|duplicate|mismatch|garbage|lost|abort|failing\n");
    return 2;
  }
  const char *scenario = argv[1];
  /* Bad ids are refused before anything happens. */
  symcomm_unique_id_t id;
  memset(&id, 0x5a, sizeof(id));
  symcomm_comm_t comm;
  TEST_EXPECT_RESULT(symcomm_comm_init(&comm, 2, &id, 0, NULL), SYMCOMM_ERR_INVALID_ARGUMENT);

  setenv("SYMCOMM_TIMEOUT", strcmp(scenario, "missing") == 0 ? "1" : "30", 1);
  /* The garbage scenario also puts the root where SYMCOMM_ADDR says. */
  int port = strcmp(scenario, "garbage") == 0 ? free_port() : 0;
  if (port != 0) {
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    setenv("SYMCOMM_ADDR", addr, 1);
  }
  TEST_OK(symcomm_get_unique_id(&id));
  unsetenv("SYMCOMM_ADDR");
  char hex[2 * SYMCOMM_UNIQUE_ID_BYTES + 1];
  id_to_hex(&id, hex);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  TEST_ASSERT(n > 0);
  self[n] = '\0';

  struct { int rank, nranks, delay_ms; } plan[MAX_CHILDREN];
  int count = 0;
  if (strcmp(scenario, "missing") == 0) {
    plan[count++] = (typeof(plan[0])){0, 3, 0};
    plan[count++] = (typeof(plan[0])){1, 3, 0};
  } else if (strcmp(scenario, "duplicate") == 0) {
    plan[count++] = (typeof(plan[0])){0, 2, 0};
    plan[count++] = (typeof(plan[0])){1, 2, 0};
    plan[count++] = (typeof(plan[0])){1, 2, 300};
  } else if (strcmp(scenario, "mismatch") == 0) {
    plan[count++] = (typeof(plan[0])){0, 2, 0};
    plan[count++] = (typeof(plan[0])){1, 3, 0};
  } else {
    for (int r = 0; r < 4; r++)
      plan[count++] = (typeof(plan[0])){r, 4, 0};
    if (strcmp(scenario, "lost") == 0 || strcmp(scenario, "abort") == 0 ||
        strcmp(scenario, "failing") == 0)
      count = 2, plan[0].nranks = plan[1].nranks = 2;
  }
  pid_t pids[MAX_CHILDREN];
  for (int i = 0; i < count; i++) {
    if (plan[i].delay_ms > 0)
      usleep((useconds_t)plan[i].delay_ms * 1000);
    pids[i] = spawn(self, scenario, plan[i].rank, plan[i].nranks, hex);
    if (i == 0 && port != 0)
      send_garbage(port);
  }
  int failures = 0;
  for (int i = 0; i < count; i++) {
    int status;
    TEST_ASSERT(waitpid(pids[i], &status, 0) == pids[i]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "child %d (rank %d) failed: status 0x%x\n", i, plan[i].rank, status);
      failures++;
    }
  }
  if (failures == 0)
    printf("test_bootstrap_faults %s: passed\n", scenario);
  return failures == 0 ? 0 : 1;
}
