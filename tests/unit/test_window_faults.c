/* Window creation that fails on one rank, and window ids, under symcomm-run
 * (a unit test, linked to the static library, because it reads a window's id,
 * which the public API does not show):
 *   test_window_faults fail     the last rank may open only k more descriptors
 *                               (RLIMIT_NOFILE), for k = 0, 1, 2, ... until a
 *                               window can be made: every step of creation
 *                               that takes one fails in turn. Each time every
 *                               rank fails, promptly, the others naming the
 *                               last rank and its reason; nothing leaks; the
 *                               next window works (ranks stayed in step), and
 *                               a failed creation takes no window id. Both
 *                               window_alloc and window_register.
 *   test_window_faults ids      freed ids are reused, lowest first; 1,100
 *                               register/free cycles keep an id under
 *                               SC_MAX_WINDOWS, and a receive into the last
 *                               window still works.
 * Run it with SYMCOMM_TIMEOUT=20: a failure must not wait for it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "test_util.h"
#include "window/window.h" /* the window's id */

static symcomm_comm_t comm;
static int rank, size, host;

static int count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  TEST_ASSERT(d != NULL);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.')
      n++;
  closedir(d);
  return n;
}

/* Mappings of the host backend's device memory ("/memfd:symcomm-..."). */
static int count_device_maps(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  TEST_ASSERT(f != NULL);
  char line[1024];
  int n = 0;
  while (fgets(line, sizeof(line), f) != NULL)
    if (strstr(line, "memfd:symcomm-") != NULL)
      n++;
  fclose(f);
  return n;
}

/* Lets this process open only k more descriptors: the soft limit becomes
 * the k-th free descriptor number (descriptors are taken lowest first). */
static void allow_new_fds(int k) {
  int fd = 0;
  for (int seen = 0;; fd++)
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF && seen++ == k)
      break;
  struct rlimit lim;
  TEST_ASSERT(getrlimit(RLIMIT_NOFILE, &lim) == 0);
  lim.rlim_cur = (rlim_t)fd;
  TEST_ASSERT(setrlimit(RLIMIT_NOFILE, &lim) == 0, "%s", strerror(errno));
}

static int ranks_on_host_of(int r) {
  int h, n = 0;
  TEST_OK(symcomm_comm_peer_host(comm, r, &h));
  for (int q = 0; q < size; q++) {
    int hq;
    TEST_OK(symcomm_comm_peer_host(comm, q, &hq));
    n += hq == h;
  }
  return n;
}

static void test_one_rank_fails(bool registered) {
  const int victim = size - 1;
  char named[64];
  snprintf(named, sizeof(named), "rank %d could not", victim);
  void *buf = NULL;
  if (registered)
    TEST_OK(symcomm_mem_alloc(comm, 1 << 20, &buf));
  struct rlimit saved;
  TEST_ASSERT(getrlimit(RLIMIT_NOFILE, &saved) == 0);
  int creating = 0, mapping = 0;
  int64_t healthy_id = -2;
  bool made = false;
  for (int k = 0; k < 32 && !made; k++) {
    int fds = count_fds(), maps = count_device_maps();
    symcomm_window_t win = NULL;
    if (rank == victim)
      allow_new_fds(k);
    double t0 = test_now();
    symcomm_result_t res = registered
                               ? symcomm_window_register(comm, (char *)buf + 4096, 64 << 10, &win)
                               : symcomm_window_alloc(comm, 64 << 10, &win);
    double dt = test_now() - t0;
    if (rank == victim)
      TEST_ASSERT(setrlimit(RLIMIT_NOFILE, &saved) == 0);
    const char *why = symcomm_last_error(comm);
    TEST_ASSERT(dt < 5.0, "k=%d: window creation took %.2f s (%s)", k, dt,
                symcomm_result_string(res));
    if (res == SYMCOMM_OK) {
      made = true;
      TEST_ASSERT(win->id >= 0 && win->id < SC_MAX_WINDOWS, "k=%d: id %lld", k, (long long)win->id);
      TEST_OK(symcomm_window_free(win));
    } else if (rank == victim) {
      TEST_ASSERT(res != SYMCOMM_ERR_REMOTE && !test_contains(why, named),
                  "k=%d: the failing rank got %s: %s", k, symcomm_result_string(res), why);
    } else {
      TEST_ASSERT(res == SYMCOMM_ERR_REMOTE && test_contains(why, named),
                  "k=%d: rank %d got %s: %s", k, rank, symcomm_result_string(res), why);
      creating += test_contains(why, "could not create its part of the window");
      mapping += test_contains(why, "could not map the window");
    }
    TEST_ASSERT(count_fds() == fds, "k=%d: %d descriptors before, %d after (%s)", k, fds,
                count_fds(), why);
    TEST_ASSERT(count_device_maps() == maps, "k=%d: %d device mappings before, %d after", k, maps,
                count_device_maps());
    /* The ranks are still in step, and all saw the same outcome: a size that
     * depends on it would be refused if they had not. The failure took no
     * id: the same one comes back every time. */
    symcomm_window_t check;
    TEST_OK(symcomm_window_alloc(comm, res == SYMCOMM_OK ? 4096 : 8192, &check));
    TEST_ASSERT(healthy_id == -2 || check->id == healthy_id, "k=%d: id %lld after id %lld", k,
                (long long)check->id, (long long)healthy_id);
    healthy_id = check->id;
    TEST_OK(symcomm_window_free(check));
  }
  TEST_ASSERT(made, "no window could be made with 31 more descriptors");
  if (rank != victim) {
    TEST_ASSERT(creating > 0, "no failure while the window was created");
    if (ranks_on_host_of(victim) > 1)
      TEST_ASSERT(mapping > 0, "no failure while the window was mapped");
  }
  if (registered)
    TEST_OK(symcomm_mem_free(comm, buf));
  if (rank == 0)
    printf("test_window_faults: %s fails together (%d steps could fail)\n",
           registered ? "window_register" : "window_alloc", creating + mapping);
}

static void test_ids(void) {
  symcomm_window_t a, b, c, d, e;
  TEST_OK(symcomm_window_alloc(comm, 4096, &a));
  TEST_OK(symcomm_window_alloc(comm, 4096, &b));
  TEST_OK(symcomm_window_alloc(comm, 4096, &c));
  TEST_ASSERT(b->id == a->id + 1 && c->id == b->id + 1, "ids %lld %lld %lld", (long long)a->id,
              (long long)b->id, (long long)c->id);
  int64_t ida = a->id, idb = b->id;
  TEST_OK(symcomm_window_free(b));
  TEST_OK(symcomm_window_alloc(comm, 4096, &d));
  TEST_ASSERT(d->id == idb, "id %lld, expected the freed %lld", (long long)d->id, (long long)idb);
  TEST_OK(symcomm_window_free(a));
  /* A creation that fails everywhere takes nothing. */
  TEST_EXPECT_RESULT(symcomm_window_alloc(comm, rank == 0 ? 8192 : 4096, &e),
                     SYMCOMM_ERR_INVALID_USAGE);
  TEST_OK(symcomm_window_alloc(comm, 4096, &e));
  TEST_ASSERT(e->id == ida, "id %lld, expected the freed %lld", (long long)e->id, (long long)ida);
  TEST_OK(symcomm_window_free(c));
  TEST_OK(symcomm_window_free(d));
  TEST_OK(symcomm_window_free(e));

  /* Register and free one buffer over and over: the id stays the same. */
  enum { CYCLES = 1100, BYTES = 1 << 16 };
  unsigned char *buf = NULL;
  TEST_OK(symcomm_mem_alloc(comm, BYTES, (void **)&buf));
  symcomm_window_t win = NULL;
  int64_t first = -1;
  for (int i = 0; i < CYCLES; i++) {
    TEST_OK(symcomm_window_register(comm, buf, BYTES, &win));
    TEST_ASSERT(win->id >= 0 && win->id < SC_MAX_WINDOWS, "cycle %d: id %lld", i,
                (long long)win->id);
    if (i == 0)
      first = win->id;
    TEST_ASSERT(win->id == first, "cycle %d: id %lld, first was %lld", i, (long long)win->id,
                (long long)first);
    if (i < CYCLES - 1)
      TEST_OK(symcomm_window_free(win));
  }
  /* Every rank has the same id: a size made of it is agreed. */
  symcomm_window_t same;
  TEST_OK(symcomm_window_alloc(comm, 4096 * (size_t)(first + 1), &same));
  TEST_OK(symcomm_window_free(same));
  /* A receive into the last one, from the next rank of this host. */
  int to = -1, from = -1;
  for (int k = 1; k < size; k++) {
    int r = (rank + k) % size, h;
    TEST_OK(symcomm_comm_peer_host(comm, r, &h));
    if (h == host && to < 0)
      to = r;
    r = (rank + size - k) % size;
    TEST_OK(symcomm_comm_peer_host(comm, r, &h));
    if (h == host && from < 0)
      from = r;
  }
  if (to >= 0) {
    static unsigned char src[BYTES];
    for (int i = 0; i < BYTES; i++)
      src[i] = (unsigned char)(i * 13 + rank);
    symcomm_stream_t stream;
    TEST_OK(symcomm_stream_create(comm, &stream));
    TEST_OK(symcomm_group_start());
    TEST_OK(symcomm_send(src, BYTES, SYMCOMM_UINT8, to, comm, stream));
    TEST_OK(symcomm_recv(buf, BYTES, SYMCOMM_UINT8, from, comm, stream));
    TEST_OK(symcomm_group_end());
    TEST_OK(symcomm_stream_synchronize(stream));
    for (int i = 0; i < BYTES; i++)
      TEST_ASSERT(buf[i] == (unsigned char)(i * 13 + from), "byte %d from rank %d", i, from);
    TEST_OK(symcomm_stream_destroy(stream));
  }
  TEST_OK(symcomm_window_free(win));
  TEST_OK(symcomm_mem_free(comm, buf));
  if (rank == 0)
    printf("test_window_faults: ids reused (%d cycles, id %lld)\n", CYCLES, (long long)first);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  TEST_OK(symcomm_init_from_env(&comm, NULL));
  TEST_OK(symcomm_comm_rank(comm, &rank));
  TEST_OK(symcomm_comm_size(comm, &size));
  TEST_OK(symcomm_comm_host_index(comm, &host));
  if (strcmp(mode, "fail") == 0) {
    test_one_rank_fails(false);
    test_one_rank_fails(true);
  } else if (strcmp(mode, "ids") == 0) {
    test_ids();
  } else {
    fprintf(stderr, "usage: test_window_faults fail|ids\n");
    return 2;
  }
  TEST_OK(symcomm_comm_destroy(comm));
  return 0;
}
