/* The network engine's API (net_engine.h): endpoints, posting, pollers; and
 * how an endpoint fails or shuts down. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/net/net_internal.h"
#include "util/clock.h"
#include "util/param.h"

int64_t net_now_ms(void) { return sc_now_ms(); }

sc_result_t net_param_range(sc_param_id_t id, long long lo, long long hi, long long *out) {
  long long v = 0;
  bool set = false;
  SC_CHECK(sc_param_int(id, &v, &set));
  if (v < lo || v > hi)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV, "%s=%lld is out of range (%lld to %lld)",
                    sc_param_def(id)->name, v, lo, hi);
  *out = v;
  return SYMCOMM_OK;
}

sc_result_t sc_net_config_from_env(sc_net_config_t *cfg) {
  long long sockets, chunk, window, eager;
  SC_CHECK(net_param_range(SC_PARAM_NET_SOCKETS, 1, 64, &sockets));
  SC_CHECK(net_param_range(SC_PARAM_NET_CHUNK_BYTES, 4096, 1ll << 30, &chunk));
  SC_CHECK(net_param_range(SC_PARAM_NET_WINDOW, 1, 1024, &window));
  SC_CHECK(net_param_range(SC_PARAM_NET_EAGER_BYTES, 0, 1 << 20, &eager));
  cfg->sockets = (int)sockets;
  cfg->chunk_bytes = (size_t)chunk;
  cfg->window = (int)window;
  /* A message that goes eagerly is one chunk. */
  cfg->eager_bytes = (size_t)(eager < chunk ? eager : chunk);
  return SYMCOMM_OK;
}

void net_msg_name(const sc_net_msg_t *m, char *buf, size_t len) {
  bool send = m->kind == SC_NET_SEND;
  snprintf(buf, len, "%s #%llu of %llu bytes %s rank %d", send ? "send" : "receive",
           (unsigned long long)m->engine.seq, (unsigned long long)m->bytes, send ? "to" : "from",
           m->peer);
}

void net_peer_op_name(const net_peer_t *p, char *buf, size_t len) {
  if (p->recvq.head != NULL)
    net_msg_name(p->recvq.head, buf, len);
  else if (p->sendq.head != NULL)
    net_msg_name(p->sendq.head, buf, len);
  else
    snprintf(buf, len, "the exchange with rank %d", p->rank);
}

static void net_peer_free(sc_net_endpoint_t *ep, net_peer_t *p) {
  int n = 1 + ep->cfg.sockets;
  for (int i = 0; p->out != NULL && i < n; i++) {
    net_conn_close(ep, &p->out[i]);
    free(p->out[i].out.data);
    free(p->out[i].ring);
    free(p->out[i].io.sent);
  }
  for (int i = 0; p->in != NULL && i < n; i++) {
    net_conn_close(ep, &p->in[i]);
    free(p->in[i].out.data);
    free(p->in[i].io.landed);
  }
  free(p->out);
  free(p->in);
  free(p->slots);
  free(p->grants);
  net_queue_free(&p->sendq);
  net_queue_free(&p->recvq);
}

static void net_ep_free(sc_net_endpoint_t *ep) {
  if (ep->peers != NULL)
    for (int r = 0; r < ep->cfg.nranks; r++)
      if (ep->peers[r].remote)
        net_peer_free(ep, &ep->peers[r]);
  free(ep->peers);
  while (ep->accepted != NULL) {
    net_conn_t *c = ep->accepted;
    ep->accepted = c->next;
    net_conn_free(ep, c);
  }
  if (ep->listener != NULL)
    ep->ops->close_listener(ep->listener);
  free(ep->pollers);
  free(ep->new_pollers);
  free(ep);
}

sc_result_t sc_net_endpoint_open(const sc_net_config_t *cfg, sc_net_endpoint_t **out, sc_net_addr_t *addr) {
  if (cfg == NULL || out == NULL || addr == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET, "network endpoint: a NULL argument");
  if (cfg->nranks < 1 || cfg->rank < 0 || cfg->rank >= cfg->nranks || cfg->sockets < 1 ||
      cfg->sockets > 64 || cfg->chunk_bytes < 1 || cfg->window < 1 || cfg->window > 1024 ||
      cfg->eager_bytes > cfg->chunk_bytes || cfg->eager_bytes > UINT32_MAX)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET,
                    "network endpoint: rank %d of %d, %d sockets, %zu-byte chunks, window %d, messages of up to "
                    "%zu bytes without a grant: out of range", cfg->rank, cfg->nranks, cfg->sockets,
                    cfg->chunk_bytes, cfg->window, cfg->eager_bytes);
  sc_result_t r;
  sc_net_endpoint_t *ep = calloc(1, sizeof(*ep));
  if (ep == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_NET, "no memory for a network endpoint");
  ep->cfg = *cfg;
  snprintf(ep->name, sizeof(ep->name), "%s", cfg->name != NULL ? cfg->name : "network endpoint");
  ep->cfg.name = ep->name;
  ep->ops = sc_net_default_ops();
  ep->fault_seq_after = -1;
  const char *fault = sc_param_string(SC_PARAM_NET_FAULT);
  if (fault != NULL) {
    if (strcmp(fault, "seq") != 0) {
      r = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV, "SYMCOMM_NET_FAULT='%s' is not 'seq'", fault);
      goto fail_ep;
    }
    ep->fault_seq_after = 2; /* the third chunk: some of a message has landed already */
  }
  sc_net_addr_t a;
  SC_CHECK_GOTO(ep->ops->listen(&ep->listener, &a), r, fail_ep);
  SC_CHECK_GOTO(net_thread_add(ep), r, fail_ep);
  char text[96];
  ep->ops->addr_text(&a, text, sizeof(text));
  SC_INFO(SC_NET, "%s: network endpoint on %s (%s, %d data sockets per pair, %zu-byte chunks, window %d, "
          "up to %zu bytes eagerly)", ep->name, text, ep->ops->name, cfg->sockets, cfg->chunk_bytes, cfg->window,
          cfg->eager_bytes);
  *addr = a;
  *out = ep;
  return SYMCOMM_OK;
fail_ep:
  net_ep_free(ep);
  return r;
}

static sc_result_t net_peer_init(sc_net_endpoint_t *ep, net_peer_t *p) {
  int n = 1 + ep->cfg.sockets;
  p->out = calloc((size_t)n, sizeof(*p->out));
  p->in = calloc((size_t)n, sizeof(*p->in));
  p->slots = calloc((size_t)ep->cfg.window, sizeof(*p->slots));
  if (p->out == NULL || p->in == NULL || p->slots == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_NET, "no memory for the connections with rank %d", p->rank);
  for (int i = 0; i < n; i++) {
    net_conn_init(&p->out[i], p, NET_OUT, i);
    net_conn_init(&p->in[i], p, NET_IN, i);
    if (i == 0)
      continue;
    p->out[i].ring = calloc((size_t)ep->cfg.window, sizeof(*p->out[i].ring));
    p->out[i].io.sent = calloc((size_t)ep->cfg.window, sizeof(*p->out[i].io.sent));
    p->in[i].io.landed = calloc((size_t)ep->cfg.window, sizeof(*p->in[i].io.landed));
    if (p->out[i].ring == NULL || p->out[i].io.sent == NULL || p->in[i].io.landed == NULL)
      return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_NET, "no memory for the chunks to rank %d", p->rank);
    p->out[i].ring_cap = ep->cfg.window;
  }
  return SYMCOMM_OK;
}

sc_result_t sc_net_endpoint_set_peers(sc_net_endpoint_t *ep, const sc_net_addr_t *addrs, const bool *remote) {
  if (ep == NULL || addrs == NULL || remote == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET, "network peers: a NULL argument");
  if (ep->peers != NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_NET, "%s: the network peers are set already", ep->name);
  int n = ep->cfg.nranks;
  net_peer_t *peers = calloc((size_t)n, sizeof(*peers));
  if (peers == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_NET, "no memory for %d network peers", n);
  ep->peers = peers; /* the thread reads it only once peers_set is seen under the lock */
  sc_result_t r = SYMCOMM_OK;
  for (int i = 0; i < n && r == SYMCOMM_OK; i++) {
    peers[i].rank = i;
    peers[i].addr = addrs[i];
    peers[i].remote = remote[i] && i != ep->cfg.rank;
    if (peers[i].remote)
      r = net_peer_init(ep, &peers[i]);
  }
  if (r != SYMCOMM_OK) {
    for (int i = 0; i < n; i++)
      if (peers[i].remote)
        net_peer_free(ep, &peers[i]);
    free(peers);
    ep->peers = NULL;
    return r;
  }
  net_lock();
  ep->peers_set = true;
  net_unlock();
  sc_net_wake();
  return SYMCOMM_OK;
}

void sc_net_endpoint_close(sc_net_endpoint_t *ep) {
  if (ep == NULL)
    return;
  net_thread_remove(ep);
  net_ep_free(ep);
}

sc_result_t sc_net_post(sc_net_endpoint_t *ep, sc_net_msg_t *m) {
  if (ep == NULL || m == NULL || m->finish == NULL || (m->kind != SC_NET_SEND && m->kind != SC_NET_RECV) ||
      (m->bytes > 0 && (m->chunk_ptr == NULL || m->chunk_done == NULL)))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET,
                    "network post: a NULL endpoint or message, a kind that is not send or receive, or missing callbacks");
  char sentence[sizeof(ep->sentence)];
  net_lock();
  sc_result_t failed = ep->result;
  bool closing = ep->closing, set = ep->peers_set;
  bool peer_ok = set && m->peer >= 0 && m->peer < ep->cfg.nranks && ep->peers[m->peer].remote;
  if (failed != SYMCOMM_OK)
    memcpy(sentence, ep->sentence, sizeof(sentence));
  else if (!closing && peer_ok) {
    m->engine.next = NULL;
    if (ep->inbox_tail != NULL)
      ep->inbox_tail->engine.next = m;
    else
      ep->inbox_head = m;
    ep->inbox_tail = m;
  }
  net_unlock();
  if (failed != SYMCOMM_OK)
    return sc_error_pass(failed, sentence);
  if (closing)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_NET, "%s: post on a network endpoint that is closing", ep->name);
  if (!set)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_NET, "%s: post before the network peers are set", ep->name);
  if (!peer_ok)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET,
                    "%s: rank %d is not a rank on another host of %d ranks", ep->name, m->peer,
                    ep->cfg.nranks);
  if (!net_on_thread())
    sc_net_wake();
  return SYMCOMM_OK;
}

sc_result_t sc_net_endpoint_add_poller(sc_net_endpoint_t *ep, sc_net_poll_fn fn, void *ctx) {
  if (ep == NULL || fn == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET, "network poller: a NULL argument");
  net_lock();
  bool ok = !ep->closing && net_grow((void **)&ep->new_pollers, &ep->cap_new_pollers,
                                     (size_t)ep->n_new_pollers + 1, sizeof(*ep->new_pollers));
  if (ok)
    ep->new_pollers[ep->n_new_pollers++] = (net_poller_t){.fn = fn, .ctx = ctx};
  net_unlock();
  if (!ok)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_NET, "%s: cannot add a network poller (closing, or no memory)", ep->name);
  sc_net_wake();
  return SYMCOMM_OK;
}

void net_ep_shutdown(sc_net_endpoint_t *ep, sc_result_t res) {
  int n = 1 + ep->cfg.sockets;
  if (ep->peers_ready) {
    /* What the peers are owed (a SIZE record that lets them name a mismatch) goes first, if it can at once. */
    for (int r = 0; r < ep->cfg.nranks; r++)
      if (ep->peers[r].remote) {
        net_conn_flush_records(ep, &ep->peers[r].out[0]);
        net_conn_flush_records(ep, &ep->peers[r].in[0]);
      }
    for (int r = 0; r < ep->cfg.nranks; r++)
      if (ep->peers[r].remote)
        for (int i = 0; i < n; i++) {
          net_conn_close(ep, &ep->peers[r].out[i]);
          net_conn_close(ep, &ep->peers[r].in[i]);
        }
  }
  for (net_conn_t *c = ep->accepted; c != NULL; c = c->next)
    net_conn_close(ep, c);
  if (ep->peers_ready)
    net_msgs_finish_all(ep, res);
  sc_net_msg_t *m = ep->taken;
  ep->taken = NULL;
  while (m != NULL) {
    sc_net_msg_t *next = m->engine.next;
    m->finish(m, res);
    m = next;
  }
}

void net_fail(sc_net_endpoint_t *ep, sc_result_t res, const char *fmt, ...) {
  if (ep->failed != SYMCOMM_OK)
    return;
  char sentence[sizeof(ep->sentence)];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sentence, sizeof(sentence), fmt, ap);
  va_end(ap);
  ep->failed = res;
  net_lock();
  ep->result = res;
  memcpy(ep->sentence, sentence, sizeof(sentence));
  net_unlock();
  SC_WARN(SC_NET, "%s: %s", ep->name, sentence);
  if (ep->cfg.fail != NULL)
    ep->cfg.fail(ep->cfg.fail_ctx, res, sentence);
  net_ep_shutdown(ep, res);
}
