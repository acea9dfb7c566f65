/* A turn's data bytes, moved by several threads.
 *
 * One thread cannot push bytes through the kernel's TCP stack as fast as the
 * stack takes them: on a 32-core GPU host one thread serving 4 sockets each
 * way moved 2.1 GB/s where a thread per socket moved 9.3 GB/s. So the
 * progress thread keeps every decision (grants, dispatch, slots, finishing,
 * failures) and hands the turn's ready data connections to helper threads
 * (SYMCOMM_NET_THREADS), taking a share itself, and joins them before it goes
 * on. A connection's bytes are moved by one thread at a time; what that
 * thread found (chunks that left or landed, a closed connection, a bad
 * header) waits in the connection's `io` until the progress thread settles it
 * after the join. While the helpers run, nothing else changes a connection or
 * a slot: the only shared write is a header claiming its slot (two
 * connections of one peer may read headers at once), an atomic exchange. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "transport/net/net_internal.h"
#include "util/param.h"

/* Bytes one connection moves in one turn, so that one busy socket does not starve the others. */
#define NET_IO_BUDGET (8u << 20)
/* The default helper count: a thread per 4 cores (none on a small machine,
 * where 16 ranks share 2 cores and more threads would only take turns). */
#define NET_IO_CORES_PER_THREAD 4
#define NET_IO_MAX_THREADS 32

static struct {
  pthread_mutex_t lock;
  pthread_cond_t work, done;
  pthread_t threads[NET_IO_MAX_THREADS];
  int n;
  bool stop;
  uint64_t generation; /* bumped for each batch */
  net_io_item_t *items;
  int n_items, next, finished;
} io = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

/* ---- moving bytes (any thread; touches only the connection and its slot) */

static void net_io_lost(net_conn_t *c, sc_result_t r) {
  c->io.lost = r;
  c->io.err = errno;
}

void net_conn_write(sc_net_endpoint_t *ep, net_conn_t *c) {
  enum { MAX_IOV = 32 };
  while (c->state == NET_CONN_OPEN && ep->failed == SYMCOMM_OK && c->io.lost == SYMCOMM_OK) {
    struct iovec iov[MAX_IOV];
    int n = 0;
    if (c->out.off < c->out.len)
      iov[n++] = (struct iovec){c->out.data + c->out.off, c->out.len - c->out.off};
    for (int i = 0; i < c->ring_count && n + 2 <= MAX_IOV; i++) {
      net_chunk_out_t *co = &c->ring[(c->ring_head + i) % c->ring_cap];
      size_t hdr = sizeof(co->hdr);
      if (co->done < hdr)
        iov[n++] = (struct iovec){(uint8_t *)&co->hdr + co->done, hdr - co->done};
      size_t from = co->done > hdr ? co->done - hdr : 0;
      if (from < co->hdr.length)
        iov[n++] = (struct iovec){(void *)(co->ptr + from), co->hdr.length - from};
    }
    if (n == 0)
      return;
    size_t moved = 0;
    sc_result_t r = ep->ops->send(c->c, iov, n, &moved);
    if (r != SYMCOMM_OK) {
      net_io_lost(c, r);
      return;
    }
    if (moved == 0)
      return;
    size_t buffered = c->out.len - c->out.off;
    size_t take = moved < buffered ? moved : buffered;
    c->out.off += take;
    moved -= take;
    if (moved > 0)
      c->io.moved = true;
    while (moved > 0) {
      net_chunk_out_t *co = &c->ring[c->ring_head];
      size_t left = sizeof(co->hdr) + co->hdr.length - co->done;
      take = moved < left ? moved : left;
      co->done += take;
      c->queued -= take;
      moved -= take;
      if (co->done == sizeof(co->hdr) + co->hdr.length) {
        c->io.sent[c->io.n_sent++] = *co;
        c->ring_head = (c->ring_head + 1) % c->ring_cap;
        c->ring_count--;
      }
    }
  }
}

/* Reads what is there; false when nothing was (or the connection is lost). */
static bool net_io_read(sc_net_endpoint_t *ep, net_conn_t *c, void *buf, size_t len, size_t *moved) {
  sc_result_t r = ep->ops->recv(c->c, buf, len, moved);
  if (r != SYMCOMM_OK) {
    net_io_lost(c, r);
    return false;
  }
  return *moved > 0;
}

/* Chunks in: a header, checked and matched with its granted slot before a
 * byte of it lands, then its payload straight into the slot's memory. */
static void net_io_read_chunks(sc_net_endpoint_t *ep, net_conn_t *c) {
  net_peer_t *p = c->peer;
  for (size_t total = 0; total < NET_IO_BUDGET && c->io.lost == SYMCOMM_OK && !c->io.bad;) {
    size_t moved = 0;
    net_slot_t *sl = c->slot < 0 ? NULL : &p->slots[c->slot];
    bool got = sl == NULL ? net_io_read(ep, c, c->in + c->in_len, sizeof(sc_net_chunk_hdr_t) - c->in_len, &moved)
                          : net_io_read(ep, c, sl->ptr + c->slot_got, sl->length - c->slot_got, &moved);
    if (!got)
      return;
    total += moved;
    c->io.moved = true;
    if (sl == NULL) {
      c->in_len += moved;
      if (c->in_len < sizeof(sc_net_chunk_hdr_t))
        continue;
      sc_net_chunk_hdr_t h;
      memcpy(&h, c->in, sizeof(h));
      c->in_len = 0;
      c->slot = net_chunk_claim(ep, c, &h, c->io.why, sizeof(c->io.why));
      c->slot_got = 0;
      if (c->slot < 0) {
        c->io.bad = true;
        return;
      }
    } else {
      c->slot_got += moved;
      if (c->slot_got == sl->length) {
        c->io.landed[c->io.n_landed++] = c->slot;
        c->slot = -1;
      }
    }
  }
}

/* The receiver never writes on a data connection it accepted: anything but its close is a protocol error. */
static void net_io_read_stray(sc_net_endpoint_t *ep, net_conn_t *c) {
  size_t moved = 0;
  if (!net_io_read(ep, c, c->in, sizeof(c->in), &moved) || moved == 0)
    return;
  char op[160];
  net_peer_op_name(c->peer, op, sizeof(op));
  snprintf(c->io.why, sizeof(c->io.why), "%s: rank %d wrote %zu bytes on data connection %d, where it only reads",
           op, c->peer->rank, moved, c->index);
  c->io.bad = true;
}

static void net_io_data(sc_net_endpoint_t *ep, net_conn_t *c, short revents) {
  if (revents & POLLOUT)
    net_conn_write(ep, c);
  if (c->io.lost != SYMCOMM_OK || !(revents & (POLLIN | POLLERR | POLLHUP)))
    return;
  if (c->dir == NET_IN)
    net_io_read_chunks(ep, c);
  else
    net_io_read_stray(ep, c);
}

/* ---- settling (the progress thread, after the join) */

void net_conn_settle(sc_net_endpoint_t *ep, net_conn_t *c) {
  net_peer_t *p = c->peer;
  if (c->io.moved)
    (c->dir == NET_OUT ? &p->sendq : &p->recvq)->progress_ms = net_now_ms();
  c->io.moved = false;
  /* What moved before a failure still counts (a chunk that landed is whole). */
  for (int i = 0; i < c->io.n_sent && ep->failed == SYMCOMM_OK; i++)
    net_chunk_sent(ep, p, &c->io.sent[i]);
  c->io.n_sent = 0;
  for (int i = 0; i < c->io.n_landed && ep->failed == SYMCOMM_OK; i++)
    net_chunk_landed(ep, p, c->io.landed[i]);
  c->io.n_landed = 0;
  if (c->io.bad) {
    c->io.bad = false;
    net_fail(ep, SYMCOMM_ERR_REMOTE, "%s", c->io.why);
  }
  if (c->io.lost != SYMCOMM_OK) {
    sc_result_t r = c->io.lost;
    c->io.lost = SYMCOMM_OK;
    if (ep->failed == SYMCOMM_OK)
      net_peer_conn_lost(ep, c, r == SYMCOMM_ERR_REMOTE ? "closed" : strerror(c->io.err));
  }
}

void net_conn_flush(sc_net_endpoint_t *ep, net_conn_t *c) {
  net_conn_write(ep, c);
  net_conn_settle(ep, c);
}

/* ---- the helpers */

static void net_io_do(const net_io_item_t *it) {
  if (it->ep->failed == SYMCOMM_OK && it->conn->state == NET_CONN_OPEN)
    net_io_data(it->ep, it->conn, it->revents);
}

/* Takes and does the batch's items until none is left; under io.lock. */
static void net_io_take_items(void) {
  while (io.next < io.n_items) {
    net_io_item_t *it = &io.items[io.next++];
    pthread_mutex_unlock(&io.lock);
    net_io_do(it);
    pthread_mutex_lock(&io.lock);
    if (++io.finished == io.n_items)
      pthread_cond_signal(&io.done);
  }
}

static void *net_io_main(void *arg) {
  (void)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&io.lock);
  for (;;) {
    while (!io.stop && io.generation == seen)
      pthread_cond_wait(&io.work, &io.lock);
    if (io.stop)
      break;
    seen = io.generation;
    net_io_take_items();
  }
  pthread_mutex_unlock(&io.lock);
  return NULL;
}

void net_io_run(net_io_item_t *items, int n) {
  if (io.n == 0 || n < 2) {
    for (int i = 0; i < n; i++)
      net_io_do(&items[i]);
    return;
  }
  pthread_mutex_lock(&io.lock);
  io.items = items;
  io.n_items = n;
  io.next = io.finished = 0;
  io.generation++;
  pthread_cond_broadcast(&io.work);
  net_io_take_items();
  while (io.finished < io.n_items)
    pthread_cond_wait(&io.done, &io.lock);
  io.items = NULL;
  io.n_items = io.next = io.finished = 0;
  pthread_mutex_unlock(&io.lock);
}

sc_result_t net_io_start(void) {
  long long want = 0;
  SC_CHECK(net_param_range(SC_PARAM_NET_THREADS, -1, NET_IO_MAX_THREADS, &want));
  int n = (int)want;
  if (n < 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    n = cores > 0 ? (int)(cores / NET_IO_CORES_PER_THREAD) : 0;
    if (n > 8)
      n = 8;
  }
  io.stop = false;
  io.n = 0;
  for (int i = 0; i < n; i++) {
    int err = pthread_create(&io.threads[i], NULL, net_io_main, NULL);
    if (err != 0) {
      /* Fewer helpers only means slower: the progress thread moves the rest itself. */
      SC_WARN(SC_NET, "network: started %d of %d data threads (SYMCOMM_NET_THREADS): %s", i, n, strerror(err));
      break;
    }
    io.n++;
  }
  SC_INFO(SC_NET, "network: %d data threads beside the progress thread (SYMCOMM_NET_THREADS)", io.n);
  return SYMCOMM_OK;
}

void net_io_stop(void) {
  pthread_mutex_lock(&io.lock);
  io.stop = true;
  pthread_cond_broadcast(&io.work);
  pthread_mutex_unlock(&io.lock);
  for (int i = 0; i < io.n; i++)
    pthread_join(io.threads[i], NULL);
  io.n = 0;
}
