/* Someone who can reach a running job's root, for tests/scripts/
 * test_hostile_root.sh. The root's address is SYMCOMM_ADDR.
 *   hostile_client hello SESSION RANK NRANKS
 *       a stranger's 24-byte hello (SESSION in hex); prints the root's answer;
 *       exits 0 if the root refused it, 1 if it let the stranger in
 *   hostile_client store COUNT
 *       a client that knows the job's key (SYMCOMM_JOB_KEY, SYMCOMM_RANK,
 *       SYMCOMM_WORLD_SIZE as the job's ranks have them) joins the job's next
 *       world communicator before its rank does, SETs COUNT values of 1 MiB,
 *       then waits; prints how many were stored and when the root dropped it
 *   hostile_client flood COUNT FILE
 *       opens COUNT connections that say nothing and holds them until FILE
 *       exists; prints "open N" once they are open (or a SKIP line when this
 *       process cannot have that many descriptors) */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/job.h"
#include "bootstrap/store_client.h"
#include "bootstrap/store_proto.h"
#include "test_util.h"
#include "util/clock.h"
#include "util/socket.h"

static sc_sockaddr_t root_address(void) {
  const char *text = getenv("SYMCOMM_ADDR");
  TEST_ASSERT(text != NULL, "SYMCOMM_ADDR names the root");
  sc_sockaddr_t addr;
  TEST_OK(sc_sockaddr_parse(text, -1, &addr));
  return addr;
}

static int hello(uint64_t session, int rank, int nranks) {
  sc_sockaddr_t addr = root_address();
  int fd;
  TEST_OK(sc_socket_connect(&addr, sc_deadline_after(5000), -1, &fd));
  sc_store_hello_t h = {.magic = SC_STORE_MAGIC, .version = SC_STORE_VERSION,
                        .op = SC_STORE_OP_HELLO, .session = session, .rank = rank,
                        .nranks = nranks};
  TEST_OK(sc_socket_send_all(fd, &h, sizeof(h), sc_deadline_after(5000), -1, "root"));
  sc_store_reply_t reply;
  TEST_OK(sc_socket_recv_all(fd, &reply, sizeof(reply), sc_deadline_after(5000), -1, "root"));
  char text[SC_STORE_MAX_TEXT + 1] = "";
  TEST_ASSERT(reply.text_len <= SC_STORE_MAX_TEXT);
  TEST_OK(sc_socket_recv_all(fd, text, reply.text_len, sc_deadline_after(5000), -1, "root"));
  text[reply.text_len] = '\0';
  printf("hello %016llx as rank %d of %d: %s %s\n", (unsigned long long)session, rank, nranks,
         reply.status == SYMCOMM_OK ? "ACCEPTED" : "refused:", text);
  close(fd);
  return reply.status == SYMCOMM_OK ? 1 : 0;
}

static int store(int count) {
  sc_launch_env_t env;
  TEST_OK(sc_launch_env_detect(&env));
  sc_root_addr_t root = {.addr = root_address()};
  sc_secret_t secret;
  sc_job_world_secret(&env.job_key, 1, &secret);
  sc_root_set_secret(&root, &secret);
  sc_store_client_t c;
  TEST_OK(sc_store_client_connect(&c, &root.addr, root.session, env.rank, env.size, 10000, -1));
  enum { MIB = 1 << 20 };
  char *value = malloc(MIB);
  TEST_ASSERT(value != NULL);
  memset(value, 0x77, MIB);
  int stored = 0, refused = 0;
  for (int i = 0; i < count; i++) {
    char key[32];
    snprintf(key, sizeof(key), "junk#%d", i);
    sc_result_t r = sc_store_set(&c, key, value, MIB);
    if (r == SYMCOMM_OK)
      stored++;
    else if (r == SYMCOMM_ERR_INVALID_USAGE)
      refused++;
    else
      TEST_ASSERT(0, "SET %d: %s", i, sc_error_last());
  }
  free(value);
  printf("store: %d of %d values of 1 MiB stored, %d refused\n", stored, count, refused);
  fflush(stdout);
  /* Then nothing: the root should drop this connection. */
  double t0 = test_now();
  struct pollfd p = {.fd = c.fd, .events = POLLIN};
  int n = poll(&p, 1, 30000);
  char byte;
  if (n == 1 && recv(c.fd, &byte, 1, 0) == 0)
    printf("store: the root dropped the idle connection after %.1f s\n", test_now() - t0);
  else
    printf("store: the root kept the idle connection for %.1f s\n", test_now() - t0);
  close(c.fd);
  return 0;
}

static int flood(int count, const char *until) {
  struct rlimit lim;
  getrlimit(RLIMIT_NOFILE, &lim);
  rlim_t need = (rlim_t)count + 64;
  if (lim.rlim_cur < need) {
    lim.rlim_cur = need;
    if (lim.rlim_max < need)
      lim.rlim_max = need; /* allowed for root */
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
      printf("SKIP: flood: this process may not have %d descriptors: %s\n", (int)need,
             strerror(errno));
      return 0;
    }
  }
  sc_sockaddr_t addr = root_address();
  int *fds = malloc(sizeof(int) * (size_t)count);
  TEST_ASSERT(fds != NULL);
  for (int i = 0; i < count; i++)
    TEST_OK(sc_socket_connect(&addr, sc_deadline_after(10000), -1, &fds[i]));
  printf("open %d\n", count);
  fflush(stdout);
  for (int i = 0; i < 6000 && access(until, F_OK) != 0; i++)
    usleep(20 * 1000);
  int closed = 0;
  for (int i = 0; i < count; i++) {
    char c;
    closed += recv(fds[i], &c, 1, MSG_DONTWAIT | MSG_PEEK) == 0;
    close(fds[i]);
  }
  printf("flood: the root had closed %d of %d connections\n", closed, count);
  free(fds);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc == 5 && strcmp(argv[1], "hello") == 0)
    return hello(strtoull(argv[2], NULL, 16), atoi(argv[3]), atoi(argv[4]));
  if (argc == 3 && strcmp(argv[1], "store") == 0)
    return store(atoi(argv[2]));
  if (argc == 4 && strcmp(argv[1], "flood") == 0)
    return flood(atoi(argv[2]), argv[3]);
  fprintf(stderr, "usage: hostile_client hello SESSION RANK NRANKS | store COUNT | flood COUNT FILE\n");
  return 2;
}
