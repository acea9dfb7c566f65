/* The process's list of live communicators and the monitor thread that
 * watches their roots and status blocks (see comm_watch.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/dev_result.h"
#include "bootstrap/store_client.h"
#include "core/comm.h"
#include "util/log.h"

/* How often the monitor looks at the status blocks: a rank's own timeout
 * reaches the root within this. The watches wake it at once. */
#define SC_WATCH_POLL_MS 200

/* How long a failure found here waits for the root's news of the same event. */
#define SC_WATCH_NEWS_MS 300

static pthread_mutex_t sc_watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct symcomm_comm *sc_watch_list;
static sc_wakeup_t sc_watch_wake = {.fd = -1}; /* a new watch to poll */
static bool sc_watch_running;
static pthread_once_t sc_watch_once = PTHREAD_ONCE_INIT;
/* The monitor's poll set, here rather than on its stack: a forked child,
 * which has no monitor, still reaches it (no leak report). */
static struct pollfd *sc_watch_fds;
static size_t sc_watch_cap;

/* ------------------------------------------------------------ failures */

/* Sets the status block's stop word from the recorded failure. Lock held. */
static void sc_comm_stop_programs_locked(struct symcomm_comm *comm) {
  sc_dev_status_t *st = comm->status;
  if (st == NULL)
    return;
  snprintf(st->why, sizeof(st->why), "%s", comm->watch.stop_why);
  st->rank = comm->watch.stop_rank;
  st->result = comm->watch.stop_result;
  __atomic_store_n(&st->stop, (uint32_t)comm->watch.stop, __ATOMIC_RELEASE);
  if (comm->dev_stop != NULL)
    comm->ops->copy_word(comm->device, comm->dev_stop, &st->stop);
}

/* Records how comm failed (the first failure wins) and stops its programs:
 * `why` is what the device sentence quotes, `text` the sentence later calls
 * are refused with. Lock held. */
static void sc_comm_fail_locked(struct symcomm_comm *comm, sc_result_t result, sc_stop_t stop,
                                int rank, const char *why, const char *text) {
  if (atomic_load(&comm->failed) != SYMCOMM_OK)
    return;
  snprintf(comm->fail_text, sizeof(comm->fail_text), "%s", text);
  comm->watch.stop = (int)stop;
  comm->watch.stop_rank = rank;
  comm->watch.stop_result = (int)result;
  snprintf(comm->watch.stop_why, sizeof(comm->watch.stop_why), "%s", why);
  if (comm->watch.attached)
    sc_comm_stop_programs_locked(comm);
  atomic_store(&comm->failed, (int)result);
  /* Host-side waits (bootstrap, fd exchange) poll this fd: they end now. */
  sc_wakeup_signal(&comm->abort_wake);
}

/* Sends this rank's own failure or abort to the root, once. Lock held. */
static void sc_comm_tell_root_locked(struct symcomm_comm *comm, sc_store_cause_t cause,
                                     const char *why) {
  if (comm->watch.told_root || comm->watch.conn.fd < 0)
    return; /* said already, or the root has told us the session failed */
  comm->watch.told_root = true;
  if (!sc_store_watch_tell(&comm->watch.conn, cause, why))
    sc_bootstrap_shutdown(&comm->boot); /* a lost connection says it too, less precisely */
}

/* Rank `rank` destroyed its communicator: nothing fails, but device waits
 * for it that it never met end (the status block's departed bits). Lock held. */
static void sc_comm_peer_left_locked(struct symcomm_comm *comm, int rank) {
  if (rank < 0 || rank >= comm->nranks || rank == comm->rank)
    return;
  if (rank == comm->root_rank)
    comm->watch.root_left = true;
  SC_INFO(SC_INIT, "comm %p rank %d: rank %d left (destroyed its communicator)", (void *)comm,
          comm->rank, rank);
  const sc_peer_t *p = &comm->peers[rank];
  _Static_assert(SC_MAX_LOCAL_RANKS <= 64, "departed ranks are bits of a uint64_t");
  if (comm->status != NULL && p->host == comm->host)
    __atomic_fetch_or(&comm->status->departed, 1ull << p->local_rank, __ATOMIC_RELEASE);
}

/* Whether process `pid` has ended (gone, or a zombie not reaped yet). */
static bool sc_process_ended(int pid) {
  char path[64], stat[256];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT || errno == ESRCH;
  ssize_t n = read(fd, stat, sizeof(stat) - 1);
  close(fd);
  stat[n > 0 ? n : 0] = '\0';
  const char *name_end = strrchr(stat, ')'); /* "pid (name) state ..." */
  return name_end != NULL && name_end[1] == ' ' && name_end[2] == 'Z';
}

/* Once the root is gone, nobody announces departures: a rank of this host
 * whose process ended counts as left. Lock held. */
static void sc_comm_check_peers_locked(struct symcomm_comm *comm) {
  if (!comm->watch.root_gone || comm->status == NULL || comm->local_rank_to_rank == NULL)
    return;
  uint64_t departed = __atomic_load_n(&comm->status->departed, __ATOMIC_ACQUIRE);
  for (int l = 0; l < comm->local_size; l++) {
    int r = comm->local_rank_to_rank[l];
    if (r != comm->rank && !(departed >> l & 1) && sc_process_ended(comm->pids[r]))
      sc_comm_peer_left_locked(comm, r);
  }
}

/* The root's connection ended without a word: its process died (a clean
 * exit says so first). If a rank of the communicator served it, that rank is
 * gone, and with it every wait that needs it. Lock held. */
static void sc_comm_root_died_locked(struct symcomm_comm *comm) {
  char text[sizeof(comm->fail_text)];
  if (comm->root_rank < 0 || comm->watch.root_left) {
    /* Only the bootstrap is gone: calls that need it will fail on their own. */
    comm->watch.root_gone = true;
    SC_INFO(SC_INIT, "comm %p rank %d: the connection to its root ended", (void *)comm, comm->rank);
    return;
  }
  snprintf(text, sizeof(text),
           "rank %d exited (its process, which served the root, ended or was killed)",
           comm->root_rank);
  sc_comm_fail_locked(comm, SYMCOMM_ERR_REMOTE, SC_STOP_PEER_EXITED, comm->root_rank,
                      "its connection to the root dropped", text);
  SC_WARN(SC_INIT, "comm %p rank %d: %s; its work stops", (void *)comm, comm->rank, comm->fail_text);
}

/* The root's news of the session (ranks that left, its failure), or the end
 * of the watch. Lock held. */
static void sc_comm_on_watch_locked(struct symcomm_comm *comm) {
  sc_store_watch_news_t news;
  int got;
  while ((got = sc_store_watch_read(&comm->watch.conn, &news)) == 1 &&
         news.cause == SC_STORE_CAUSE_LEFT)
    sc_comm_peer_left_locked(comm, news.rank);
  if (got == 0)
    return;
  sc_store_watch_close(&comm->watch.conn);
  if (atomic_load(&comm->failed) != SYMCOMM_OK)
    return; /* it failed here first: the news is our own echo */
  char text[sizeof(comm->fail_text)];
  if (got < 0) {
    sc_comm_root_died_locked(comm);
    return;
  }
  if (news.cause == SC_STORE_CAUSE_LOST && news.rank < 0) {
    /* The root's process exited after its ranks left: no rank failed, but
     * calls that need the root will fail on their own. */
    comm->watch.root_gone = true;
    SC_INFO(SC_INIT, "comm %p rank %d: its root went away: %s", (void *)comm, comm->rank, news.text);
    return;
  }
  if (news.cause == SC_STORE_CAUSE_LOST && news.rank == comm->root_rank) {
    /* The root outlives its process's ranks only long enough to say so. */
    snprintf(text, sizeof(text), "rank %d exited (its process, which served the root, ended)",
             news.rank);
    sc_comm_fail_locked(comm, news.result, SC_STOP_PEER_EXITED, news.rank, news.text, text);
  } else if (news.cause == SC_STORE_CAUSE_LOST) {
    snprintf(text, sizeof(text),
             "rank %d exited (its connection to the root dropped: the process ended or was killed)",
             news.rank);
    sc_comm_fail_locked(comm, news.result, SC_STOP_PEER_EXITED, news.rank, news.text, text);
  } else if (news.cause == SC_STORE_CAUSE_ABORTED) {
    snprintf(text, sizeof(text), "rank %d aborted the communicator", news.rank);
    sc_comm_fail_locked(comm, news.result, SC_STOP_PEER_ABORTED, news.rank, news.text, text);
  } else if (news.cause == SC_STORE_CAUSE_FAILED) {
    snprintf(text, sizeof(text), "rank %d failed: %s", news.rank, news.text);
    sc_comm_fail_locked(comm, news.result, SC_STOP_PEER_FAILED, news.rank, news.text, text);
  } else {
    snprintf(text, sizeof(text), "the job failed: %s", news.text);
    sc_comm_fail_locked(comm, news.result, SC_STOP_SESSION_FAILED, news.rank, news.text, text);
  }
  SC_WARN(SC_INIT, "comm %p rank %d: %s; its work stops", (void *)comm, comm->rank, comm->fail_text);
}

/* A program of this rank failed on its own: stop the communicator here and
 * tell the root. Or a program heard of a failure from a peer's mark before
 * the root's news came: record it, so that later calls are refused now (the
 * rank it names, or its root, tells the others). Lock held. */
static void sc_comm_check_local_locked(struct symcomm_comm *comm) {
  if (!comm->watch.attached || comm->watch.local_seen)
    return; /* status is written by attach, without the lock, until then */
  sc_dev_status_t *st = comm->status;
  uint32_t failed = st != NULL ? __atomic_load_n(&st->failed, __ATOMIC_ACQUIRE) : 0;
  if (failed != 2 && failed != 3)
    return;
  comm->watch.local_seen = true;
  char text[sizeof(comm->fail_text)];
  sc_dev_error_describe(&st->error, text, sizeof(text));
  if (failed == 3) {
    bool stop = st->error.kind == SC_DEV_ABORTED;
    sc_comm_fail_locked(comm, sc_backend_dev_result(&st->error),
                        stop ? (sc_stop_t)st->error.stop : SC_STOP_PEER_FAILED,
                        stop ? st->error.stop_rank : (int)st->error.a, text, text);
    SC_INFO(SC_INIT, "comm %p rank %d: %s (a peer's mark said so); its work stops", (void *)comm,
            comm->rank, text);
    return;
  }
  SC_INFO(SC_INIT, "comm %p rank %d failed here (%s); telling the other ranks", (void *)comm,
          comm->rank, text);
  sc_comm_fail_locked(comm, sc_backend_dev_result(&st->error), SC_STOP_FAILED_HERE, comm->rank,
                      text, text);
  /* A wait for a rank that left fails here only: the others heard of the
   * departure themselves, and may have work that does not need it. */
  if (st->error.kind != SC_DEV_PEER_LEFT)
    sc_comm_tell_root_locked(comm, SC_STORE_CAUSE_FAILED, text);
}

/* ------------------------------------------------------------ the monitor */

static bool sc_watch_listed_locked(const struct symcomm_comm *comm) {
  for (const struct symcomm_comm *c = sc_watch_list; c != NULL; c = c->watch.next)
    if (c == comm)
      return true;
  return false;
}

static void *sc_watch_main(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&sc_watch_lock);
    uint64_t count;
    ssize_t r = read(sc_watch_wake.fd, &count, sizeof(count)); /* consumed: poll sleeps again */
    (void)r;
    size_t need = 1, n = 0;
    for (struct symcomm_comm *c = sc_watch_list; c != NULL; c = c->watch.next)
      need++;
    if (need > sc_watch_cap) {
      struct pollfd *grown = realloc(sc_watch_fds, need * 2 * sizeof(*grown));
      if (grown != NULL) {
        sc_watch_fds = grown;
        sc_watch_cap = need * 2;
      }
    }
    struct pollfd *fds = sc_watch_fds;
    size_t cap = sc_watch_cap;
    bool any = sc_watch_list != NULL;
    if (cap > 0) {
      fds[n++] = (struct pollfd){.fd = sc_watch_wake.fd, .events = POLLIN};
      for (struct symcomm_comm *c = sc_watch_list; c != NULL; c = c->watch.next) {
        sc_comm_check_local_locked(c);
        sc_comm_check_peers_locked(c);
        if (c->watch.conn.fd >= 0 && n < cap)
          fds[n++] = (struct pollfd){.fd = c->watch.conn.fd, .events = POLLIN};
      }
    }
    pthread_mutex_unlock(&sc_watch_lock);
    if (n == 0) { /* no memory for the poll set: look again soon */
      poll(NULL, 0, SC_WATCH_POLL_MS);
      continue;
    }
    if (poll(fds, n, any ? SC_WATCH_POLL_MS : -1) <= 0)
      continue;
    pthread_mutex_lock(&sc_watch_lock);
    /* A watch closed since the poll set was made may have a new owner by
     * now: looking it up by fd is still right, as reads never block. */
    for (size_t i = 1; i < n; i++) {
      if (fds[i].revents == 0)
        continue;
      for (struct symcomm_comm *c = sc_watch_list; c != NULL; c = c->watch.next)
        if (c->watch.conn.fd == fds[i].fd) {
          sc_comm_on_watch_locked(c);
          break;
        }
    }
    pthread_mutex_unlock(&sc_watch_lock);
  }
  return NULL;
}

/* The process exits: communicators not destroyed are left by their ranks
 * now, and a root of this process says so (naming the rank) before it drains. */
static void sc_watch_at_exit(void) {
  pthread_mutex_lock(&sc_watch_lock);
  for (struct symcomm_comm *c = sc_watch_list; c != NULL; c = c->watch.next) {
    if (c->watch.destroying)
      continue;
    sc_comm_fail_locked(c, SYMCOMM_ERR_ABORTED, SC_STOP_ABORTED, c->rank, "",
                        "the process is exiting with the communicator still in use");
    sc_store_server_rank_exits(c->session, c->rank);
  }
  pthread_mutex_unlock(&sc_watch_lock);
}

/* A forked child has no monitor and owns none of the parent's communicators. */
static void sc_watch_after_fork(void) {
  pthread_mutex_init(&sc_watch_lock, NULL);
  sc_watch_list = NULL;
  sc_watch_running = false;
  sc_wakeup_close(&sc_watch_wake);
}

static void sc_watch_init(void) {
  pthread_atfork(NULL, NULL, sc_watch_after_fork);
  sc_store_server_set_exit_hook(sc_watch_at_exit);
}

/* Starts the monitor if it is not running. Lock held. */
static sc_result_t sc_watch_ensure_monitor_locked(void) {
  if (sc_watch_running)
    return SYMCOMM_OK;
  if (sc_watch_wake.fd < 0)
    SC_CHECK(sc_wakeup_open(&sc_watch_wake));
  /* It takes no signals: they go to the application's threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t thread;
  int rc = pthread_create(&thread, NULL, sc_watch_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0)
    return SC_RAISE(SYMCOMM_ERR_SYSTEM, SC_INIT, "cannot start the thread that watches roots: %s",
                    strerror(rc));
  pthread_setname_np(thread, "symcomm-watch");
  pthread_detach(thread); /* it runs as long as the process */
  sc_watch_running = true;
  return SYMCOMM_OK;
}

/* ------------------------------------------------------------ the list */

sc_result_t sc_comm_watch_open(struct symcomm_comm *comm, const sc_root_addr_t *root,
                               int abort_fd) {
  int fd = -1;
  SC_CHECK(sc_store_client_watch(&root->addr, root->session, comm->rank, comm->nranks,
                                 comm->options.timeout_ms, abort_fd, &fd));
  pthread_mutex_lock(&sc_watch_lock);
  sc_store_watch_init(&comm->watch.conn, fd);
  pthread_mutex_unlock(&sc_watch_lock);
  return SYMCOMM_OK;
}

sc_result_t sc_comm_watch_start(struct symcomm_comm *comm) {
  pthread_once(&sc_watch_once, sc_watch_init);
  pthread_mutex_lock(&sc_watch_lock);
  sc_result_t res = sc_watch_ensure_monitor_locked();
  if (res == SYMCOMM_OK) {
    comm->watch.listed = true;
    comm->watch.next = sc_watch_list;
    sc_watch_list = comm;
    sc_wakeup_signal(&sc_watch_wake);
  }
  pthread_mutex_unlock(&sc_watch_lock);
  return res;
}

void sc_comm_watch_attach(struct symcomm_comm *comm) {
  pthread_mutex_lock(&sc_watch_lock);
  comm->watch.attached = true;
  if (atomic_load(&comm->failed) != SYMCOMM_OK)
    sc_comm_stop_programs_locked(comm);
  pthread_mutex_unlock(&sc_watch_lock);
}

void sc_comm_watch_fail(struct symcomm_comm *comm, sc_result_t result, const char *text) {
  pthread_mutex_lock(&sc_watch_lock);
  if (comm->watch.listed && atomic_load(&comm->failed) == SYMCOMM_OK) {
    sc_comm_fail_locked(comm, result, SC_STOP_SESSION_FAILED, -1, text, text);
    SC_INFO(SC_INIT, "comm %p rank %d: %s; its work stops", (void *)comm, comm->rank, text);
  }
  pthread_mutex_unlock(&sc_watch_lock);
}

void sc_comm_watch_fail_here(struct symcomm_comm *comm, sc_result_t result, const char *text) {
  /* A rank that dies closes its connections to its peers as its connection
   * to the root drops: the root's news ("rank 5 exited during ...") says
   * more than a closed connection (REMOTE), and is the same on every rank.
   * What both sides see alike (a size mismatch) needs no news. */
  if (result == SYMCOMM_ERR_REMOTE)
    sc_comm_await_news(comm, SC_WATCH_NEWS_MS);
  pthread_mutex_lock(&sc_watch_lock);
  if (comm->watch.listed && atomic_load(&comm->failed) == SYMCOMM_OK) {
    SC_INFO(SC_INIT, "comm %p rank %d failed here (%s); telling the other ranks", (void *)comm,
            comm->rank, text);
    sc_comm_fail_locked(comm, result, SC_STOP_FAILED_HERE, comm->rank, text, text);
    sc_comm_tell_root_locked(comm, SC_STORE_CAUSE_FAILED, text);
  }
  pthread_mutex_unlock(&sc_watch_lock);
}

void sc_comm_watch_stop(struct symcomm_comm *comm) {
  pthread_mutex_lock(&sc_watch_lock);
  if (comm->watch.listed) {
    for (struct symcomm_comm **p = &sc_watch_list; *p != NULL; p = &(*p)->watch.next)
      if (*p == comm) {
        *p = comm->watch.next;
        break;
      }
    comm->watch.listed = false;
    sc_wakeup_signal(&sc_watch_wake);
  }
  /* The monitor may poll this fd until its next round; it looks owners up
   * on the list, where comm no longer is. */
  sc_store_watch_close(&comm->watch.conn);
  pthread_mutex_unlock(&sc_watch_lock);
}

sc_result_t sc_comm_watch_claim_destroy(struct symcomm_comm *comm) {
  pthread_mutex_lock(&sc_watch_lock);
  sc_result_t res = SYMCOMM_OK;
  if (!sc_watch_listed_locked(comm))
    res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_INIT,
                   "symcomm_comm_destroy: not a live communicator (destroyed already, or a stray "
                   "pointer)");
  else if (comm->watch.destroying)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_INIT,
                   "symcomm_comm_destroy: another thread is destroying this communicator");
  else
    comm->watch.destroying = true;
  pthread_mutex_unlock(&sc_watch_lock);
  return res;
}

sc_result_t sc_comm_watch_abort(struct symcomm_comm *comm) {
  pthread_mutex_lock(&sc_watch_lock);
  if (!sc_watch_listed_locked(comm)) {
    pthread_mutex_unlock(&sc_watch_lock);
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_INIT,
                    "symcomm_comm_abort: not a live communicator (destroyed already, or a stray "
                    "pointer)");
  }
  if (!atomic_exchange(&comm->aborted, true)) {
    SC_WARN(SC_INIT, "comm %p rank %d nranks %d - Abort", (void *)comm, comm->rank, comm->nranks);
    sc_wakeup_signal(&comm->abort_wake); /* host-side waits in other threads return */
    sc_comm_fail_locked(comm, SYMCOMM_ERR_ABORTED, SC_STOP_ABORTED, comm->rank, "",
                        "the communicator was aborted");
    /* The other ranks hear it now rather than at their timeout. */
    sc_comm_tell_root_locked(comm, SC_STORE_CAUSE_ABORTED, "symcomm_comm_abort");
  }
  /* Work queued before the abort that starts after this returns reads the
   * stop word's device copy at its start (a collective whose peers all
   * arrived waits for nothing else): the copy must have landed. Under the
   * lock, as the copy was queued: a destroy racing this abort frees comm
   * once it holds the lock (the wait is bounded). */
  if (comm->watch.attached && comm->dev_stop != NULL)
    comm->ops->copy_word_settle(comm->device);
  pthread_mutex_unlock(&sc_watch_lock);
  return SYMCOMM_OK;
}

void sc_comm_watch_poll_local(struct symcomm_comm *comm) {
  pthread_mutex_lock(&sc_watch_lock);
  if (comm->watch.listed)
    sc_comm_check_local_locked(comm);
  pthread_mutex_unlock(&sc_watch_lock);
}
