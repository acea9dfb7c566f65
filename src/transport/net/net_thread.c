/* The progress thread of the network engine.
 *
 * ONE thread per process serves every endpoint (data bytes move on helper
 * threads within its turn, net_io.c): a process may hold several
 * communicators (a world, its splits, one per tensor group), each with an
 * endpoint, and CI runs 16 ranks on 2 cores; a thread per communicator would
 * multiply the threads that wake for every packet and fight for those cores.
 * The thread starts with the first endpoint and stops with the last. It never
 * spins: it sleeps in ppoll() on every connection, the wake eventfd, the
 * pollers' hints and the nearest deadline (a message's timeout, a connect
 * retry, a hello). Posts and pollers reach it through each endpoint's inbox,
 * under one lock that no callback runs under (callbacks may post). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "transport/net/net_internal.h"
#include "util/clock.h"

static struct {
  pthread_mutex_t lock; /* the endpoints' inboxes and flags, the list */
  pthread_cond_t cond;  /* an endpoint's `closed` */
  pthread_mutex_t life; /* start and stop of the thread */
  pthread_t thread;
  bool running, stop;
  int wake_fd;
  sc_net_endpoint_t *eps;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
       .life = PTHREAD_MUTEX_INITIALIZER, .wake_fd = -1};

static __thread bool g_on_thread;

void net_lock(void) { pthread_mutex_lock(&g.lock); }
void net_unlock(void) { pthread_mutex_unlock(&g.lock); }
bool net_on_thread(void) { return g_on_thread; }

int sc_net_wake_fd(void) { return __atomic_load_n(&g.wake_fd, __ATOMIC_ACQUIRE); }

void sc_net_wake(void) {
  int fd = sc_net_wake_fd();
  uint64_t one = 1;
  if (fd >= 0 && write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
    SC_TRACE(SC_NET, "waking the network thread failed: %s", strerror(errno));
}

/* What one ppoll() entry stands for. */
enum { NET_FD_WAKE, NET_FD_LISTENER, NET_FD_ACCEPTED, NET_FD_CONN };
typedef struct net_fd_owner {
  int what;
  sc_net_endpoint_t *ep;
  net_conn_t *conn;
} net_fd_owner_t;

typedef struct net_turn {
  struct pollfd *fds;
  net_fd_owner_t *owners;
  int n;
  size_t cap, cap_fds;
  net_io_item_t *data; /* the turn's ready data connections */
  int n_data;
  size_t cap_data;
  sc_net_endpoint_t **eps;
  int n_eps;
  size_t cap_eps;
} net_turn_t;

static void net_turn_add(net_turn_t *t, int fd, short events, int what, sc_net_endpoint_t *ep,
                         net_conn_t *conn) {
  size_t need = (size_t)t->n + 1;
  if (!net_grow((void **)&t->fds, &t->cap_fds, need, sizeof(*t->fds)) ||
      !net_grow((void **)&t->owners, &t->cap, need, sizeof(*t->owners)))
    return; /* out of memory: this fd waits for a later turn */
  t->fds[t->n] = (struct pollfd){.fd = fd, .events = events};
  t->owners[t->n] = (net_fd_owner_t){.what = what, .ep = ep, .conn = conn};
  t->n++;
}

static void net_turn_add_peer_conns(net_turn_t *t, sc_net_endpoint_t *ep, net_conn_t *conns, int n) {
  for (int i = 0; i < n; i++) {
    net_conn_t *c = &conns[i];
    if (c->state != NET_CONN_OPEN && c->state != NET_CONN_CONNECTING)
      continue;
    short ev = c->state == NET_CONN_OPEN ? POLLIN : 0;
    if (net_conn_wants_write(c))
      ev |= POLLOUT;
    net_turn_add(t, ep->ops->fd(c->c), ev, NET_FD_CONN, ep, c);
  }
}

/* Takes each endpoint's inbox and new pollers; copies the list. */
/* What was posted to ep becomes its turn's to take (under the lock). */
static void net_inbox_move(sc_net_endpoint_t *ep) {
  ep->taken = ep->inbox_head;
  ep->inbox_head = ep->inbox_tail = NULL;
}

static bool net_take_inboxes(net_turn_t *t) {
  net_lock();
  if (g.stop) {
    net_unlock();
    return false;
  }
  t->n_eps = 0;
  for (sc_net_endpoint_t *ep = g.eps; ep != NULL; ep = ep->next) {
    if (!net_grow((void **)&t->eps, &t->cap_eps, (size_t)t->n_eps + 1, sizeof(*t->eps)))
      break;
    t->eps[t->n_eps++] = ep;
    net_inbox_move(ep);
    ep->peers_ready = ep->peers_set;
    for (int i = 0; i < ep->n_new_pollers; i++)
      if (net_grow((void **)&ep->pollers, &ep->cap_pollers, (size_t)ep->n_pollers + 1, sizeof(*ep->pollers)))
        ep->pollers[ep->n_pollers++] = ep->new_pollers[i];
    ep->n_new_pollers = 0;
  }
  net_unlock();
  return true;
}

static bool net_inbox_waiting(void) {
  bool any = false;
  net_lock();
  for (sc_net_endpoint_t *ep = g.eps; ep != NULL && !any; ep = ep->next)
    any = ep->inbox_head != NULL || ep->n_new_pollers > 0 || (ep->closing && !ep->closed);
  net_unlock();
  return any;
}

/* An endpoint being closed: everything of it ends, then its closer is told. */
static void net_forget(sc_net_endpoint_t *ep) {
  net_ep_shutdown(ep, SYMCOMM_ERR_ABORTED);
  net_lock();
  sc_net_endpoint_t **pp = &g.eps;
  while (*pp != ep)
    pp = &(*pp)->next;
  *pp = ep->next;
  ep->closed = true;
  pthread_cond_broadcast(&g.cond);
  net_unlock();
}

/* What was posted to ep since its inbox was taken; false: nothing. */
static bool net_take_inbox(sc_net_endpoint_t *ep) {
  net_lock();
  net_inbox_move(ep);
  net_unlock();
  return ep->taken != NULL;
}

/* One endpoint's work of a turn; lowers *wake_ms (absolute) and *wake_us (relative). */
static void net_ep_turn(sc_net_endpoint_t *ep, int64_t *wake_ms, int64_t *wake_us) {
  int64_t now = 0; /* read in each pass */
  /* A second pass for what the pollers posted (a program's ops, taken from
   * its queue): their records go out now, not after a ppoll and a turn. */
  for (int pass = 0; pass < 2; pass++) {
    sc_net_msg_t *m = ep->taken;
    ep->taken = NULL;
    while (m != NULL) {
      sc_net_msg_t *next = m->engine.next;
      if (ep->failed != SYMCOMM_OK)
        m->finish(m, ep->failed);
      else
        net_msg_attach(ep, m);
      m = next;
    }
    now = net_now_ms();
    if (ep->failed == SYMCOMM_OK && ep->peers_ready)
      for (int r = 0; r < ep->cfg.nranks && ep->failed == SYMCOMM_OK; r++)
        if (ep->peers[r].remote)
          net_peer_progress(ep, &ep->peers[r], now, wake_ms);
    /* Pollers come after the turn's chunk_ptr calls: a "not yet" given just now
     * (a staging copy started) is what their hint must cover. */
    for (int i = 0; i < ep->n_pollers; i++) {
      int64_t hint = ep->pollers[i].fn(ep->pollers[i].ctx);
      if (hint >= 0 && (*wake_us < 0 || hint < *wake_us))
        *wake_us = hint;
    }
    if (pass > 0 || !net_take_inbox(ep))
      break;
  }
  if (ep->listen_paused_until_ms > now && ep->listen_paused_until_ms < *wake_ms)
    *wake_ms = ep->listen_paused_until_ms; /* the listener's rest ends */
  /* Accepted connections that closed go; the others say hello before their deadline. */
  for (net_conn_t **pc = &ep->accepted; *pc != NULL;) {
    net_conn_t *c = *pc;
    if (c->state == NET_CONN_HELLO && now >= c->deadline_ms) {
      SC_WARN(SC_NET, "%s: connection from %s said no hello in %d s; closed", ep->name,
              ep->ops->remote(c->c), SC_NET_HELLO_MS / 1000);
      net_conn_close(ep, c);
    }
    if (c->state == NET_CONN_CLOSED) {
      *pc = c->next;
      net_conn_free(ep, c);
      continue;
    }
    if (c->deadline_ms < *wake_ms)
      *wake_ms = c->deadline_ms;
    pc = &c->next;
  }
}

static void net_build_fds(net_turn_t *t) {
  t->n = 0;
  net_turn_add(t, g.wake_fd, POLLIN, NET_FD_WAKE, NULL, NULL);
  for (int i = 0; i < t->n_eps; i++) {
    sc_net_endpoint_t *ep = t->eps[i];
    if (ep == NULL)
      continue;
    if (ep->peers_ready && ep->listener != NULL && net_now_ms() >= ep->listen_paused_until_ms)
      net_turn_add(t, ep->ops->listener_fd(ep->listener), POLLIN, NET_FD_LISTENER, ep, NULL);
    for (net_conn_t *c = ep->accepted; c != NULL; c = c->next)
      if (c->state == NET_CONN_HELLO)
        net_turn_add(t, ep->ops->fd(c->c), POLLIN, NET_FD_ACCEPTED, ep, c);
    if (ep->failed != SYMCOMM_OK || !ep->peers_ready)
      continue;
    int n = 1 + ep->cfg.sockets;
    for (int r = 0; r < ep->cfg.nranks; r++)
      if (ep->peers[r].remote) {
        net_turn_add_peer_conns(t, ep, ep->peers[r].out, n);
        net_turn_add_peer_conns(t, ep, ep->peers[r].in, n);
      }
  }
}

/* Control connections, the listener and hellos are served here; the ready
 * data connections' bytes move together, on the helper threads, and what
 * they found is settled after. */
static void net_handle_fds(net_turn_t *t) {
  t->n_data = 0;
  for (int i = 0; i < t->n; i++) {
    net_fd_owner_t *o = &t->owners[i];
    if (t->fds[i].revents == 0 || o->what != NET_FD_CONN || o->conn->index == 0 ||
        o->conn->state != NET_CONN_OPEN || o->ep->failed != SYMCOMM_OK)
      continue;
    if (net_grow((void **)&t->data, &t->cap_data, (size_t)t->n_data + 1, sizeof(*t->data)))
      t->data[t->n_data++] = (net_io_item_t){.ep = o->ep, .conn = o->conn, .revents = t->fds[i].revents};
    t->fds[i].revents = 0; /* not for the loop below (out of memory: a later turn) */
  }
  net_io_run(t->data, t->n_data);
  for (int i = 0; i < t->n_data; i++)
    net_conn_settle(t->data[i].ep, t->data[i].conn);
  for (int i = 0; i < t->n; i++) {
    short rev = t->fds[i].revents;
    if (rev == 0)
      continue;
    net_fd_owner_t *o = &t->owners[i];
    if (o->what == NET_FD_WAKE) {
      uint64_t v;
      if (read(g.wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
        SC_TRACE(SC_NET, "reading the wake fd failed: %s", strerror(errno));
    } else if (o->what == NET_FD_LISTENER) {
      net_accept_all(o->ep);
    } else if (o->what == NET_FD_ACCEPTED) {
      if (o->conn->state == NET_CONN_HELLO)
        net_accepted_io(o->ep, o->conn, rev);
    } else if (o->ep->failed == SYMCOMM_OK) {
      net_conn_io(o->ep, o->conn, rev);
    }
  }
}

static void *net_thread_main(void *arg) {
  (void)arg;
  g_on_thread = true;
  /* Its short sleeps (a staging copy's end, a GPU's post) are meant as given:
   * the default 50 us of slack made every chunk's copy cost a turn of 50 us. */
  if (prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0) != 0)
    SC_TRACE(SC_NET, "the network thread keeps its timer slack: %s", strerror(errno));
  net_turn_t t = {0};
  while (net_take_inboxes(&t)) {
    int64_t wake_ms = SC_DEADLINE_NEVER, wake_us = -1;
    for (int i = 0; i < t.n_eps; i++) {
      sc_net_endpoint_t *ep = t.eps[i];
      net_lock();
      bool closing = ep->closing;
      net_unlock();
      if (closing) {
        net_forget(ep);
        t.eps[i] = NULL;
        continue;
      }
      net_ep_turn(ep, &wake_ms, &wake_us);
    }
    /* Posted by a callback during this turn: a new turn at once. */
    if (net_inbox_waiting())
      wake_us = 0;
    net_build_fds(&t);
    int64_t now_us = sc_now_us();
    int64_t sleep_us = wake_us;
    if (wake_ms != SC_DEADLINE_NEVER) {
      int64_t d = wake_ms * 1000 - now_us;
      if (d < 0)
        d = 0;
      if (sleep_us < 0 || d < sleep_us)
        sleep_us = d;
    }
    struct timespec ts = {.tv_sec = sleep_us / 1000000, .tv_nsec = (sleep_us % 1000000) * 1000};
    int n = ppoll(t.fds, (nfds_t)t.n, sleep_us < 0 ? NULL : &ts, NULL);
    if (n > 0)
      net_handle_fds(&t);
    else if (n < 0 && errno != EINTR)
      SC_WARN(SC_NET, "ppoll of the network thread failed: %s", strerror(errno));
  }
  free(t.fds);
  free(t.owners);
  free(t.eps);
  free(t.data);
  return NULL;
}

sc_result_t net_thread_add(sc_net_endpoint_t *ep) {
  sc_result_t r = SYMCOMM_OK;
  pthread_mutex_lock(&g.life);
  if (!g.running) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) {
      r = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "eventfd for the network thread failed");
      goto out;
    }
    r = net_io_start();
    if (r != SYMCOMM_OK) {
      close(fd);
      goto out;
    }
    __atomic_store_n(&g.wake_fd, fd, __ATOMIC_RELEASE);
    g.stop = false;
    int err = pthread_create(&g.thread, NULL, net_thread_main, NULL);
    if (err != 0) {
      __atomic_store_n(&g.wake_fd, -1, __ATOMIC_RELEASE);
      net_io_stop();
      close(fd);
      errno = err;
      r = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "cannot start the network thread");
      goto out;
    }
    g.running = true;
  }
  net_lock();
  ep->next = g.eps;
  g.eps = ep;
  net_unlock();
  sc_net_wake();
out:
  pthread_mutex_unlock(&g.life);
  return r;
}

void net_thread_remove(sc_net_endpoint_t *ep) {
  pthread_mutex_lock(&g.life);
  net_lock();
  ep->closing = true;
  net_unlock();
  sc_net_wake();
  net_lock();
  while (!ep->closed)
    pthread_cond_wait(&g.cond, &g.lock);
  bool last = g.eps == NULL;
  if (last)
    g.stop = true;
  net_unlock();
  if (last) {
    sc_net_wake();
    pthread_join(g.thread, NULL);
    net_io_stop();
    int fd = g.wake_fd;
    __atomic_store_n(&g.wake_fd, -1, __ATOMIC_RELEASE);
    close(fd);
    g.running = false;
  }
  pthread_mutex_unlock(&g.life);
}
