/* Connections of the network engine: connecting with retry, accepting and
 * checking hellos, control records in; the bytes of data connections move in
 * net_io.c. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/net/net_internal.h"
#include "util/clock.h"

/* Bytes of control records one connection may read in one turn, so that it does not starve the others. */
#define NET_READ_BUDGET (8u << 20)

void net_conn_init(net_conn_t *c, net_peer_t *peer, int dir, int index) {
  c->peer = peer;
  c->dir = dir;
  c->index = index;
  c->state = NET_CONN_IDLE;
  c->slot = -1;
}

void net_conn_close(sc_net_endpoint_t *ep, net_conn_t *c) {
  if (c->c != NULL)
    ep->ops->close(c->c);
  c->c = NULL;
  if (c->state != NET_CONN_IDLE)
    c->state = NET_CONN_CLOSED;
  c->out.off = c->out.len = 0;
  c->ring_head = c->ring_count = 0;
  c->queued = 0;
  c->slot = -1;
  c->in_len = 0;
  free(c->eager);
  c->eager = NULL;
  c->io.moved = c->io.bad = false;
  c->io.lost = SYMCOMM_OK;
  c->io.n_sent = c->io.n_landed = 0;
}

void net_conn_free(sc_net_endpoint_t *ep, net_conn_t *c) {
  net_conn_close(ep, c);
  free(c->out.data);
  free(c->ring);
  free(c);
}

sc_result_t net_buf_put(net_buf_t *b, const void *data, size_t len) {
  if (b->off == b->len)
    b->off = b->len = 0;
  if (b->len + len > b->cap) {
    if (b->off > 0) {
      memmove(b->data, b->data + b->off, b->len - b->off);
      b->len -= b->off;
      b->off = 0;
    }
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + len)
      cap *= 2;
    if (cap != b->cap) {
      uint8_t *p = realloc(b->data, cap);
      if (p == NULL)
        return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_NET, "no memory for %zu bytes of control records", cap);
      b->data = p;
      b->cap = cap;
    }
  }
  memcpy(b->data + b->len, data, len);
  b->len += len;
  return SYMCOMM_OK;
}

bool net_grow(void **array, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return true;
  size_t n = *cap ? *cap * 2 : 16;
  while (n < need)
    n *= 2;
  void *p = realloc(*array, n * elem);
  if (p == NULL)
    return false;
  *array = p;
  *cap = n;
  return true;
}

bool net_conn_wants_write(const net_conn_t *c) {
  return c->state == NET_CONN_CONNECTING ||
         (c->state == NET_CONN_OPEN && (c->out.off < c->out.len || c->ring_count > 0));
}

static const char *net_conn_kind(const net_conn_t *c) { return c->index == 0 ? "control" : "data"; }

void net_peer_conn_lost(sc_net_endpoint_t *ep, net_conn_t *c, const char *why) {
  net_peer_t *p = c->peer;
  char what[64];
  if (c->index == 0)
    snprintf(what, sizeof(what), "its control connection");
  else
    snprintf(what, sizeof(what), "its data connection %d", c->index);
  if (p->closed_ms == 0) {
    p->closed_ms = net_now_ms();
    snprintf(p->closed_why, sizeof(p->closed_why), "%s %s (%s, %s): the rank died or left", what,
             why, c->c != NULL ? ep->ops->remote(c->c) : "?", c->dir == NET_OUT ? "outgoing" : "incoming");
  }
  SC_INFO(SC_NET, "%s: rank %d: %s %s", ep->name, p->rank, what, why);
  net_conn_close(ep, c);
}

/* ---- connecting (the sender's side of a pair) */

static void net_hello_queue(sc_net_endpoint_t *ep, net_conn_t *c) {
  sc_net_hello_t h = {.magic = SC_NET_HELLO_MAGIC, .version = SC_NET_VERSION, .index = (uint32_t)c->index,
                      .comm_id = ep->cfg.comm_id, .token = ep->cfg.token, .from = ep->cfg.rank,
                      .to = c->peer->rank, .count = (uint32_t)(1 + ep->cfg.sockets),
                      .eager_bytes = (uint32_t)ep->cfg.eager_bytes, .chunk_bytes = ep->cfg.chunk_bytes};
  if (net_buf_put(&c->out, &h, sizeof(h)) != SYMCOMM_OK)
    net_fail(ep, SYMCOMM_ERR_OUT_OF_MEMORY, "no memory for a hello to rank %d", c->peer->rank);
}

void net_peer_connect(sc_net_endpoint_t *ep, net_peer_t *p, int64_t now, int64_t *wake_ms) {
  if (!p->connecting) {
    if (p->sendq.head == NULL)
      return;
    p->connecting = true;
    p->connect_deadline_ms = ep->cfg.timeout_ms < 0 ? SC_DEADLINE_NEVER : now + ep->cfg.timeout_ms;
    p->retry_ms = now;
    p->backoff_ms = 5;
  }
  for (int i = 0; i <= ep->cfg.sockets; i++) {
    net_conn_t *c = &p->out[i];
    if (c->state != NET_CONN_IDLE)
      continue;
    if (now < p->retry_ms) {
      if (p->retry_ms < *wake_ms)
        *wake_ms = p->retry_ms;
      continue;
    }
    if (ep->ops->connect(&p->addr, &c->c) != SYMCOMM_OK) {
      char op[160], addr[96];
      net_peer_op_name(p, op, sizeof(op));
      ep->ops->addr_text(&p->addr, addr, sizeof(addr));
      net_fail(ep, SYMCOMM_ERR_SYSTEM, "%s: cannot connect to its address %s: %s", op, addr, strerror(errno));
      return;
    }
    c->state = NET_CONN_CONNECTING;
  }
}

static void net_connect_step(sc_net_endpoint_t *ep, net_conn_t *c) {
  net_peer_t *p = c->peer;
  bool done = false, retry = false;
  int err = 0;
  ep->ops->connect_done(c->c, &done, &retry, &err);
  if (done) {
    c->state = NET_CONN_OPEN;
    p->sendq.progress_ms = net_now_ms();
    net_hello_queue(ep, c);
    SC_TRACE(SC_NET, "%s: %s connection %d to rank %d open (%s)", ep->name, net_conn_kind(c), c->index,
             p->rank, ep->ops->remote(c->c));
    return;
  }
  ep->ops->close(c->c);
  c->c = NULL;
  c->state = NET_CONN_IDLE;
  char op[160], addr[96];
  net_peer_op_name(p, op, sizeof(op));
  ep->ops->addr_text(&p->addr, addr, sizeof(addr));
  int64_t now = net_now_ms();
  if (!retry) {
    net_fail(ep, SYMCOMM_ERR_SYSTEM, "%s: cannot connect to its address %s: %s", op, addr, strerror(err));
    return;
  }
  if (now >= p->connect_deadline_ms) {
    net_fail(ep, SYMCOMM_ERR_TIMEOUT, "%s: could not connect to its address %s in %.1f s (last: %s)", op,
             addr, (double)ep->cfg.timeout_ms / 1000.0, strerror(err));
    return;
  }
  p->retry_ms = now + p->backoff_ms;
  p->backoff_ms = p->backoff_ms * 2 > 500 ? 500 : p->backoff_ms * 2;
}

/* ---- accepting (the receiver's side): who is it? */

/* Connections that have not said hello yet, at most: strangers that connect
 * and stay silent cannot hold more (the oldest goes first, once silent for a
 * second: a burst of real peers says hello at once). */
#define SC_NET_MAX_SILENT 64
#define SC_NET_SILENT_MS 1000
/* How long the listener rests when the process is out of file descriptors
 * (its readiness would otherwise wake the thread without end). */
#define SC_NET_LISTEN_REST_MS 100

/* Closes the oldest connection still waiting for its hello, if it has been
 * silent for min_ms at least: true if there was one. */
static bool net_drop_oldest_silent(sc_net_endpoint_t *ep, const char *why, int64_t min_ms) {
  net_conn_t *oldest = NULL;
  for (net_conn_t *c = ep->accepted; c != NULL; c = c->next)
    if (c->state == NET_CONN_HELLO)
      oldest = c; /* the list is newest first */
  /* accepted at deadline - SC_NET_HELLO_MS */
  if (oldest == NULL || net_now_ms() - (oldest->deadline_ms - SC_NET_HELLO_MS) < min_ms)
    return false;
  SC_WARN(SC_NET, "%s: %s: the connection from %s, silent the longest, is closed", ep->name, why,
          ep->ops->remote(oldest->c));
  net_conn_close(ep, oldest);
  return true;
}

void net_accept_all(sc_net_endpoint_t *ep) {
  for (int i = 0; i < 64; i++) {
    int silent = 0;
    for (net_conn_t *c = ep->accepted; c != NULL; c = c->next)
      silent += c->state == NET_CONN_HELLO;
    if (silent >= SC_NET_MAX_SILENT &&
        !net_drop_oldest_silent(ep, "too many connections without a hello", SC_NET_SILENT_MS)) {
      /* All new: their hellos are read this turn; the rest wait in the backlog. */
      ep->listen_paused_until_ms = net_now_ms() + 10;
      return;
    }
    sc_net_conn_t *conn = NULL;
    sc_result_t r = ep->ops->accept(ep->listener, &conn);
    if (r != SYMCOMM_OK) {
      int err = errno;
      if (err == EMFILE || err == ENFILE) {
        /* Out of descriptors: make room if a stranger holds one, and let the
         * listener rest (it stays readable: polling it would spin). */
        net_drop_oldest_silent(ep, "out of file descriptors", 0);
        ep->listen_paused_until_ms = net_now_ms() + SC_NET_LISTEN_REST_MS;
      }
      SC_WARN(SC_NET, "%s: accepting a connection failed: %s", ep->name, strerror(err));
      return;
    }
    if (conn == NULL)
      return;
    net_conn_t *c = calloc(1, sizeof(*c));
    if (c == NULL || ep->failed != SYMCOMM_OK) {
      /* A failed endpoint answers with a close: its peers learn at once. */
      ep->ops->close(conn);
      free(c);
      continue;
    }
    net_conn_init(c, NULL, NET_IN, -1);
    c->c = conn;
    c->state = NET_CONN_HELLO;
    c->deadline_ms = net_now_ms() + SC_NET_HELLO_MS;
    c->next = ep->accepted;
    ep->accepted = c;
  }
}

/* Why a hello is refused ("" when it is not); a rank with other settings fails the endpoint. */
static void net_hello_check(sc_net_endpoint_t *ep, const sc_net_hello_t *h, char *why, size_t len) {
  why[0] = '\0';
  const sc_net_config_t *cfg = &ep->cfg;
  if (h->magic != SC_NET_HELLO_MAGIC)
    snprintf(why, len, "not a symcomm network hello");
  else if (h->version != SC_NET_VERSION)
    snprintf(why, len, "network protocol version %u (this rank speaks %u)", h->version, SC_NET_VERSION);
  else if (h->comm_id != cfg->comm_id)
    snprintf(why, len, "for communicator 0x%llx, not this one (0x%llx)", (unsigned long long)h->comm_id,
             (unsigned long long)cfg->comm_id);
  else if (h->token != cfg->token)
    snprintf(why, len, "a wrong token for communicator 0x%llx", (unsigned long long)cfg->comm_id);
  else if (h->to != cfg->rank)
    snprintf(why, len, "addressed to rank %d (this is rank %d)", h->to, cfg->rank);
  else if (h->from < 0 || h->from >= cfg->nranks || !ep->peers[h->from].remote)
    snprintf(why, len, "from rank %d, not a rank on another host", h->from);
  else if (h->count != (uint32_t)(1 + cfg->sockets) || h->chunk_bytes != cfg->chunk_bytes ||
           h->eager_bytes != cfg->eager_bytes)
    net_fail(ep, SYMCOMM_ERR_INVALID_USAGE,
             "rank %d connects with %u data sockets, %llu-byte chunks and messages of up to %u bytes "
             "without a grant, this rank uses %d, %zu and %zu: SYMCOMM_NET_SOCKETS, "
             "SYMCOMM_NET_CHUNK_BYTES and SYMCOMM_NET_EAGER_BYTES must be the same on every rank",
             h->from, h->count - 1, (unsigned long long)h->chunk_bytes, h->eager_bytes, cfg->sockets,
             cfg->chunk_bytes, cfg->eager_bytes);
  else if (h->index >= h->count)
    snprintf(why, len, "socket %u of %u", h->index, h->count);
  else if (ep->peers[h->from].in[h->index].state != NET_CONN_IDLE)
    snprintf(why, len, "a duplicate of %s connection %u from rank %d", h->index == 0 ? "the control" : "data",
             h->index, h->from);
}

void net_accepted_io(sc_net_endpoint_t *ep, net_conn_t *c, short revents) {
  (void)revents;
  size_t moved = 0;
  sc_result_t r = ep->ops->recv(c->c, c->in + c->in_len, sizeof(sc_net_hello_t) - c->in_len, &moved);
  if (r != SYMCOMM_OK) {
    SC_WARN(SC_NET, "%s: connection from %s closed before its hello (%zu of %zu bytes); ignored", ep->name,
            ep->ops->remote(c->c), c->in_len, sizeof(sc_net_hello_t));
    net_conn_close(ep, c);
    return;
  }
  c->in_len += moved;
  if (c->in_len < sizeof(sc_net_hello_t))
    return;
  sc_net_hello_t h;
  memcpy(&h, c->in, sizeof(h));
  char why[192];
  net_hello_check(ep, &h, why, sizeof(why));
  if (ep->failed != SYMCOMM_OK)
    return;
  if (why[0] != '\0') {
    SC_WARN(SC_NET, "%s: connection from %s closed: %s", ep->name, ep->ops->remote(c->c), why);
    net_conn_close(ep, c);
    return;
  }
  net_peer_t *p = &ep->peers[h.from];
  net_conn_t *to = &p->in[h.index];
  to->c = c->c;
  to->state = NET_CONN_OPEN;
  c->c = NULL;
  c->state = NET_CONN_CLOSED; /* the shell goes at the next turn */
  p->recvq.progress_ms = net_now_ms();
  SC_TRACE(SC_NET, "%s: %s connection %d from rank %d open (%s)", ep->name, net_conn_kind(to), to->index,
           p->rank, ep->ops->remote(to->c));
}

/* ---- writing */

void net_conn_flush_records(sc_net_endpoint_t *ep, net_conn_t *c) {
  if (c->state != NET_CONN_OPEN || c->out.off == c->out.len)
    return;
  struct iovec iov = {c->out.data + c->out.off, c->out.len - c->out.off};
  size_t moved = 0;
  if (ep->ops->send(c->c, &iov, 1, &moved) == SYMCOMM_OK)
    c->out.off += moved;
}

/* ---- reading */

static void net_read_lost(sc_net_endpoint_t *ep, net_conn_t *c, sc_result_t r) {
  net_peer_conn_lost(ep, c, r == SYMCOMM_ERR_REMOTE ? "closed" : strerror(errno));
}

/* Reads what is there; false when nothing was (or the connection is lost). */
static bool net_read_some(sc_net_endpoint_t *ep, net_conn_t *c, void *buf, size_t len, size_t *moved) {
  sc_result_t r = ep->ops->recv(c->c, buf, len, moved);
  if (r != SYMCOMM_OK) {
    net_read_lost(ep, c, r);
    return false;
  }
  return *moved > 0;
}

/* Records, and the bytes behind an EAGER record: what c->in holds of them
 * first, the rest read straight into their memory. */
static void net_read_ctrl(sc_net_endpoint_t *ep, net_conn_t *c) {
  for (size_t total = 0; total < NET_READ_BUDGET && c->state == NET_CONN_OPEN && ep->failed == SYMCOMM_OK;) {
    size_t moved = 0;
    if (c->eager != NULL) { /* c->in is empty */
      if (!net_read_some(ep, c, c->eager + c->eager_got, c->eager_len - c->eager_got, &moved))
        return;
      total += moved;
      c->eager_got += moved;
      if (c->eager_got == c->eager_len)
        net_eager_landed(ep, c);
      continue;
    }
    if (!net_read_some(ep, c, c->in + c->in_len, sizeof(c->in) - c->in_len, &moved))
      return;
    total += moved;
    c->in_len += moved;
    size_t used = 0;
    while (c->in_len - used >= sizeof(sc_net_rec_t) && ep->failed == SYMCOMM_OK) {
      sc_net_rec_t rec;
      memcpy(&rec, c->in + used, sizeof(rec));
      used += sizeof(rec);
      net_ctrl_records(ep, c, &rec);
      if (c->eager == NULL || ep->failed != SYMCOMM_OK)
        continue;
      size_t take = c->in_len - used < c->eager_len ? c->in_len - used : (size_t)c->eager_len;
      memcpy(c->eager, c->in + used, take);
      used += take;
      c->eager_got = take;
      if (c->eager_got < c->eager_len)
        break; /* c->in is used up: the rest is read into c->eager */
      net_eager_landed(ep, c);
    }
    if (ep->failed != SYMCOMM_OK)
      return;
    memmove(c->in, c->in + used, c->in_len - used);
    c->in_len -= used;
  }
}

void net_conn_io(sc_net_endpoint_t *ep, net_conn_t *c, short revents) {
  if (c->state == NET_CONN_CONNECTING) {
    if (revents & (POLLOUT | POLLERR | POLLHUP))
      net_connect_step(ep, c);
    return;
  }
  if (c->state != NET_CONN_OPEN)
    return;
  if (revents & POLLOUT)
    net_conn_flush(ep, c);
  if (c->state == NET_CONN_OPEN && ep->failed == SYMCOMM_OK && (revents & (POLLIN | POLLERR | POLLHUP)))
    net_read_ctrl(ep, c);
}
