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
#include "util/param.h"
#include "util/socket.h"
#include "util/wakeup.h"

/* A connection that has not said hello by then is dropped. */
#define SC_STORE_HELLO_TIMEOUT_MS 10000

typedef struct sc_store_failure {
  uint64_t session;
  sc_result_t result;
  char why[SC_STORE_MAX_TEXT];
  struct sc_store_failure *next;
} sc_store_failure_t;

struct sc_store_server {
  int listen_fd;
  char listen_text[SC_SOCKADDR_TEXT];
  uint64_t only_session;
  bool persistent;
  int64_t idle_timeout_ms; /* how long a released server waits for a first client */
  bool ever_joined;
  sc_wakeup_t wake;
  pthread_t thread;

  /* Shared with the owner's thread. */
  pthread_mutex_t lock;
  bool released;
  sc_store_failure_t *failures;

  /* Linked in sc_store_registry while the thread runs; `exiting` is set
   * there, under the registry's lock, when the process exits. */
  bool exiting;
  struct sc_store_server *registry_next;

  /* The server thread's own. */
  sc_store_conn_t *conns;
  int nconns;
  sc_store_session_t *sessions;
};

/* Every root this process serves. When the process exits, each one fails the
 * requests it holds and flushes its replies before the process is gone: a
 * rank that finishes first must not take undelivered answers with it. */
static pthread_mutex_t sc_store_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sc_store_registry_empty = PTHREAD_COND_INITIALIZER;
static sc_store_server_t *sc_store_registry;
static pthread_once_t sc_store_registry_once = PTHREAD_ONCE_INIT;

#define SC_STORE_EXIT_DRAIN_MS 5000

static void sc_store_drain_at_exit(void) {
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

static void sc_store_registry_init(void) { atexit(sc_store_drain_at_exit); }

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

static void sc_store_conn_free(sc_store_conn_t *conn) {
  if (conn->fd >= 0)
    close(conn->fd);
  free(conn->payload);
  free(conn->key);
  free(conn->out);
  free(conn);
}

static void sc_store_accept(sc_store_server_t *srv) {
  for (;;) {
    struct sockaddr_storage peer;
    socklen_t len = sizeof(peer);
    int fd = accept4(srv->listen_fd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
        SC_WARN(SC_BOOT, "root %s: accept failed: %s", srv->listen_text, strerror(errno));
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
    conn->hello_deadline = sc_now_ms() + SC_STORE_HELLO_TIMEOUT_MS;
    conn->next = srv->conns;
    srv->conns = conn;
    srv->nconns++;
    SC_TRACE(SC_BOOT, "root %s: connection from %s", srv->listen_text, conn->peer);
  }
}

/* Drops a connection that does not speak our protocol, and says so once. */
static void sc_store_reject(sc_store_server_t *srv, sc_store_conn_t *conn, const char *why) {
  SC_WARN(SC_BOOT, "root %s: closing connection from %s: %s", srv->listen_text, conn->peer, why);
  sc_store_session_detach(conn, false);
  conn->closing = true;
  conn->out_len = conn->out_sent = 0; /* nothing more is said to it */
}

static void sc_store_on_hello(sc_store_server_t *srv, sc_store_conn_t *conn) {
  sc_store_hello_t hello;
  memcpy(&hello, conn->header, sizeof(hello));
  char text[SC_STORE_MAX_TEXT];
  if (hello.version != SC_STORE_VERSION || hello.op != SC_STORE_OP_HELLO) {
    snprintf(text, sizeof(text),
             "protocol version %u (op %u) is not this root's version %u: mixing symcomm versions?",
             hello.version, hello.op, SC_STORE_VERSION);
    SC_WARN(SC_BOOT, "root %s: refusing %s: %s", srv->listen_text, conn->peer, text);
    sc_store_conn_reply(conn, SYMCOMM_ERR_INVALID_USAGE, 0, NULL, 0, text);
    conn->closing = true;
    return;
  }
  if (srv->only_session != 0 && hello.session != srv->only_session) {
    snprintf(text, sizeof(text), "this root serves job %016llx, not %016llx (a stale unique id?)",
             (unsigned long long)srv->only_session, (unsigned long long)hello.session);
    SC_WARN(SC_BOOT, "root %s: refusing %s: %s", srv->listen_text, conn->peer, text);
    sc_store_conn_reply(conn, SYMCOMM_ERR_INVALID_USAGE, 0, NULL, 0, text);
    conn->closing = true;
    return;
  }
  sc_store_session_admit(&srv->sessions, conn, hello.session, hello.rank, hello.nranks);
  if (conn->ready)
    srv->ever_joined = true;
}

/* A request header is complete: check it and size its payload. */
static bool sc_store_on_request_header(sc_store_server_t *srv, sc_store_conn_t *conn) {
  memcpy(&conn->request, conn->header, sizeof(conn->request));
  const sc_store_request_t *req = &conn->request;
  if (req->op == SC_STORE_OP_BYE) {
    sc_store_session_detach(conn, true);
    conn->closing = true;
    return false;
  }
  if (req->key_len == 0 || req->key_len > SC_STORE_MAX_KEY || req->value_len > SC_STORE_MAX_VALUE) {
    char why[128];
    snprintf(why, sizeof(why), "request with key of %u bytes and value of %u bytes", req->key_len,
             req->value_len);
    sc_store_reject(srv, conn, why);
    return false;
  }
  conn->payload_len = (size_t)req->key_len + req->value_len;
  conn->payload_got = 0;
  conn->payload = malloc(conn->payload_len);
  if (conn->payload == NULL) {
    sc_store_reject(srv, conn, "out of memory for its request");
    return false;
  }
  return true;
}

/* Reads what the socket has; returns false when the connection is finished. */
static bool sc_store_read(sc_store_server_t *srv, sc_store_conn_t *conn) {
  for (;;) {
    if (conn->closing)
      return true;
    if (conn->parked)
      return true; /* one request at a time: leave the rest in the socket */
    size_t header_need = conn->ready ? sizeof(sc_store_request_t) : sizeof(sc_store_hello_t);
    void *dst;
    size_t want;
    if (conn->header_got < header_need) {
      dst = conn->header + conn->header_got;
      want = header_need - conn->header_got;
    } else {
      dst = conn->payload + conn->payload_got;
      want = conn->payload_len - conn->payload_got;
    }
    ssize_t n = want > 0 ? recv(conn->fd, dst, want, 0) : 0;
    if (want > 0 && n == 0) {
      sc_store_session_detach(conn, false);
      return false;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return true;
      if (errno == EINTR)
        continue;
      sc_store_session_detach(conn, false);
      return false;
    }
    if (conn->header_got < header_need) {
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
      if (!sc_store_on_request_header(srv, conn))
        continue;
    } else {
      conn->payload_got += (size_t)n;
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
  while (conn->out_sent < conn->out_len) {
    ssize_t n = send(conn->fd, conn->out + conn->out_sent, conn->out_len - conn->out_sent,
                     MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return true;
      if (errno == EINTR)
        continue;
      sc_store_session_detach(conn, false);
      return false;
    }
    conn->out_sent += (size_t)n;
  }
  conn->out_sent = conn->out_len = 0;
  return true;
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
      sc_store_session_fail(s, list->result, list->why);
    free(list);
    list = next;
  }
}

static void sc_store_drop_finished(sc_store_server_t *srv, int64_t now) {
  for (sc_store_conn_t **p = &srv->conns; *p != NULL;) {
    sc_store_conn_t *c = *p;
    bool hello_late = !c->ready && !c->closing && now >= c->hello_deadline;
    if (hello_late)
      sc_store_reject(srv, c, "no hello within 10 s");
    bool flushed = c->out_sent >= c->out_len;
    if (c->fd < 0 || (c->closing && flushed)) {
      sc_store_session_detach(c, false);
      *p = c->next;
      sc_store_conn_free(c);
      srv->nconns--;
    } else {
      p = &c->next;
    }
  }
  sc_store_session_collect(&srv->sessions, false);
}

static void *sc_store_server_main(void *arg) {
  sc_store_server_t *srv = arg;
  struct pollfd *fds = NULL;
  sc_store_conn_t **owners = NULL;
  size_t cap = 0;
  int64_t released_at = -1;
  bool exiting = false;
  for (;;) {
    int64_t now = sc_now_ms();
    sc_store_apply_failures(srv);
    if (!exiting && sc_store_exiting(srv)) {
      exiting = true;
      char why[128];
      snprintf(why, sizeof(why), "the process serving the root (pid %d) exited", (int)getpid());
      sc_store_session_fail_all(srv->sessions, SYMCOMM_ERR_REMOTE, why);
    }
    int64_t next = sc_store_session_expire(srv->sessions, now);
    /* Flush what the last round queued before deciding who is finished. */
    for (sc_store_conn_t *c = srv->conns; c != NULL; c = c->next)
      if (c->out_sent < c->out_len && !sc_store_write(c)) {
        close(c->fd);
        c->fd = -1;
      }
    sc_store_drop_finished(srv, now);
    if (exiting) {
      bool flushed = true;
      for (sc_store_conn_t *c = srv->conns; c != NULL && flushed; c = c->next)
        flushed = c->out_sent >= c->out_len;
      if (flushed)
        break;
    }

    pthread_mutex_lock(&srv->lock);
    bool released = srv->released;
    pthread_mutex_unlock(&srv->lock);
    if (released && released_at < 0)
      released_at = now;
    /* A released root ends when its clients are gone; one that nobody ever
     * joined waits for a first client as long as a client would wait for it. */
    if (released && !srv->persistent && srv->nconns == 0 &&
        (srv->ever_joined || now - released_at >= srv->idle_timeout_ms))
      break;
    if (released && !srv->persistent && !srv->ever_joined) {
      int64_t idle_end = released_at + srv->idle_timeout_ms;
      if (idle_end < next)
        next = idle_end;
    }

    size_t need = (size_t)srv->nconns + 2;
    if (need > cap) {
      size_t new_cap = need * 2;
      struct pollfd *f = realloc(fds, new_cap * sizeof(*fds));
      if (f != NULL)
        fds = f;
      sc_store_conn_t **o = realloc(owners, new_cap * sizeof(*owners));
      if (o != NULL)
        owners = o;
      if (f == NULL || o == NULL) {
        SC_WARN(SC_BOOT, "root %s: out of memory; retrying", srv->listen_text);
        poll(NULL, 0, 100);
        continue;
      }
      cap = new_cap;
    }
    nfds_t n = 0;
    fds[n++] = (struct pollfd){.fd = srv->wake.fd, .events = POLLIN};
    fds[n++] = (struct pollfd){.fd = srv->listen_fd, .events = POLLIN};
    for (sc_store_conn_t *c = srv->conns; c != NULL; c = c->next) {
      /* RDHUP also on parked connections: a client that dies while its
       * request is held must fail its session now, not when answered. */
      short events = POLLRDHUP;
      if (!c->closing && !c->parked)
        events |= POLLIN;
      if (c->out_sent < c->out_len)
        events |= POLLOUT;
      if (!c->ready && c->hello_deadline < next)
        next = c->hello_deadline;
      owners[n] = c;
      fds[n++] = (struct pollfd){.fd = c->fd, .events = events};
    }
    if (poll(fds, n, sc_poll_timeout(next)) < 0 && errno != EINTR) {
      SC_WARN(SC_BOOT, "root %s: poll failed: %s", srv->listen_text, strerror(errno));
      poll(NULL, 0, 100);
      continue;
    }
    if (fds[0].revents & POLLIN) {
      /* Drain the wakeup so that the next poll sleeps again. */
      uint64_t count;
      ssize_t r = read(srv->wake.fd, &count, sizeof(count));
      (void)r;
    }
    if (fds[1].revents & POLLIN)
      sc_store_accept(srv);
    for (nfds_t i = 2; i < n; i++) {
      sc_store_conn_t *c = owners[i];
      if (c->parked && (fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR))) {
        sc_store_session_detach(c, false);
        close(c->fd);
        c->fd = -1;
        continue;
      }
      if (fds[i].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) {
        if (!sc_store_read(srv, c)) {
          close(c->fd);
          c->fd = -1;
          continue;
        }
      }
      if (c->out_sent < c->out_len && !sc_store_write(c)) {
        close(c->fd);
        c->fd = -1;
      }
    }
  }
  SC_TRACE(SC_BOOT, "root %s: %s; closing", srv->listen_text,
           exiting ? "the process is exiting" : "all clients left");
  sc_store_registry_remove(srv);
  for (sc_store_conn_t *c = srv->conns, *next; c != NULL; c = next) {
    next = c->next;
    sc_store_conn_free(c);
  }
  sc_store_session_collect(&srv->sessions, true);
  free(fds);
  free(owners);
  close(srv->listen_fd);
  sc_wakeup_close(&srv->wake);
  pthread_mutex_destroy(&srv->lock);
  for (sc_store_failure_t *f = srv->failures, *next; f != NULL; f = next) {
    next = f->next;
    free(f);
  }
  free(srv);
  return NULL;
}

sc_result_t sc_store_server_start(int listen_fd, uint64_t only_session, bool persistent,
                                  int64_t idle_timeout_ms, sc_store_server_t **server) {
  sc_result_t res = SYMCOMM_OK;
  sc_store_server_t *srv = calloc(1, sizeof(*srv));
  if (srv == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_BOOT, "out of memory for the root");
  srv->listen_fd = listen_fd;
  srv->only_session = only_session;
  srv->persistent = persistent;
  srv->idle_timeout_ms = idle_timeout_ms;
  srv->wake.fd = -1;
  sc_sockaddr_t bound = {.len = sizeof(bound.storage)};
  getsockname(listen_fd, (struct sockaddr *)&bound.storage, &bound.len);
  sc_sockaddr_format(&bound, srv->listen_text, sizeof(srv->listen_text));
  SC_CHECK_GOTO(sc_socket_set_nonblocking(listen_fd), res, fail);
  SC_CHECK_GOTO(sc_wakeup_open(&srv->wake), res, fail);
  pthread_mutex_init(&srv->lock, NULL);
  sc_store_registry_add(srv);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&srv->thread, &attr, sc_store_server_main, srv);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    sc_store_registry_remove(srv);
    pthread_mutex_destroy(&srv->lock);
    errno = rc;
    res = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_BOOT, "cannot start the root's thread");
    goto fail;
  }
  SC_INFO(SC_BOOT, "root listening on %s%s", srv->listen_text, persistent ? " (persistent)" : "");
  *server = srv;
  return SYMCOMM_OK;
fail:
  sc_wakeup_close(&srv->wake);
  free(srv);
  return res;
}

void sc_store_server_fail_session(sc_store_server_t *srv, uint64_t session, sc_result_t result,
                                  const char *why) {
  sc_store_failure_t *f = calloc(1, sizeof(*f));
  if (f == NULL)
    return; /* the session's clients still time out, just later */
  f->session = session;
  f->result = result;
  snprintf(f->why, sizeof(f->why), "%s", why);
  pthread_mutex_lock(&srv->lock);
  f->next = srv->failures;
  srv->failures = f;
  sc_wakeup_signal(&srv->wake);
  pthread_mutex_unlock(&srv->lock);
}

void sc_store_server_release(sc_store_server_t *srv) {
  /* Signal before unlocking: once the thread sees `released` it may free srv. */
  pthread_mutex_lock(&srv->lock);
  srv->released = true;
  sc_wakeup_signal(&srv->wake);
  pthread_mutex_unlock(&srv->lock);
}
