/*
 * tcp_raw: what plain TCP moves between two ranks of a symcomm-run job, the
 * yardstick for symcomm's send/recv between hosts (issue 10): the same two
 * ranks (two simulated hosts, network namespaces under --netns), the same
 * number of sockets per direction, the same pattern as symcomm-perf's
 * sendrecv (each rank sends BYTES to the other while it receives BYTES from
 * it), the same timing (average of the timed iterations, the slower rank's).
 *
 *   symcomm-run -n 2 --hosts 2 --netns -- build/bench/tcp_raw [-s SOCKETS] [-b BYTES]
 *       [-n ITERS] [-w WARMUP] [--json FILE] [--command STR]
 *
 * symcomm is used only to meet: each rank listens on the interface
 * SYMCOMM_SOCKET_IFNAME names, and the ranks all-gather their addresses
 * (on the simulated backend, which can read malloc'ed memory: the program sets
 * SYMCOMM_BACKEND=host unless it is set). Each direction then has SOCKETS
 * connections; each connector first writes its socket's index, so that
 * socket s carries the same share on both sides whatever order accept()
 * returns them in. A sender thread per socket writes its share
 * (BYTES / SOCKETS, in 512 KiB writes) while a receiver thread per socket
 * reads; the iteration ends on each rank when its last send and receive have
 * ended. Every received byte is checked against a pattern of (iteration,
 * sender, position). Rank 0 prints one line and, with --json, the row of
 * bench/RESULTS_FORMAT.md (engine "tcp", op "sendrecv", busbw = algbw).
 * Exit status 0, 1 when a byte was wrong, 2 on any failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../tools/common/results_json.h"
#include "symcomm.h"

#define CHECK(call)                                                                          \
  do {                                                                                       \
    symcomm_result_t r_ = (call);                                                            \
    if (r_ != SYMCOMM_OK) {                                                                  \
      fprintf(stderr, "tcp_raw: %s: %s\n", #call, symcomm_last_error(NULL));                 \
      exit(2);                                                                               \
    }                                                                                        \
  } while (0)
#define DIE(...)                                                                             \
  do {                                                                                       \
    fprintf(stderr, "tcp_raw: " __VA_ARGS__);                                                \
    exit(2);                                                                                 \
  } while (0)

enum { MAX_SOCKETS = 64, PIECE = 512 << 10 };

typedef struct worker {
  int fd;
  bool sending;
  unsigned char *buf;
  size_t bytes; /* this socket's share */
} worker_t;

static unsigned char pattern(int iter, int from, size_t pos) {
  return (unsigned char)(pos * 131u + (size_t)iter * 17u + (size_t)from * 71u + (pos >> 12));
}

/* Sends (in PIECE writes) or receives all of buf, or dies. */
static void move_all(int fd, bool sending, void *buf, size_t len) {
  for (size_t off = 0; off < len;) {
    size_t n = sending && len - off > PIECE ? PIECE : len - off;
    ssize_t k = sending ? send(fd, (char *)buf + off, n, MSG_NOSIGNAL) : recv(fd, (char *)buf + off, n, 0);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      DIE("%s failed: %s\n", sending ? "send" : "recv",
          k < 0 ? strerror(errno) : sending ? "wrote nothing" : "the peer closed the connection");
    off += (size_t)k;
  }
}

static void *worker_main(void *arg) {
  worker_t *w = arg;
  move_all(w->fd, w->sending, w->buf, w->bytes);
  return NULL;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The IPv4 address of SYMCOMM_SOCKET_IFNAME (loopback without it). */
static struct in_addr my_address(void) {
  const char *want = getenv("SYMCOMM_SOCKET_IFNAME");
  struct in_addr found = {htonl(INADDR_LOOPBACK)};
  struct ifaddrs *list = NULL;
  if (want == NULL || getifaddrs(&list) != 0)
    return found;
  for (struct ifaddrs *i = list; i != NULL; i = i->ifa_next)
    if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET && strcmp(i->ifa_name, want) == 0)
      found = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
  freeifaddrs(list);
  return found;
}

static size_t parse_size(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (*end == 'K' || *end == 'k') v *= 1024;
  if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
  if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
  return (size_t)v;
}

/* Collective: holds until both ranks called it. */
static void barrier(symcomm_comm_t comm, symcomm_stream_t stream, unsigned char *byte) {
  CHECK(symcomm_allreduce(byte, byte, 1, SYMCOMM_UINT8, SYMCOMM_MAX, comm, stream));
  CHECK(symcomm_stream_synchronize(stream));
}

typedef struct result {
  size_t bytes;
  double time_us, gbs;
  long long wrong;
} result_t;

static void result_row(const void *ctx, size_t i, results_row_t *row) {
  (void)i;
  const result_t *r = ctx;
  *row = (results_row_t){.op = "sendrecv", .dtype = "uint8", .redop = "none", .root = -1,
                         .bytes = r->bytes, .count = r->bytes, .inplace = 0, .time_us = r->time_us,
                         .algbw_gbs = r->gbs, .busbw_gbs = r->gbs, .wrong = r->wrong};
}

int main(int argc, char **argv) {
  int sockets = 4, iters = 5, warmup = 1;
  size_t bytes = 256u << 20;
  const char *json = NULL, *command = NULL;
  static const struct option longs[] = {{"json", required_argument, NULL, 'J'},
                                        {"command", required_argument, NULL, 'C'},
                                        {NULL, 0, NULL, 0}};
  for (int opt; (opt = getopt_long(argc, argv, "s:b:n:w:", longs, NULL)) != -1;) {
    if (opt == 's') sockets = atoi(optarg);
    else if (opt == 'b') bytes = parse_size(optarg);
    else if (opt == 'n') iters = atoi(optarg);
    else if (opt == 'w') warmup = atoi(optarg);
    else if (opt == 'J') json = optarg;
    else if (opt == 'C') command = optarg;
    else DIE("usage: tcp_raw [-s SOCKETS] [-b BYTES] [-n ITERS] [-w WARMUP] [--json FILE] [--command STR]\n");
  }
  if (sockets < 1 || sockets > MAX_SOCKETS || bytes < (size_t)sockets || iters < 1 || warmup < 0)
    DIE("-s wants 1..%d sockets, -b at least one byte per socket, -n at least 1, -w at least 0\n",
        MAX_SOCKETS);
  /* The meeting buffers are malloc'ed: only the simulated backend reads those. */
  setenv("SYMCOMM_BACKEND", "host", 0);
  symcomm_comm_t comm;
  CHECK(symcomm_init_from_env(&comm, NULL));
  int rank, size;
  CHECK(symcomm_comm_rank(comm, &rank));
  CHECK(symcomm_comm_size(comm, &size));
  if (size != 2)
    DIE("runs on 2 ranks, not %d\n", size);
  int peer = 1 - rank;
  symcomm_stream_t stream;
  CHECK(symcomm_stream_create(comm, &stream));

  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr = my_address(), .sin_port = 0};
  socklen_t len = sizeof(me);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&me, sizeof(me)) != 0 || listen(lfd, MAX_SOCKETS) != 0 ||
      getsockname(lfd, (struct sockaddr *)&me, &len) != 0)
    DIE("cannot listen: %s\n", strerror(errno));
  struct sockaddr_in *mine = malloc(sizeof(me)), *all = calloc(2, sizeof(*all));
  unsigned char *token = calloc(1, 1);
  double *t = malloc(sizeof(double)), *both = malloc(2 * sizeof(double));
  if (mine == NULL || all == NULL || token == NULL || t == NULL || both == NULL)
    DIE("no memory\n");
  *mine = me;
  CHECK(symcomm_allgather(mine, all, sizeof(me), SYMCOMM_UINT8, comm, stream));
  CHECK(symcomm_stream_synchronize(stream));

  /* Rank 0 connects its sockets first, then accepts; rank 1 the other way. */
  int out_fd[MAX_SOCKETS], in_fd[MAX_SOCKETS];
  for (int s = 0; s < sockets; s++)
    in_fd[s] = -1;
  for (int pass = 0; pass < 2; pass++) {
    bool connecting = (pass == 0) == (rank == 0);
    for (int s = 0; s < sockets; s++) {
      if (connecting) {
        out_fd[s] = socket(AF_INET, SOCK_STREAM, 0);
        if (out_fd[s] < 0 || connect(out_fd[s], (struct sockaddr *)&all[peer], sizeof(all[peer])) != 0)
          DIE("connect failed: %s\n", strerror(errno));
        uint32_t index = (uint32_t)s;
        move_all(out_fd[s], true, &index, sizeof(index));
      } else {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
          DIE("accept failed: %s\n", strerror(errno));
        uint32_t index;
        move_all(fd, false, &index, sizeof(index));
        if (index >= (uint32_t)sockets || in_fd[index] >= 0)
          DIE("a connection says it is socket %u of %d\n", index, sockets);
        in_fd[index] = fd;
      }
    }
  }
  for (int s = 0; s < sockets; s++) {
    int one = 1;
    setsockopt(out_fd[s], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  unsigned char *sendbuf = malloc(bytes), *recvbuf = malloc(bytes);
  if (sendbuf == NULL || recvbuf == NULL)
    DIE("no memory for %zu bytes\n", bytes);
  double total = 0;
  long long wrong = 0;
  for (int it = 0; it < warmup + iters; it++) {
    for (size_t i = 0; i < bytes; i++)
      sendbuf[i] = pattern(it, rank, i);
    memset(recvbuf, 0, bytes);
    barrier(comm, stream, token);
    worker_t ws[MAX_SOCKETS], wr[MAX_SOCKETS];
    pthread_t ts[MAX_SOCKETS], tr[MAX_SOCKETS];
    double t0 = now_us();
    for (int s = 0; s < sockets; s++) {
      size_t first = bytes * (size_t)s / (size_t)sockets, end = bytes * (size_t)(s + 1) / (size_t)sockets;
      ws[s] = (worker_t){.fd = out_fd[s], .sending = true, .buf = sendbuf + first, .bytes = end - first};
      wr[s] = (worker_t){.fd = in_fd[s], .sending = false, .buf = recvbuf + first, .bytes = end - first};
      if (pthread_create(&ts[s], NULL, worker_main, &ws[s]) != 0 ||
          pthread_create(&tr[s], NULL, worker_main, &wr[s]) != 0)
        DIE("cannot start a thread\n");
    }
    for (int s = 0; s < sockets; s++) {
      pthread_join(ts[s], NULL);
      pthread_join(tr[s], NULL);
    }
    double dt = now_us() - t0;
    for (size_t i = 0; i < bytes; i++)
      wrong += recvbuf[i] != pattern(it, peer, i);
    /* The slower rank's time. */
    *t = dt;
    CHECK(symcomm_allgather(t, both, 1, SYMCOMM_FLOAT64, comm, stream));
    CHECK(symcomm_stream_synchronize(stream));
    if (it >= warmup)
      total += both[0] > both[1] ? both[0] : both[1];
  }
  /* Both ranks' wrong bytes, on rank 0. */
  *t = (double)wrong;
  CHECK(symcomm_allgather(t, both, 1, SYMCOMM_FLOAT64, comm, stream));
  CHECK(symcomm_stream_synchronize(stream));
  result_t r = {.bytes = bytes, .time_us = total / iters, .wrong = (long long)(both[0] + both[1])};
  r.gbs = (double)bytes / r.time_us / 1e3;
  int rc = r.wrong == 0 ? 0 : 1;
  if (rank == 0) {
    printf("tcp_raw: %d sockets, %zu bytes each way, %d iterations after %d: %.1f us, %.3f GB/s, "
           "%lld bytes wrong\n",
           sockets, bytes, iters, warmup, r.time_us, r.gbs, r.wrong);
    if (json != NULL) {
      char machine[768], *joined = command ? NULL : results_join_command("", argc, argv);
      results_describe_machine(machine, sizeof(machine), "no GPU");
      results_file_t file = {.program = "tcp_raw", .tool = "tcp-baseline", .engine = "tcp",
                             .machine = machine, .command = command ? command : joined ? joined : argv[0],
                             .nranks = 2, .nhosts = 2};
      if (results_write_json(json, &file, 1, result_row, &r) != 0)
        rc = 2;
      free(joined);
    }
  }
  for (int s = 0; s < sockets; s++) {
    close(out_fd[s]);
    close(in_fd[s]);
  }
  close(lfd);
  free(sendbuf);
  free(recvbuf);
  free(mine);
  free(all);
  free(token);
  free(t);
  free(both);
  CHECK(symcomm_stream_destroy(stream));
  CHECK(symcomm_comm_destroy(comm));
  return rc;
}
