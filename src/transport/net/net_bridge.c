#include "transport/net/net_bridge_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/param.h"
#include "util/secret.h"

_Static_assert(sizeof(sc_net_args_t) <= SC_LAUNCH_ARGS_MAX,
               "a full NET batch must fit a launch's arguments");
/* How long after a launch is queued the progress thread polls the queue
 * every few microseconds (GPUs post without waking it). */
#define SC_NET_HURRY_US 20000

_Static_assert(SC_NET_MAX_OPS * 2 <= SC_NET_QUEUE_SLOTS,
               "a launch's ops fit the queue twice over: a launch never waits for its own slots");

/* ---- the engine's callbacks (progress thread) */

static void *sc_net_chunk_ptr(sc_net_msg_t *m, uint64_t k) {
  sc_net_slot_t *s = (sc_net_slot_t *)m;
  if (!s->net->staged)
    return s->buf + k * s->net->chunk_bytes;
  return m->kind == SC_NET_SEND ? sc_net_stage_send_chunk(s, k) : sc_net_stage_recv_chunk(s, k);
}

static void sc_net_chunk_done(sc_net_msg_t *m, uint64_t k) {
  sc_net_slot_t *s = (sc_net_slot_t *)m;
  sc_net_t *net = s->net;
  if (net->staged) {
    if (m->kind == SC_NET_SEND)
      sc_net_stage_sent(s, k);
    else
      sc_net_stage_received(s, k);
  }
  /* Progress: a waiting program restarts its no-progress clock. */
  __atomic_fetch_add(&net->queue->moved, 1, __ATOMIC_RELEASE);
  net->ops->bell_ring(net->view->device, &net->queue->done_bell);
}

static void sc_net_finish(sc_net_msg_t *m, sc_result_t res) {
  sc_net_slot_t *s = (sc_net_slot_t *)m;
  s->engine_done = true;
  s->result = res;
  if (s->net->staged && m->kind == SC_NET_SEND && s->net->pools != NULL)
    sc_net_stage_drop_sends(s);
  /* A staged receive ends when its last copy to the device did: even a
   * failed one, so that no copy writes a buffer its owner got back. */
  if (s->unloading == 0)
    sc_net_slot_complete(s);
}

void sc_net_slot_complete(sc_net_slot_t *s) {
  if (!s->active || !s->engine_done || s->unloading > 0)
    return;
  sc_net_t *net = s->net;
  uint64_t done = (uint64_t)(uint32_t)(s->ticket + 1u);
  if (s->result != SYMCOMM_OK)
    done |= SC_SLOT_ERROR;
  s->active = false;
  __atomic_store_n(&net->queue->done[s->ticket % SC_NET_QUEUE_SLOTS], done, __ATOMIC_RELEASE);
  net->ops->bell_ring(net->view->device, &net->queue->done_bell);
}

void sc_net_bridge_fail(sc_net_t *net, sc_result_t res, const char *sentence) {
  SC_WARN(SC_NET, "rank %d: %s", net->view->rank, sentence);
  net->fail(net->fail_ctx, res, sentence);
}

static void sc_net_on_fail(void *ctx, sc_result_t res, const char *sentence) {
  sc_net_t *net = ctx;
  net->fail(net->fail_ctx, res, sentence);
}

/* ---- the queue (progress thread) */

/* Entry s as a message for the engine; false when the entry makes no sense
 * (then it is done, failed, and the communicator with it). */
static bool sc_net_take(sc_net_t *net, uint32_t t, const sc_net_entry_t *e, sc_net_slot_t *s) {
  memset(s, 0, sizeof(*s));
  s->net = net;
  s->ticket = t;
  s->active = true;
  s->buf = (char *)(uintptr_t)e->buf;
  s->msg.peer = e->peer;
  s->msg.kind = e->kind == SC_NET_OP_SEND ? SC_NET_SEND : SC_NET_RECV;
  s->msg.bytes = e->bytes;
  s->msg.chunk_ptr = sc_net_chunk_ptr;
  s->msg.chunk_done = sc_net_chunk_done;
  s->msg.finish = sc_net_finish;
  s->msg.user = net;
  const sc_comm_view_t *v = net->view;
  if (e->peer < 0 || e->peer >= v->nranks || v->local_of[e->peer] >= 0 ||
      (e->kind != SC_NET_OP_SEND && e->kind != SC_NET_OP_RECV)) {
    char why[160];
    snprintf(why, sizeof(why), "a device program posted a network op for rank %d of kind %d",
             e->peer, e->kind);
    sc_net_bridge_fail(net, SYMCOMM_ERR_INTERNAL, why);
    return false;
  }
  return true;
}

/* Takes the entries the programs posted, in ticket order; a slot's next
 * entry waits until its previous message is done. */
static void sc_net_take_posted(sc_net_t *net) {
  sc_net_queue_t *q = net->queue;
  for (;;) {
    uint32_t t = net->taken;
    sc_net_slot_t *s = &net->slot[t % SC_NET_QUEUE_SLOTS];
    if (s->active)
      return;
    const sc_net_entry_t *e = &q->entry[t % SC_NET_QUEUE_SLOTS];
    uint64_t posted = __atomic_load_n(&e->posted, __ATOMIC_ACQUIRE);
    if ((uint32_t)posted != (uint32_t)(t + 1u))
      return;
    net->taken = t + 1u;
    if (!sc_net_take(net, t, e, s)) {
      s->engine_done = true;
      s->result = SYMCOMM_ERR_INTERNAL;
      sc_net_slot_complete(s);
      continue;
    }
    sc_result_t res = sc_net_post(net->ep, &s->msg);
    if (res != SYMCOMM_OK) {
      /* The endpoint failed before (its fail() said why) or cannot take it. */
      sc_net_bridge_fail(net, res, sc_error_last());
      s->engine_done = true;
      s->result = res;
      sc_net_slot_complete(s);
    }
  }
}

/* The progress thread's turn. How soon it must come again: copies to watch
 * (they end without a wake-up), or launches queued whose ops are not posted
 * yet (a GPU posts without waking anyone); on the simulated backend the
 * program's ring wakes the thread (the queue bell's notify fd). */
static int64_t sc_net_poll(void *ctx) {
  sc_net_t *net = ctx;
  sc_net_take_posted(net);
  bool copying = net->staged && sc_net_stage_poll(net);
  bool awaited = sc_now_us() < atomic_load(&net->hurry_until_us);
  if (net->ops->host_reaches_buffers(net->view->device))
    return copying ? 50 : -1;
  if (copying || awaited)
    return 2;
  /* A CUDA graph replays launches without the host knowing: look now and then. */
  return 1000;
}

/* ---- setup */

static sc_result_t sc_net_params(sc_net_config_t *cfg, bool *force_staging) {
  long long staging = 0;
  SC_CHECK(sc_net_config_from_env(cfg));
  SC_CHECK(sc_param_int(SC_PARAM_NET_STAGING, &staging, NULL));
  if (staging != 0 && staging != 1)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV, "SYMCOMM_NET_STAGING=%lld: use 0 or 1",
                    staging);
  *force_staging = staging == 1;
  return SYMCOMM_OK;
}

static sc_result_t sc_net_make_desc(sc_net_t *net) {
  const sc_comm_view_t *v = net->view;
  sc_net_desc_t host;
  memset(&host, 0, sizeof(host));
  host.guard = v->guard;
  host.guard.call = SC_CALL_NET;
  host.queue = net->queue;
  void *dev = NULL;
  SC_CHECK(v->ops->dev_alloc(v->device, sizeof(host), &dev));
  net->desc = dev;
  return v->ops->upload(v->device, dev, &host, sizeof(host));
}

static sc_result_t sc_net_connect_all(sc_net_t *net, sc_net_config_t *cfg) {
  sc_comm_view_t *v = net->view;
  sc_result_t res = SYMCOMM_OK;
  sc_net_addr_t mine;
  memset(&mine, 0, sizeof(mine));
  sc_net_addr_t *all = calloc((size_t)v->nranks, sizeof(*all));
  bool *remote = calloc((size_t)v->nranks, sizeof(*remote));
  if (all == NULL || remote == NULL) {
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_NET, "no memory for %d ranks' addresses", v->nranks);
    goto done;
  }
  SC_CHECK_GOTO(sc_net_endpoint_open(cfg, &net->ep, &mine), res, done);
  /* The simulated backend's program wakes the progress thread when it posts
   * (the thread, and its fd, live while an endpoint is open). */
  net->queue->bell.notify_fd = sc_net_wake_fd();
  SC_CHECK_GOTO(sc_bootstrap_allgather(v->boot, "net addresses", &mine, sizeof(mine), all), res,
                done);
  for (int r = 0; r < v->nranks; r++)
    remote[r] = v->local_of[r] < 0;
  SC_CHECK_GOTO(sc_net_endpoint_set_peers(net->ep, all, remote), res, done);
  SC_CHECK_GOTO(sc_net_endpoint_add_poller(net->ep, sc_net_poll, net), res, done);
done:
  free(all);
  free(remote);
  return res;
}

sc_result_t sc_net_create(sc_comm_view_t *view, sc_net_fail_fn fail, void *fail_ctx,
                          sc_net_t **out) {
  sc_net_t *net = calloc(1, sizeof(*net));
  if (net == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_NET, "no memory for the network transport");
  sc_result_t res;
  net->view = view;
  net->ops = view->ops;
  net->fail = fail;
  net->fail_ctx = fail_ctx;
  atomic_init(&net->hurry_until_us, 0);
  snprintf(net->name, sizeof(net->name), "rank %d", view->rank);
  sc_net_config_t cfg = {.rank = view->rank, .nranks = view->nranks,
                         .comm_id = sc_secret_derive64(&view->secret, "net comm id", 0, 0, 0),
                         .token = sc_secret_derive64(&view->secret, "net token", 0, 0, 0),
                         .timeout_ms = view->timeout_ms, .name = net->name,
                         .fail = sc_net_on_fail, .fail_ctx = net};
  bool force_staging = false;
  SC_CHECK_GOTO(sc_net_params(&cfg, &force_staging), res, fail);
  net->chunk_bytes = cfg.chunk_bytes;
  net->window = cfg.window;
  net->staged = force_staging || !net->ops->host_reaches_buffers(view->device);
  void *q = NULL;
  SC_CHECK_GOTO(net->ops->host_alloc(view->device, sizeof(sc_net_queue_t), &q), res, fail);
  net->queue = q;
  memset(net->queue, 0, sizeof(*net->queue));
  SC_CHECK_GOTO(sc_net_make_desc(net), res, fail);
  if (net->staged) {
    net->pools = calloc(2 * (size_t)view->nranks, sizeof(*net->pools));
    if (net->pools == NULL) {
      res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_NET, "no memory for staging pools");
      goto fail;
    }
    SC_CHECK_GOTO(net->ops->stream_create(view->device, &net->load_stream), res, fail);
    SC_CHECK_GOTO(net->ops->stream_create(view->device, &net->unload_stream), res, fail);
  }
  SC_CHECK_GOTO(sc_net_connect_all(net, &cfg), res, fail);
  SC_INFO(SC_NET, "rank %d: network transport ready (%d sockets, %zu-byte chunks, %d in flight%s)",
          view->rank, cfg.sockets, cfg.chunk_bytes, cfg.window,
          net->staged ? ", staged through pinned host memory" : "");
  *out = net;
  return SYMCOMM_OK;
fail:
  sc_net_destroy(net);
  return res;
}

void sc_net_destroy(sc_net_t *net) {
  if (net == NULL)
    return;
  const sc_comm_view_t *v = net->view;
  /* First the engine: after this, no callback of ours runs. */
  if (net->ep != NULL)
    sc_net_endpoint_close(net->ep);
  /* Then the staging copies, before the chunks they use. */
  if (net->load_stream != NULL)
    net->ops->stream_destroy(net->load_stream, sc_deadline_after(v->timeout_ms));
  if (net->unload_stream != NULL)
    net->ops->stream_destroy(net->unload_stream, sc_deadline_after(v->timeout_ms));
  sc_net_stage_free(net);
  if (net->desc != NULL)
    net->ops->dev_free(v->device, net->desc);
  if (net->queue != NULL)
    net->ops->host_free(v->device, net->queue);
  free(net);
}

sc_result_t sc_net_launch(sc_net_t *net, sc_stream_t *stream, const sc_net_op_t *ops, int n,
                          int call, uint64_t seq) {
  if (n > SC_NET_MAX_OPS)
    return SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_NET,
                    "%d sends and receives with other hosts in one group on one stream: at most "
                    "%d (spread them over several streams or groups)",
                    n, SC_NET_MAX_OPS);
  sc_net_args_t args;
  args.desc = net->desc;
  args.nops = (uint32_t)n;
  args.call = call;
  args.seq = seq;
  memcpy(args.ops, ops, sizeof(*ops) * (size_t)n);
  SC_CHECK(net->ops->launch(stream, SC_PROGRAM_NET, &args, (size_t)sc_net_args_bytes((uint32_t)n),
                            SC_LAUNCH_ONE(net->view->status)));
  /* A launch captured into a CUDA graph posts when replayed, unannounced
   * (the thread's slow look finds it); one that runs now is looked for
   * often for a while: it posts once the work before it on its stream ended. */
  if (!net->ops->stream_capturing(stream))
    atomic_store(&net->hurry_until_us, sc_now_us() + SC_NET_HURRY_US);
  sc_net_wake();
  return SYMCOMM_OK;
}
