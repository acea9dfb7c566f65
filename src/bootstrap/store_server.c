/* The root's thread: accepts connections, reads hellos and requests without
 * ever blocking on one client, and writes replies as sockets accept them. What
 * a request means is store_session.c's business. */
#include "bootstrap/store_server.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/store_session.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/socket.h"
#include "util/wakeup.h"

/* Out of file descriptors: stop accepting for a moment instead of spinning. */
#define SC_STORE_ACCEPT_PAUSE_MS 100
/* How long process exit waits for roots to flush their last replies. */
#define SC_STORE_EXIT_DRAIN_MS 5000
/* Complaints about strangers (refused hellos, junk, dropped connections):
 * one warning per this long at most, counting the others. */
#define SC_STORE_COMPLAIN_EVERY_MS 10000

typedef struct sc_store_pollset {
  struct pollfd *fds;
  struct sc_store_conn **owners;
  size_t cap;
} sc_store_pollset_t;

typedef struct sc_store_failure {
  uint64_t session;
  sc_result_t result;
  int rank;               /* the rank it names for watches (-1: none) */
  sc_store_cause_t cause;
  char why[SC_STORE_MAX_TEXT];
  struct sc_store_failure *next;
} sc_store_failure_t;

struct sc_store_server {
  int listen_fd;
  char listen_text[SC_SOCKADDR_TEXT];
  sc_store_server_config_t config; /* defaults filled in */
  sc_wakeup_t wake;

  /* Shared between the owner and the thread, under `lock`. The server is
   * freed by whichever of the two lets go last. */
  pthread_mutex_t lock;
  int refs;
  bool released;
  bool thread_done;
  sc_store_failure_t *failures;

  /* In the process-wide registry (its own lock) while the thread runs. */
  pid_t pid;
  bool exiting;
  struct sc_store_server *registry_next;

  /* The thread's own. */
  sc_store_conn_t *conns;
  int nconns;
  sc_store_session_t *sessions;
  bool ever_joined;
  int64_t idle_since; /* when the last connection closed, or the release */
  bool seen_release;
  int64_t accept_resume_at;
  int64_t accept_warned_at;
  int64_t complained_at;
  int complaints_held; /* since the last warning */
  sc_store_pollset_t poll; /* here, not on the thread's stack: see after_fork */
};

/* ------------------------------------------------------------ exit drain */

/* Every root this process serves. When the process exits, each one fails the
 * requests it holds and flushes its replies before the process is gone: a
 * rank that finishes first must not take undelivered answers with it. */
static pthread_mutex_t sc_store_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sc_store_registry_empty = PTHREAD_COND_INITIALIZER;
static sc_store_server_t *sc_store_registry;
/* What a forked child inherited: kept reachable so that a leak checker in the
 * child does not report the parent's roots, whose threads the child lacks. */
static sc_store_server_t *sc_store_inherited;
static pthread_once_t sc_store_registry_once = PTHREAD_ONCE_INIT;

/* Set by the layer above, run before the drain (sc_store_server_set_exit_hook). */
static void (*sc_store_exit_hook)(void);

static void sc_store_drain_at_exit(void) {
  void (*hook)(void) = __atomic_load_n(&sc_store_exit_hook, __ATOMIC_ACQUIRE);
  if (hook != NULL)
    hook();
  pthread_mutex_lock(&sc_store_registry_lock);
  for (sc_store_server_t *s = sc_store_registry; s != NULL; s = s->registry_next) {
    s->exiting = true;
    sc_wakeup_signal(&s->wake);
  }
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += SC_STORE_EXIT_DRAIN_MS / 1000;
  while (sc_store_registry != NULL)
    if (pthread_cond_timedwait(&sc_store_registry_empty, &sc_store_registry_lock, &until) != 0)
      break;
  pthread_mutex_unlock(&sc_store_registry_lock);
}

/* A forked child has none of the parent's server threads: it starts with an
 * empty registry (and a fresh lock, which another thread may have held). */
static void sc_store_registry_after_fork(void) {
  pthread_mutex_init(&sc_store_registry_lock, NULL);
  pthread_cond_init(&sc_store_registry_empty, NULL);
  sc_store_inherited = sc_store_registry;
  sc_store_registry = NULL;
}

static void sc_store_registry_init(void) {
  atexit(sc_store_drain_at_exit);
  pthread_atfork(NULL, NULL, sc_store_registry_after_fork);
}

static void sc_store_registry_add(sc_store_server_t *srv) {
  pthread_once(&sc_store_registry_once, sc_store_registry_init);
  pthread_mutex_lock(&sc_store_registry_lock);
  srv->registry_next = sc_store_registry;
  sc_store_registry = srv;
  pthread_mutex_unlock(&sc_store_registry_lock);
}

static void sc_store_registry_remove(sc_store_server_t *srv) {
  pthread_mutex_lock(&sc_store_registry_lock);
  for (sc_store_server_t **p = &sc_store_registry; *p != NULL; p = &(*p)->registry_next)
    if (*p == srv) {
      *p = srv->registry_next;
      break;
    }
  if (sc_store_registry == NULL)
    pthread_cond_broadcast(&sc_store_registry_empty);
  pthread_mutex_unlock(&sc_store_registry_lock);
}

static bool sc_store_exiting(sc_store_server_t *srv) {
  pthread_mutex_lock(&sc_store_registry_lock);
  bool exiting = srv->exiting;
  pthread_mutex_unlock(&sc_store_registry_lock);
  return exiting;
}

/* ------------------------------------------------------------ lifetime */

static void sc_store_server_free(sc_store_server_t *srv) {
  for (sc_store_failure_t *f = srv->failures, *next; f != NULL; f = next) {
    next = f->next;
    free(f);
  }
  sc_wakeup_close(&srv->wake);
  pthread_mutex_destroy(&srv->lock);
  free(srv);
}

/* Drops one of the two references (owner, thread); the last one frees. */
static void sc_store_server_unref(sc_store_server_t *srv) {
  pthread_mutex_lock(&srv->lock);
  bool last = --srv->refs == 0;
  pthread_mutex_unlock(&srv->lock);
  if (last)
    sc_store_server_free(srv);
}

/* ------------------------------------------------------------ connections */

static void sc_store_conn_free(sc_store_conn_t *conn) {
  if (conn->fd >= 0)
    close(conn->fd);
  free(conn->payload);
  free(conn->key);
  sc_store_output_clear(&conn->out);
  free(conn);
}

/* A warning about a stranger (someone who is not, or not yet, a rank of a
 * session): at most one per SC_STORE_COMPLAIN_EVERY_MS, so that a flood of
 * connections cannot flood the job's log too. */
static void sc_store_complain(sc_store_server_t *srv, const sc_store_conn_t *conn,
                              const char *what, const char *why) {
  int64_t now = sc_now_ms();
  if (srv->complained_at != 0 && now - srv->complained_at < SC_STORE_COMPLAIN_EVERY_MS) {
    srv->complaints_held++;
    return;
  }
  char held[64] = "";
  if (srv->complaints_held > 0)
    snprintf(held, sizeof(held), " (and %d more connections since the last warning)",
             srv->complaints_held);
  SC_WARN(SC_BOOT, "root %s: %s %s: %s%s", srv->listen_text, what, conn->peer, why, held);
  srv->complained_at = now;
  srv->complaints_held = 0;
}

static void sc_store_close_conn_fd(sc_store_conn_t *conn) {
  close(conn->fd);
  conn->fd = -1;
}

static bool sc_store_read(sc_store_server_t *srv, sc_store_conn_t *conn);

/* Keeps at most SC_STORE_MAX_UNGREETED connections waiting for their hello:
 * past that, the oldest goes, unless its hello has come in meanwhile. A rank
 * says hello as soon as it connects, so a flood of silent connections
 * cannot keep a rank out, and the root keeps descriptors for its own work. */
static void sc_store_limit_ungreeted(sc_store_server_t *srv) {
  for (;;) {
    int waiting = 0;
    sc_store_conn_t *oldest = NULL; /* the list is newest first */
    for (sc_store_conn_t *c = srv->conns; c != NULL; c = c->next)
      if (!c->greeted && !c->closing && c->fd >= 0) {
        waiting++;
        oldest = c;
      }
    if (waiting <= SC_STORE_MAX_UNGREETED)
      return;
    if (!sc_store_read(srv, oldest)) {
      sc_store_close_conn_fd(oldest);
      continue;
    }
    if (oldest->greeted || oldest->closing)
      continue;
    char why[96];
    snprintf(why, sizeof(why), "more than %d connections wait for their hello",
             SC_STORE_MAX_UNGREETED);
    sc_store_complain(srv, oldest, "dropping", why);
    sc_store_close_conn_fd(oldest);
  }
}

static void sc_store_accept(sc_store_server_t *srv, int64_t now) {
  for (;;) {
    struct sockaddr_storage peer;
    socklen_t len = sizeof(peer);
    int fd = accept4(srv->listen_fd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
        return;
      /* Out of descriptors or memory: the listening socket stays readable, so
       * pause accepting rather than spin, and say so once in a while. */
      srv->accept_resume_at = now + SC_STORE_ACCEPT_PAUSE_MS;
      if (now - srv->accept_warned_at >= 10000) {
        srv->accept_warned_at = now;
        SC_WARN(SC_BOOT, "root %s: cannot accept connections: %s (raise `ulimit -n`?)",
                srv->listen_text, strerror(errno));
      }
      return;
    }
    sc_store_conn_t *conn = calloc(1, sizeof(*conn));
    if (conn == NULL) {
      close(fd);
      SC_WARN(SC_BOOT, "root %s: out of memory accepting a connection", srv->listen_text);
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    conn->fd = fd;
    conn->rank = -1;
    sc_sockaddr_t addr = {.storage = peer, .len = len};
    sc_sockaddr_format(&addr, conn->peer, sizeof(conn->peer));
    conn->hello_deadline = now + srv->config.hello_timeout_ms;
    conn->next = srv->conns;
    srv->conns = conn;
    srv->nconns++;
    SC_TRACE(SC_BOOT, "root %s: connection from %s", srv->listen_text, conn->peer);
    sc_store_limit_ungreeted(srv);
  }
}

/* Drops a connection that does not speak our protocol. A rank's connection
 * fails its session and is always worth a warning; a stranger's is not. */
static void sc_store_reject(sc_store_server_t *srv, sc_store_conn_t *conn, const char *why) {
  if (conn->ready)
    SC_WARN(SC_BOOT, "root %s: closing connection from %s: %s", srv->listen_text, conn->peer, why);
  else
    sc_store_complain(srv, conn, "closing connection from", why);
  sc_store_session_detach(conn, SC_STORE_REJECTED, why);
  conn->closing = true;
  sc_store_output_clear(&conn->out); /* nothing more is said to it */
}

/* Refuses a hello that names no session of this root. The sentence never
 * names the sessions the root does serve: that would hand them out. */
static void sc_store_refuse_stranger(sc_store_server_t *srv, sc_store_conn_t *conn,
                                     const char *text) {
  sc_store_complain(srv, conn, "refusing", text);
  sc_store_conn_reply(conn, SYMCOMM_ERR_INVALID_USAGE, 0, NULL, 0, text);
  conn->closing = true;
}

static bool sc_store_serves(sc_store_server_t *srv, uint64_t session) {
  const sc_store_server_config_t *cfg = &srv->config;
  if (cfg->only_session != 0)
    return session == cfg->only_session;
  if (sc_store_session_find(srv->sessions, session) != NULL)
    return true;
  return cfg->serves != NULL && cfg->serves(cfg->serves_ctx, session);
}

static void sc_store_on_hello(sc_store_server_t *srv, sc_store_conn_t *conn) {
  sc_store_hello_t hello;
  memcpy(&hello, conn->header, sizeof(hello));
  conn->greeted = true;
  char text[SC_STORE_MAX_TEXT];
  bool watch = hello.op == SC_STORE_OP_WATCH;
  if (hello.version != SC_STORE_VERSION || (hello.op != SC_STORE_OP_HELLO && !watch)) {
    snprintf(text, sizeof(text),
             "protocol version %u (op %u) is not this root's version %u: mixing symcomm versions?",
             hello.version, hello.op, SC_STORE_VERSION);
    sc_store_refuse_stranger(srv, conn, text);
    return;
  }
  if (!sc_store_serves(srv, hello.session)) {
    snprintf(text, sizeof(text),
             "this root does not serve session %016llx: the client is not a rank of this job, or "
             "the job's ranks do not share its secret (a unique id of another job, or "
             "SYMCOMM_JOB_KEY or the launcher's job id differ between ranks)",
             (unsigned long long)hello.session);
    sc_store_refuse_stranger(srv, conn, text);
    return;
  }
  if (watch) {
    sc_store_session_watch(srv->sessions, conn, hello.session, hello.rank, hello.nranks);
    return;
  }
  sc_store_session_admit(&srv->sessions, conn, hello.session, hello.rank, hello.nranks);
  if (conn->ready) {
    srv->ever_joined = true;
    conn->active_at = sc_now_ms();
  }
}

/* A request header is complete: check it and size its payload. */
static bool sc_store_on_request_header(sc_store_server_t *srv, sc_store_conn_t *conn) {
  memcpy(&conn->request, conn->header, sizeof(conn->request));
  const sc_store_request_t *req = &conn->request;
  if (req->magic != SC_STORE_MAGIC) {
    sc_store_reject(srv, conn, "a request without the protocol's magic number");
    return false;
  }
  if (req->op == SC_STORE_OP_BYE) {
    sc_store_session_detach(conn, SC_STORE_LEFT, NULL);
    conn->closing = true;
    return false;
  }
  bool keyless = req->op == SC_STORE_OP_FAIL;
  if ((!keyless && req->key_len == 0) || req->key_len > SC_STORE_MAX_KEY ||
      req->value_len > SC_STORE_MAX_VALUE) {
    char why[128];
    snprintf(why, sizeof(why), "a request with a key of %u bytes and a value of %u bytes",
             req->key_len, req->value_len);
    sc_store_reject(srv, conn, why);
    return false;
  }
  conn->payload_len = (size_t)req->key_len + req->value_len;
  conn->payload_got = 0;
  conn->payload = malloc(conn->payload_len + 1);
  if (conn->payload == NULL) {
    sc_store_reject(srv, conn, "no memory for its request");
    return false;
  }
  return true;
}

/* Reads what the socket has; returns false when the connection is finished. */
static bool sc_store_read(sc_store_server_t *srv, sc_store_conn_t *conn) {
  for (;;) {
    /* One request at a time, and the next only once this one's reply is out:
     * a client that does not read its replies cannot make the root queue them. */
    if (conn->closing || conn->parked || sc_store_output_pending(&conn->out))
      return true;
    size_t header_need = conn->ready ? sizeof(sc_store_request_t) : sizeof(sc_store_hello_t);
    bool in_header = conn->header_got < header_need;
    void *dst = in_header ? (void *)(conn->header + conn->header_got)
                          : (void *)(conn->payload + conn->payload_got);
    size_t want = in_header ? header_need - conn->header_got : conn->payload_len - conn->payload_got;
    if (want > 0) {
      ssize_t n = recv(conn->fd, dst, want, 0);
      if (n == 0) {
        sc_store_session_detach(conn, SC_STORE_LOST, NULL);
        return false;
      }
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK)
          return true;
        if (errno == EINTR)
          continue;
        sc_store_session_detach(conn, SC_STORE_LOST, NULL);
        return false;
      }
      conn->active_at = sc_now_ms();
      if (in_header) {
        size_t before = conn->header_got;
        conn->header_got += (size_t)n;
        uint32_t magic;
        if (before < sizeof(magic) && conn->header_got >= sizeof(magic)) {
          memcpy(&magic, conn->header, sizeof(magic));
          if (magic != SC_STORE_MAGIC) {
            char why[96];
            snprintf(why, sizeof(why), "not a symcomm client (first bytes 0x%08x)", magic);
            sc_store_reject(srv, conn, why);
            return true;
          }
        }
        if (conn->header_got < header_need)
          continue;
        if (!conn->ready) {
          conn->header_got = 0;
          sc_store_on_hello(srv, conn);
          continue;
        }
        if (!sc_store_on_request_header(srv, conn)) {
          conn->header_got = 0;
          continue;
        }
      } else {
        conn->payload_got += (size_t)n;
      }
    }
    if (conn->header_got == header_need && conn->payload_got == conn->payload_len) {
      conn->header_got = 0;
      sc_store_session_handle(conn);
      free(conn->payload);
      conn->payload = NULL;
      conn->payload_len = conn->payload_got = 0;
    }
  }
}

/* Writes pending replies; returns false if the peer is gone. */
static bool sc_store_write(sc_store_conn_t *conn) {
  if (sc_store_output_send(&conn->out, conn->fd) >= 0)
    return true;
  sc_store_session_detach(conn, SC_STORE_LOST, NULL);
  return false;
}

static void sc_store_apply_failures(sc_store_server_t *srv) {
  pthread_mutex_lock(&srv->lock);
  sc_store_failure_t *list = srv->failures;
  srv->failures = NULL;
  pthread_mutex_unlock(&srv->lock);
  while (list != NULL) {
    sc_store_failure_t *next = list->next;
    sc_store_session_t *s = sc_store_session_find(srv->sessions, list->session);
    if (s != NULL)
      sc_store_session_fail_by(s, list->result, list->rank, list->cause, list->why);
    free(list);
    list = next;
  }
}

static void sc_store_drop_finished(sc_store_server_t *srv, int64_t now) {
  for (sc_store_conn_t **p = &srv->conns; *p != NULL;) {
    sc_store_conn_t *c = *p;
    if (!c->greeted && !c->closing && c->fd >= 0 && now >= c->hello_deadline) {
      char why[64];
      snprintf(why, sizeof(why), "no hello within %.0f s",
               (double)srv->config.hello_timeout_ms / 1000.0);
      sc_store_reject(srv, c, why);
    }
    bool flushed = !sc_store_output_pending(&c->out);
    if (c->fd < 0 || (c->closing && flushed)) {
      sc_store_session_detach(c, SC_STORE_LOST, NULL);
      *p = c->next;
      sc_store_conn_free(c);
      if (--srv->nconns == 0)
        srv->idle_since = now;
    } else {
      p = &c->next;
    }
  }
  sc_store_session_collect(&srv->sessions, false);
}

static bool sc_store_all_flushed(const sc_store_server_t *srv) {
  for (const sc_store_conn_t *c = srv->conns; c != NULL; c = c->next)
    if (sc_store_output_pending(&c->out))
      return false;
  return true;
}

/* ------------------------------------------------------------ the loop */

static bool sc_store_pollset_reserve(sc_store_pollset_t *ps, size_t need) {
  if (need <= ps->cap)
    return true;
  size_t cap = need * 2;
  struct pollfd *f = realloc(ps->fds, cap * sizeof(*f));
  if (f == NULL)
    return false;
  ps->fds = f;
  sc_store_conn_t **o = realloc(ps->owners, cap * sizeof(*o));
  if (o == NULL)
    return false;
  ps->owners = o;
  ps->cap = cap;
  return true;
}

/* One round: flush, expire, decide whether to stop; then wait and serve.
 * Returns false when the server should end. */
static bool sc_store_round(sc_store_server_t *srv, bool *exiting) {
  sc_store_pollset_t *ps = &srv->poll;
  int64_t now = sc_now_ms();
  sc_store_apply_failures(srv);
  if (!*exiting && sc_store_exiting(srv)) {
    *exiting = true;
    char why[128];
    snprintf(why, sizeof(why), "the process serving the root (pid %d) exited", (int)getpid());
    /* What the exit hook queued before the drain began goes first, then
     * goodbyes already sent (a rank of this process that destroyed its
     * communicator, then exited): its peers hear that it left. */
    sc_store_apply_failures(srv);
    for (sc_store_conn_t *c = srv->conns; c != NULL; c = c->next)
      if (c->fd >= 0 && !sc_store_read(srv, c))
        sc_store_close_conn_fd(c);
    sc_store_session_fail_all_exiting(srv->sessions, why);
  }
  int64_t next = sc_store_session_expire(srv->sessions, now, srv->config.forming_idle_ms);
  for (sc_store_conn_t *c = srv->conns; c != NULL; c = c->next)
    if (c->fd >= 0 && sc_store_output_pending(&c->out) && !sc_store_write(c))
      sc_store_close_conn_fd(c);
  sc_store_drop_finished(srv, now);
  if (*exiting && sc_store_all_flushed(srv))
    return false;

  pthread_mutex_lock(&srv->lock);
  bool released = srv->released;
  pthread_mutex_unlock(&srv->lock);
  if (released && !srv->seen_release) {
    srv->seen_release = true;
    srv->idle_since = now; /* the wait for late ranks starts at the release */
  }
  if (released && !srv->config.persistent && srv->nconns == 0) {
    /* A released root ends once every rank of its jobs has come and gone.
     * While some rank has not come yet (the job failed before it arrived,
     * or nobody came at all), it waits for it as long as a rank would wait,
     * so that a late rank still learns what happened. */
    if (srv->ever_joined && sc_store_session_all_joined(srv->sessions))
      return false;
    int64_t idle_end = srv->idle_since + srv->config.idle_timeout_ms;
    if (now >= idle_end)
      return false;
    if (idle_end < next)
      next = idle_end;
  }

  if (!sc_store_pollset_reserve(ps, (size_t)srv->nconns + 2)) {
    SC_WARN(SC_BOOT, "root %s: out of memory; retrying", srv->listen_text);
    poll(NULL, 0, 100);
    return true;
  }
  nfds_t n = 0;
  ps->fds[n++] = (struct pollfd){.fd = srv->wake.fd, .events = POLLIN};
  bool accepting = now >= srv->accept_resume_at;
  ps->fds[n++] = (struct pollfd){.fd = accepting ? srv->listen_fd : -1, .events = POLLIN};
  if (!accepting && srv->accept_resume_at < next)
    next = srv->accept_resume_at;
  for (sc_store_conn_t *c = srv->conns; c != NULL; c = c->next) {
    /* RDHUP also on parked connections: a client that dies while its
     * request is held must fail its session now, not when answered. */
    short events = POLLRDHUP;
    if (sc_store_output_pending(&c->out))
      events |= POLLOUT;
    else if (!c->closing && !c->parked)
      events |= POLLIN;
    if (!c->greeted && c->hello_deadline < next)
      next = c->hello_deadline;
    ps->owners[n] = c;
    ps->fds[n++] = (struct pollfd){.fd = c->fd, .events = events};
  }
  if (poll(ps->fds, n, sc_poll_timeout(next)) < 0 && errno != EINTR) {
    SC_WARN(SC_BOOT, "root %s: poll failed: %s", srv->listen_text, strerror(errno));
    poll(NULL, 0, 100);
    return true;
  }
  now = sc_now_ms();
  if (ps->fds[0].revents & POLLIN) {
    uint64_t count; /* drain the wakeup so that the next poll sleeps again */
    ssize_t r = read(srv->wake.fd, &count, sizeof(count));
    (void)r;
  }
  if (ps->fds[1].revents & POLLIN)
    sc_store_accept(srv, now);
  for (nfds_t i = 2; i < n; i++) {
    sc_store_conn_t *c = ps->owners[i];
    if (c->fd < 0)
      continue; /* dropped since the poll (to make room for a new connection) */
    short revents = ps->fds[i].revents;
    if (sc_store_output_pending(&c->out) && !sc_store_write(c)) {
      sc_store_close_conn_fd(c);
      continue;
    }
    if (c->parked && (revents & (POLLRDHUP | POLLHUP | POLLERR))) {
      sc_store_session_detach(c, SC_STORE_LOST, NULL);
      sc_store_close_conn_fd(c);
      continue;
    }
    if ((revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) && !sc_store_read(srv, c)) {
      sc_store_close_conn_fd(c);
      continue;
    }
    if (sc_store_output_pending(&c->out) && !sc_store_write(c))
      sc_store_close_conn_fd(c);
    else if (sc_store_output_pending(&c->out) == false && !c->closing && !c->parked &&
             (revents & POLLOUT) && !sc_store_read(srv, c))
      sc_store_close_conn_fd(c); /* the reply just left: read what waited behind it */
  }
  return true;
}

static void *sc_store_server_main(void *arg) {
  sc_store_server_t *srv = arg;
  bool exiting = false;
  while (sc_store_round(srv, &exiting)) {
  }
  SC_TRACE(SC_BOOT, "root %s: %s; closing", srv->listen_text,
           exiting ? "the process is exiting" : "all clients left");
  sc_store_registry_remove(srv);
  for (sc_store_conn_t *c = srv->conns, *next; c != NULL; c = next) {
    next = c->next;
    sc_store_conn_free(c);
  }
  srv->conns = NULL;
  sc_store_session_collect(&srv->sessions, true);
  free(srv->poll.fds);
  free(srv->poll.owners);
  close(srv->listen_fd);
  pthread_mutex_lock(&srv->lock);
  srv->thread_done = true;
  pthread_mutex_unlock(&srv->lock);
  sc_store_server_unref(srv);
  return NULL;
}

/* ------------------------------------------------------------ the owner's side */

sc_result_t sc_store_server_start(int listen_fd, const sc_store_server_config_t *config,
                                  sc_store_server_t **server) {
  sc_result_t res = SYMCOMM_OK;
  sc_store_server_t *srv = calloc(1, sizeof(*srv));
  if (srv == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_BOOT, "out of memory for the root");
  srv->listen_fd = listen_fd;
  srv->config = *config;
  if (srv->config.hello_timeout_ms <= 0)
    srv->config.hello_timeout_ms = SC_STORE_HELLO_TIMEOUT_MS;
  if (srv->config.forming_idle_ms <= 0)
    srv->config.forming_idle_ms = SC_STORE_FORMING_IDLE_MS;
  srv->wake.fd = -1;
  srv->refs = 2; /* the owner and the thread */
  srv->idle_since = sc_now_ms();
  srv->pid = getpid();
  sc_sockaddr_t bound = {.len = sizeof(bound.storage)};
  getsockname(listen_fd, (struct sockaddr *)&bound.storage, &bound.len);
  sc_sockaddr_format(&bound, srv->listen_text, sizeof(srv->listen_text));
  SC_CHECK_GOTO(sc_socket_set_nonblocking(listen_fd), res, fail);
  SC_CHECK_GOTO(sc_wakeup_open(&srv->wake), res, fail);
  pthread_mutex_init(&srv->lock, NULL);
  sc_store_registry_add(srv);
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&thread, &attr, sc_store_server_main, srv);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    sc_store_registry_remove(srv);
    pthread_mutex_destroy(&srv->lock);
    errno = rc;
    res = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_BOOT, "cannot start the root's thread");
    goto fail;
  }
  SC_INFO(SC_BOOT, "root listening on %s%s", srv->listen_text,
          config->persistent ? " (persistent)" : "");
  *server = srv;
  return SYMCOMM_OK;
fail:
  sc_wakeup_close(&srv->wake);
  free(srv);
  return res;
}

/* Queues a failure for the server's thread, which applies it before anything else. */
static void sc_store_server_queue_failure(sc_store_server_t *srv, uint64_t session,
                                          sc_result_t result, int rank, sc_store_cause_t cause,
                                          const char *why) {
  sc_store_failure_t *f = calloc(1, sizeof(*f));
  if (f == NULL)
    return; /* the session's clients still time out, just later */
  f->session = session;
  f->result = result;
  f->rank = rank;
  f->cause = cause;
  snprintf(f->why, sizeof(f->why), "%s", why);
  pthread_mutex_lock(&srv->lock);
  f->next = srv->failures;
  srv->failures = f;
  if (!srv->thread_done)
    sc_wakeup_signal(&srv->wake);
  pthread_mutex_unlock(&srv->lock);
}

void sc_store_server_fail_session(sc_store_server_t *srv, uint64_t session, sc_result_t result,
                                  const char *why) {
  sc_store_server_queue_failure(srv, session, result, -1, SC_STORE_CAUSE_OTHER, why);
}

void sc_store_server_set_exit_hook(void (*hook)(void)) {
  __atomic_store_n(&sc_store_exit_hook, hook, __ATOMIC_RELEASE);
}

void sc_store_server_rank_exits(uint64_t session, int rank) {
  char why[SC_STORE_MAX_TEXT];
  snprintf(why, sizeof(why), "its process (pid %d) exited without destroying its communicator",
           (int)getpid());
  pthread_mutex_lock(&sc_store_registry_lock);
  for (sc_store_server_t *s = sc_store_registry; s != NULL; s = s->registry_next)
    if (s->config.only_session == 0 || s->config.only_session == session)
      sc_store_server_queue_failure(s, session, SYMCOMM_ERR_REMOTE, rank, SC_STORE_CAUSE_LOST, why);
  pthread_mutex_unlock(&sc_store_registry_lock);
}

bool sc_store_server_serves(uint64_t session) {
  bool found = false;
  pthread_once(&sc_store_registry_once, sc_store_registry_init);
  pthread_mutex_lock(&sc_store_registry_lock);
  for (sc_store_server_t *s = sc_store_registry; s != NULL && !found; s = s->registry_next)
    found = s->config.only_session == session;
  pthread_mutex_unlock(&sc_store_registry_lock);
  return found;
}

void sc_store_server_release(sc_store_server_t *srv) {
  pthread_mutex_lock(&srv->lock);
  srv->released = true;
  if (!srv->thread_done)
    sc_wakeup_signal(&srv->wake);
  pthread_mutex_unlock(&srv->lock);
  sc_store_server_unref(srv);
}
