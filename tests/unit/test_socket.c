/* Addresses (IPv4, IPv6, names), interface filters, the deadlines and
 * abort of connect and receive, and a wakeup that follows a caller's fd
 * (config.abort_fd). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "test_util.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/socket.h"
#include "util/wakeup.h"

static void expect_format(const char *text, int port, const char *expected) {
  sc_sockaddr_t a;
  TEST_OK(sc_sockaddr_parse(text, port, &a));
  char buf[SC_SOCKADDR_TEXT];
  sc_sockaddr_format(&a, buf, sizeof(buf));
  TEST_ASSERT(strcmp(buf, expected) == 0, "'%s' -> '%s', expected '%s'", text, buf, expected);
}

static void expect_parse_error(const char *text, const char *needle) {
  sc_sockaddr_t a;
  TEST_EXPECT_RESULT(sc_sockaddr_parse(text, -1, &a), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), needle), "'%s': %s", text, sc_error_last());
}

static void *signal_later(void *arg) {
  usleep(100 * 1000);
  sc_wakeup_signal(arg);
  return NULL;
}

/* A wakeup that follows a caller's fd wakes with it, until unfollowed; one
 * whose caller closed its fd early does not take that for readable, even once
 * the number is another file's that is. */
static void test_follow(void) {
  sc_wakeup_t w;
  TEST_OK(sc_wakeup_open(&w));
  int theirs = eventfd(0, EFD_CLOEXEC);
  TEST_ASSERT(theirs > 0);
  TEST_OK(sc_wakeup_follow(&w, theirs));
  TEST_ASSERT(!sc_wakeup_is_signalled(&w) && !sc_wakeup_followed_ready(&w));
  uint64_t one = 1;
  TEST_ASSERT(write(theirs, &one, sizeof(one)) == sizeof(one));
  TEST_ASSERT(sc_wakeup_is_signalled(&w) && sc_wakeup_followed_ready(&w));
  sc_wakeup_unfollow(&w);
  TEST_ASSERT(!sc_wakeup_is_signalled(&w) && !sc_wakeup_followed_ready(&w));
  close(theirs);
  sc_wakeup_close(&w);

  TEST_OK(sc_wakeup_open(&w));
  theirs = eventfd(0, EFD_CLOEXEC);
  TEST_OK(sc_wakeup_follow(&w, theirs));
  close(theirs);
  TEST_ASSERT(!sc_wakeup_followed_ready(&w), "a closed fd %d reads as ready", theirs);
  int p[2];
  TEST_ASSERT(pipe(p) == 0 && write(p[1], "x", 1) == 1);
  TEST_ASSERT(!sc_wakeup_followed_ready(&w), "fd %d, now a readable pipe's (%d), reads as ready",
              theirs, p[0]);
  TEST_ASSERT(!sc_wakeup_is_signalled(&w));
  sc_wakeup_signal(&w);
  TEST_ASSERT(sc_wakeup_is_signalled(&w));
  sc_wakeup_unfollow(&w);
  close(p[0]);
  close(p[1]);
  sc_wakeup_close(&w);
}

int main(void) {
  expect_format("127.0.0.1:80", -1, "127.0.0.1:80");
  expect_format("[::1]:29500", -1, "[::1]:29500");
  expect_format("::1", 7, "[::1]:7");
  expect_format("localhost:5", -1, "127.0.0.1:5");
  expect_format("10.1.2.3:1", 99, "10.1.2.3:99");
  expect_parse_error("127.0.0.1", "has no port");
  expect_parse_error("127.0.0.1:0", "bad port");
  expect_parse_error("127.0.0.1:70000", "bad port");
  expect_parse_error("[::1:5", "no closing");
  expect_parse_error("no-such-host.invalid:5", "cannot resolve");

  TEST_ASSERT(sc_socket_ifname_matches("eth,ib", "eth0"));
  TEST_ASSERT(sc_socket_ifname_matches("eth,ib", "ib1"));
  TEST_ASSERT(!sc_socket_ifname_matches("eth,ib", "lo"));
  TEST_ASSERT(sc_socket_ifname_matches("^docker,lo", "eth0"));
  TEST_ASSERT(!sc_socket_ifname_matches("^docker,lo", "docker0"));
  TEST_ASSERT(sc_socket_ifname_matches("=eth0", "eth0"));
  TEST_ASSERT(!sc_socket_ifname_matches("=eth0", "eth01"));
  TEST_ASSERT(!sc_socket_ifname_matches("^=lo", "lo"));

  /* The root's interface: "lo" always exists; a filter that matches nothing
   * is an error naming the filter. */
  sc_sockaddr_t a;
  char ifname[64];
  setenv("SYMCOMM_SOCKET_IFNAME", "=lo", 1);
  TEST_OK(sc_socket_pick_address(&a, ifname, sizeof(ifname)));
  TEST_ASSERT(strcmp(ifname, "lo") == 0);
  setenv("SYMCOMM_SOCKET_FAMILY", "AF_INET6", 1);
  TEST_OK(sc_socket_pick_address(&a, ifname, sizeof(ifname)));
  TEST_ASSERT(a.storage.ss_family == AF_INET6, "IPv6 loopback expected");
  setenv("SYMCOMM_SOCKET_FAMILY", "AF_UNIX", 1);
  TEST_EXPECT_RESULT(sc_socket_pick_address(&a, ifname, sizeof(ifname)), SYMCOMM_ERR_INVALID_ARGUMENT);
  unsetenv("SYMCOMM_SOCKET_FAMILY");
  setenv("SYMCOMM_SOCKET_IFNAME", "nosuchif", 1);
  TEST_EXPECT_RESULT(sc_socket_pick_address(&a, ifname, sizeof(ifname)), SYMCOMM_ERR_SYSTEM);
  TEST_ASSERT(test_contains(sc_error_last(), "nosuchif"), "%s", sc_error_last());
  unsetenv("SYMCOMM_SOCKET_IFNAME");
  TEST_OK(sc_socket_pick_address(&a, ifname, sizeof(ifname)));

  /* Nobody listens: connect retries until the deadline, then TIMEOUT. */
  sc_sockaddr_t closed;
  int fd;
  sc_sockaddr_t bound;
  TEST_OK(sc_sockaddr_parse("127.0.0.1", 0, &closed));
  TEST_OK(sc_socket_listen(&closed, &fd, &bound));
  close(fd); /* the port is now (very likely) closed */
  double t0 = test_now();
  TEST_EXPECT_RESULT(sc_socket_connect(&bound, sc_deadline_after(300), -1, &fd), SYMCOMM_ERR_TIMEOUT);
  double dt = test_now() - t0;
  TEST_ASSERT(dt > 0.2 && dt < 2.0, "connect gave up after %.2f s", dt);

  /* A receive that nothing answers is cut by the abort fd, and by the deadline. */
  int server_fd;
  TEST_OK(sc_socket_listen(&closed, &server_fd, &bound));
  int client_fd;
  TEST_OK(sc_socket_connect(&bound, sc_deadline_after(2000), -1, &client_fd));
  sc_wakeup_t w;
  TEST_OK(sc_wakeup_open(&w));
  pthread_t t;
  pthread_create(&t, NULL, signal_later, &w);
  char byte;
  TEST_EXPECT_RESULT(sc_socket_recv_all(client_fd, &byte, 1, SC_DEADLINE_NEVER, w.fd, "peer"),
                     SYMCOMM_ERR_ABORTED);
  pthread_join(t, NULL);
  TEST_ASSERT(sc_wakeup_is_signalled(&w));
  t0 = test_now();
  TEST_EXPECT_RESULT(sc_socket_recv_all(client_fd, &byte, 1, sc_deadline_after(200), -1, "peer"),
                     SYMCOMM_ERR_TIMEOUT);
  TEST_ASSERT(test_now() - t0 < 1.5);
  close(client_fd);
  close(server_fd);
  sc_wakeup_close(&w);
  test_follow();
  printf("test_socket: all passed\n");
  return 0;
}
