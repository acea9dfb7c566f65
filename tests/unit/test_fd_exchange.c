/* Passing descriptors between the ranks of one host (src/window/fd_exchange.c),
 * with the ranks as threads of this process, a root in this process, and
 * strays that connect to a rank's socket:
 *   - three ranks pass a memfd each; each gets the others' and their numbers
 *   - the same when the pids the ranks reported are not what the kernel says
 *     of their sockets (ranks in different PID namespaces)
 *   - a peer whose socket does not exist here (another network namespace,
 *     simulated by a rank with another secret): each rank gives up after
 *     about two seconds with a sentence that names the likely cause
 *   - a stray that connects and stays silent is dropped after about a second
 *     and does not stop the exchange (which ends when the late rank comes)
 *   - garbage, a short message, a forged header from another process with a
 *     descriptor, and more silent strays than are waited on at once: the
 *     exchange still completes in a few seconds and no descriptor leaks
 *   - a rank that never passes its handles: TIMEOUT after half the timeout,
 *     naming it; an abort ends the wait at once */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "test_util.h"
#include "util/error.h"
#include "window/fd_exchange.h"

#define NR 3
static int pids[NR], local_of[NR], local_rank_to_rank[NR];
static const sc_secret_t secret = {{0x5eed5eedfeedULL, 0xfeedf00dULL}};
/* How the strays find rank 0's socket: as the ranks name it. */
static const sc_comm_view_t stray_view = {.local_rank_to_rank = local_rank_to_rank,
                                          .secret = {{0x5eed5eedfeedULL, 0xfeedf00dULL}}};

typedef struct rank_job {
  int rank;
  sc_root_addr_t root;
  int64_t timeout_ms;
  int abort_fd;
  int delay_ms;   /* between the agreement and passing the handles */
  int hold_ms;    /* with skip_run: how long the listener stays open */
  bool skip_run;  /* agrees, then never passes its handles */
  bool other_secret; /* names its socket, and its peers', as another communicator would */
  sc_result_t open_res, run_res;
  char error[1024];
  sc_fd_bundle_t got[NR];
  double run_seconds;
  uint64_t exchanges;
} rank_job_t;

/* Set by rank 0 once it listens; the strays wait for it. Rank 0 then waits
 * for strays_ready before agreeing, so that the strays are queued first. */
static atomic_int rank0_listens, strays_ready;
static bool wait_for_strays;

static sc_root_addr_t start_root(sc_store_server_t **server) {
  sc_sockaddr_t where, bound;
  int fd;
  TEST_OK(sc_sockaddr_parse("127.0.0.1", 0, &where));
  TEST_OK(sc_socket_listen(&where, &fd, &bound));
  sc_store_server_config_t config = {.only_session = sc_root_session(&secret),
                                     .idle_timeout_ms = 5000};
  TEST_OK(sc_store_server_start(fd, &config, server));
  sc_root_addr_t root = {.addr = bound};
  sc_root_set_secret(&root, &secret);
  return root;
}

/* The name fd_exchange.c gives rank r's socket for exchange seq. */
static socklen_t exchange_address(uint64_t seq, int r, struct sockaddr_un *addr) {
  return sc_fd_exchange_address(&stray_view, seq, r, addr);
}

static void *rank_thread(void *arg) {
  rank_job_t *job = arg;
  sc_bootstrap_t boot;
  TEST_OK(sc_bootstrap_connect(&boot, &job->root, job->rank, NR, 20000, -1));
  sc_comm_view_t view = {.rank = job->rank, .nranks = NR, .local_rank = job->rank,
                         .local_size = NR, .max_local_size = NR, .local_of = local_of,
                         .local_rank_to_rank = local_rank_to_rank, .pids = pids,
                         .secret = secret, .boot = &boot, .abort_fd = job->abort_fd,
                         .timeout_ms = job->timeout_ms};
  if (job->other_secret)
    view.secret.w[1] ^= 1;
  /* What this rank passes: a memfd holding its rank, and two numbers. */
  int memfd = memfd_create("fd-exchange-test", MFD_CLOEXEC);
  TEST_ASSERT(memfd >= 0 && pwrite(memfd, &job->rank, sizeof(int), 0) == sizeof(int));
  sc_fd_bundle_t mine = {.nfds = 1, .fds = {memfd}, .words = {100 + (uint64_t)job->rank, 7}};
  sc_fd_exchange_t x;
  job->open_res = sc_fd_exchange_open(&view, &x);
  TEST_ASSERT(job->open_res == SYMCOMM_OK, "rank %d: %s", job->rank, sc_error_last());
  if (job->rank == 0) {
    atomic_store(&rank0_listens, 1);
    while (wait_for_strays && !atomic_load(&strays_ready))
      usleep(1000);
  }
  TEST_OK(sc_bootstrap_barrier(&boot, "test:listening"));
  job->run_res = SYMCOMM_OK;
  if (job->skip_run) {
    usleep((useconds_t)job->hold_ms * 1000);
  } else {
    usleep((useconds_t)job->delay_ms * 1000);
    double t0 = test_now();
    job->run_res = sc_fd_exchange_run(&x, "test:handles", &mine, job->got);
    job->run_seconds = test_now() - t0;
    snprintf(job->error, sizeof(job->error), "%s", sc_error_last());
  }
  sc_fd_exchange_close(&x);
  close(memfd);
  job->exchanges = view.exchanges;
  sc_bootstrap_close(&boot);
  return NULL;
}

static void run_ranks(rank_job_t *jobs) {
  pthread_t t[NR];
  for (int r = 0; r < NR; r++)
    pthread_create(&t[r], NULL, rank_thread, &jobs[r]);
  for (int r = 0; r < NR; r++)
    pthread_join(t[r], NULL);
}

static void init_jobs(rank_job_t *jobs, sc_root_addr_t root, int64_t timeout_ms) {
  for (int r = 0; r < NR; r++)
    jobs[r] = (rank_job_t){.rank = r, .root = root, .timeout_ms = timeout_ms, .abort_fd = -1};
  atomic_store(&rank0_listens, 0);
  atomic_store(&strays_ready, 0);
  wait_for_strays = false;
}

/* Every rank got every other rank's memfd and numbers; closes them. */
static void check_bundles(rank_job_t *jobs) {
  for (int r = 0; r < NR; r++) {
    TEST_ASSERT(jobs[r].run_res == SYMCOMM_OK, "rank %d: %s", r, jobs[r].error);
    TEST_ASSERT(jobs[r].exchanges == 1, "rank %d counted %llu exchanges", r,
                (unsigned long long)jobs[r].exchanges);
    for (int l = 0; l < NR; l++) {
      const sc_fd_bundle_t *b = &jobs[r].got[l];
      if (l == r) {
        TEST_ASSERT(b->nfds == 0);
        continue;
      }
      TEST_ASSERT(b->nfds == 1 && b->words[0] == 100 + (uint64_t)l && b->words[1] == 7,
                  "rank %d from %d: %d fds, words %llu", r, l, b->nfds,
                  (unsigned long long)b->words[0]);
      int who = -1;
      TEST_ASSERT(pread(b->fds[0], &who, sizeof(who), 0) == sizeof(who) && who == l,
                  "rank %d's fd from rank %d holds %d", r, l, who);
    }
    sc_fd_bundles_close(jobs[r].got, NR);
  }
}

/* Descriptors of the kinds an exchange makes or takes: Unix sockets, memfds
 * and /dev/null (roots, released or not, end in their own time and are not
 * counted). */
static int count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  TEST_ASSERT(d != NULL);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.')
      continue;
    int fd = atoi(e->d_name), domain = 0;
    socklen_t len = sizeof(domain);
    char path[64], target[256] = "";
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    ssize_t k = readlink(path, target, sizeof(target) - 1);
    if (k > 0)
      target[k] = '\0';
    if ((getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_UNIX) ||
        strstr(target, "memfd:") != NULL || strcmp(target, "/dev/null") == 0)
      n++;
  }
  closedir(d);
  return n;
}

static void test_basic(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  rank_job_t jobs[NR];
  init_jobs(jobs, root, 20000);
  int fds = count_fds();
  run_ranks(jobs);
  check_bundles(jobs);
  TEST_ASSERT(count_fds() == fds, "%d descriptors before, %d after", fds, count_fds());
  sc_store_server_release(server);
}

/* ---- pids that do not match what the kernel says of the sockets: in another
 * PID namespace a rank's getpid() is not the pid its peers see */
static void test_pids_do_not_matter(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  rank_job_t jobs[NR];
  init_jobs(jobs, root, 20000);
  for (int r = 0; r < NR; r++)
    pids[r] = 1 + r; /* what three containers' first processes would report */
  run_ranks(jobs);
  check_bundles(jobs);
  for (int r = 0; r < NR; r++)
    pids[r] = (int)getpid();
  sc_store_server_release(server);
}

/* ---- a rank that cannot be reached: its socket is not where its peers look
 * (as for a rank in another network namespace) */
static void test_unreachable_peer(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  rank_job_t jobs[NR];
  init_jobs(jobs, root, 20000);
  jobs[2].other_secret = true;
  int fds = count_fds();
  run_ranks(jobs);
  for (int r = 0; r < NR; r++) {
    TEST_ASSERT(jobs[r].run_res == SYMCOMM_ERR_TIMEOUT, "rank %d: %s (%s)", r,
                symcomm_result_string(jobs[r].run_res), jobs[r].error);
    TEST_ASSERT(test_contains(jobs[r].error, "refused the connection") &&
                    test_contains(jobs[r].error, "network namespace"),
                "rank %d: %s", r, jobs[r].error);
    /* Well before half the timeout (10 s). */
    TEST_ASSERT(jobs[r].run_seconds > 1.5 && jobs[r].run_seconds < 5.0, "rank %d waited %.2f s", r,
                jobs[r].run_seconds);
    for (int l = 0; l < NR; l++)
      TEST_ASSERT(jobs[r].got[l].nfds == 0, "a failed exchange left descriptors");
  }
  TEST_ASSERT(test_contains(jobs[0].error, "rank 2 of this host"), "%s", jobs[0].error);
  TEST_ASSERT(count_fds() == fds, "%d descriptors before, %d after", fds, count_fds());
  sc_store_server_release(server);
}

/* ---- a silent stray */
typedef struct silent_job {
  double connected_at, dropped_at;
  int fd;
} silent_job_t;

static void *silent_stray(void *arg) {
  silent_job_t *s = arg;
  while (!atomic_load(&rank0_listens))
    usleep(1000);
  struct sockaddr_un addr;
  socklen_t len = exchange_address(0, 0, &addr);
  s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  TEST_ASSERT(connect(s->fd, (struct sockaddr *)&addr, len) == 0, "%s", strerror(errno));
  s->connected_at = test_now();
  atomic_store(&strays_ready, 1);
  /* Says nothing; sees when rank 0 hangs up. */
  struct pollfd p = {.fd = s->fd, .events = POLLIN};
  TEST_ASSERT(poll(&p, 1, 10000) == 1, "rank 0 never dropped a silent connection");
  char c;
  TEST_ASSERT(recv(s->fd, &c, 1, 0) == 0);
  s->dropped_at = test_now();
  close(s->fd);
  return NULL;
}

static void test_silent_stray(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  rank_job_t jobs[NR];
  init_jobs(jobs, root, 20000);
  wait_for_strays = true;
  jobs[1].delay_ms = 2500; /* rank 0 waits for rank 1 well past the stray's second */
  silent_job_t s = {0};
  pthread_t t;
  pthread_create(&t, NULL, silent_stray, &s);
  double t0 = test_now();
  run_ranks(jobs);
  double dt = test_now() - t0;
  pthread_join(t, NULL);
  check_bundles(jobs);
  double held = s.dropped_at - s.connected_at;
  TEST_ASSERT(held > 0.5 && held < 2.0, "a silent connection was held %.2f s", held);
  TEST_ASSERT(jobs[0].run_seconds > 2.0 && dt < 6.0,
              "rank 0 passed handles in %.2f s, all in %.2f s", jobs[0].run_seconds, dt);
  sc_store_server_release(server);
}

/* ---- strays of every kind, and more of them than are waited on at once */
#define FLOOD 40

typedef struct flood_job {
  int fds[FLOOD + 3];
  int n;
  pid_t forger;
} flood_job_t;

static int stray_connect(void) {
  struct sockaddr_un addr;
  socklen_t len = exchange_address(0, 0, &addr);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  TEST_ASSERT(fd >= 0);
  if (connect(fd, (struct sockaddr *)&addr, len) != 0) {
    close(fd); /* the backlog is full: fine */
    return -1;
  }
  return fd;
}

/* What fd_exchange.c sends, claiming to be rank 1, with a token made up
 * (only the communicator's ranks know its secret). */
typedef struct forged_header {
  uint32_t magic;
  int32_t rank, nfds, reserved;
  uint64_t token[2];
  uint64_t words[4];
} forged_header_t;

static void *flood_strays(void *arg) {
  flood_job_t *f = arg;
  while (!atomic_load(&rank0_listens))
    usleep(1000);
  /* A process that is not rank 1 sends rank 1's header with a descriptor. */
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  f->forger = fork();
  if (f->forger == 0) {
    struct sockaddr_un addr;
    socklen_t len = exchange_address(0, 0, &addr);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&addr, len) != 0)
      _exit(1);
    forged_header_t h = {.magic = 0x44464353u, .rank = 1, .nfds = 1, .token = {1, 2},
                         .words = {666}};
    struct iovec iov = {.iov_base = &h, .iov_len = sizeof(h)};
    union {
      struct cmsghdr align;
      char buf[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &devnull, sizeof(int));
    _exit(sendmsg(fd, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(h) ? 0 : 2);
  }
  close(devnull);
  int status = 0;
  TEST_ASSERT(waitpid(f->forger, &status, 0) == f->forger && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0,
              "the forging process failed (status %d)", status);
  /* Garbage, and a message cut short. */
  char junk[sizeof(forged_header_t)];
  memset(junk, 0x5a, sizeof(junk));
  int fd = stray_connect();
  TEST_ASSERT(fd >= 0 && send(fd, junk, sizeof(junk), MSG_NOSIGNAL) == (ssize_t)sizeof(junk));
  f->fds[f->n++] = fd;
  fd = stray_connect();
  TEST_ASSERT(fd >= 0 && send(fd, junk, 10, MSG_NOSIGNAL) == 10);
  close(fd);
  /* Silent ones, until the backlog is full. */
  for (int i = 0; i < FLOOD; i++)
    if ((fd = stray_connect()) >= 0)
      f->fds[f->n++] = fd;
  atomic_store(&strays_ready, 1);
  return NULL;
}

static void test_bad_strays(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  rank_job_t jobs[NR];
  init_jobs(jobs, root, 20000);
  wait_for_strays = true;
  int fds = count_fds();
  flood_job_t f = {.n = 0};
  pthread_t t;
  pthread_create(&t, NULL, flood_strays, &f);
  double t0 = test_now();
  run_ranks(jobs);
  double dt = test_now() - t0;
  pthread_join(t, NULL);
  check_bundles(jobs);
  TEST_ASSERT(f.n > 32, "only %d strays got in", f.n);
  TEST_ASSERT(dt < 6.0, "the exchange took %.2f s with %d strays", dt, f.n);
  for (int i = 0; i < f.n; i++)
    close(f.fds[i]);
  TEST_ASSERT(count_fds() == fds, "%d descriptors before, %d after", fds, count_fds());
  sc_store_server_release(server);
}

/* ---- a rank that never passes its handles */
static void test_timeout(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  rank_job_t jobs[NR];
  init_jobs(jobs, root, 2000);
  jobs[2].skip_run = true;
  jobs[2].hold_ms = 2500;
  int fds = count_fds();
  run_ranks(jobs);
  for (int r = 0; r < 2; r++) {
    TEST_ASSERT(jobs[r].run_res == SYMCOMM_ERR_TIMEOUT, "rank %d: %s (%s)", r,
                symcomm_result_string(jobs[r].run_res), jobs[r].error);
    TEST_ASSERT(test_contains(jobs[r].error, "rank 2") &&
                    test_contains(jobs[r].error, "test:handles"),
                "%s", jobs[r].error);
    /* Half the timeout: the other half is for the caller's next all-gather. */
    TEST_ASSERT(jobs[r].run_seconds > 0.8 && jobs[r].run_seconds < 1.8, "rank %d waited %.2f s", r,
                jobs[r].run_seconds);
    for (int l = 0; l < NR; l++)
      TEST_ASSERT(jobs[r].got[l].nfds == 0, "a failed exchange left descriptors");
  }
  TEST_ASSERT(count_fds() == fds, "%d descriptors before, %d after", fds, count_fds());
  sc_store_server_release(server);
}

static void *abort_later(void *arg) {
  usleep(300 * 1000);
  uint64_t one = 1;
  TEST_ASSERT(write(*(int *)arg, &one, sizeof(one)) == sizeof(one));
  return NULL;
}

static void test_abort(void) {
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  rank_job_t jobs[NR];
  init_jobs(jobs, root, 60000);
  int efd = eventfd(0, EFD_CLOEXEC);
  for (int r = 0; r < NR; r++)
    jobs[r].abort_fd = efd;
  jobs[2].skip_run = true;
  jobs[2].hold_ms = 2000;
  pthread_t t;
  pthread_create(&t, NULL, abort_later, &efd);
  run_ranks(jobs);
  pthread_join(t, NULL);
  for (int r = 0; r < 2; r++) {
    TEST_ASSERT(jobs[r].run_res == SYMCOMM_ERR_ABORTED, "rank %d: %s (%s)", r,
                symcomm_result_string(jobs[r].run_res), jobs[r].error);
    TEST_ASSERT(jobs[r].run_seconds < 1.5, "rank %d took %.2f s to see the abort", r,
                jobs[r].run_seconds);
  }
  close(efd);
  sc_store_server_release(server);
}

/* ---- a squatter: a process of another user that binds a rank's name (as
 * anyone could once that rank's listener is gone) gets no handles */
static void test_squatter_of_another_user(void) {
  if (geteuid() != 0) {
    printf("test_fd_exchange: SKIP squatter of another user: needs root to run a process as "
           "another user\n");
    return;
  }
  int report[2];
  TEST_ASSERT(pipe(report) == 0);
  pid_t squatter = fork();
  if (squatter == 0) {
    close(report[0]);
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
      _exit(2);
    struct sockaddr_un addr;
    socklen_t len = exchange_address(0, 2, &addr); /* rank 2's name, which rank 2 does not use */
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&addr, len) != 0 || listen(l, 16) != 0)
      _exit(3);
    int ready = 1;
    if (write(report[1], &ready, sizeof(ready)) != (ssize_t)sizeof(ready))
      _exit(4);
    /* Counts the descriptors that reach it until the test ends it. */
    int received = 0;
    for (;;) {
      int c = accept(l, NULL, NULL);
      if (c < 0)
        continue;
      char data[256];
      union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * 16)];
      } control;
      struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};
      struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                           .msg_controllen = sizeof(control.buf)};
      struct pollfd p = {.fd = c, .events = POLLIN};
      if (poll(&p, 1, 500) > 0 && recvmsg(c, &msg, 0) > 0)
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm))
          if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            received += (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      close(c);
      if (write(report[1], &received, sizeof(received)) != (ssize_t)sizeof(received))
        _exit(5);
    }
  }
  close(report[1]);
  int ready = 0;
  TEST_ASSERT(read(report[0], &ready, sizeof(ready)) == (ssize_t)sizeof(ready) && ready == 1,
              "the squatter could not bind rank 2's name");
  sc_store_server_t *server;
  sc_root_addr_t root = start_root(&server);
  rank_job_t jobs[NR];
  init_jobs(jobs, root, 20000);
  jobs[2].other_secret = true; /* rank 2 listens elsewhere: its name is the squatter's */
  run_ranks(jobs);
  for (int r = 0; r < 2; r++) {
    TEST_ASSERT(jobs[r].run_res != SYMCOMM_OK, "rank %d passed its handles", r);
    TEST_ASSERT(test_contains(jobs[r].error, "user 65534"), "rank %d: %s", r, jobs[r].error);
  }
  kill(squatter, SIGKILL);
  waitpid(squatter, NULL, 0);
  int received = 0, last = 0;
  while (read(report[0], &last, sizeof(last)) == (ssize_t)sizeof(last))
    received = last;
  close(report[0]);
  TEST_ASSERT(received == 0, "the squatter received %d descriptors", received);
  sc_store_server_release(server);
}

int main(void) {
  for (int r = 0; r < NR; r++) {
    pids[r] = (int)getpid();
    local_of[r] = r;
    local_rank_to_rank[r] = r;
  }
  test_basic();
  test_pids_do_not_matter();
  test_unreachable_peer();
  test_squatter_of_another_user();
  test_silent_stray();
  test_bad_strays();
  test_timeout();
  test_abort();
  printf("test_fd_exchange: passed\n");
  return 0;
}
