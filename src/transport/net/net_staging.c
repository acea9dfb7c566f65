/* Staging: GPU data crosses the network through pinned host chunks. A send's
 * chunk is copied device to host (the load stream) when the engine first asks
 * for it, and handed over once that copy's event completed; it is free again
 * when the engine has sent it. A receive's chunk is handed to the engine when
 * asked for, copied host to device (the unload stream) once its bytes landed,
 * and free again when that copy's event completed (seed 001's third error:
 * never reuse a bounce buffer before the copy that reads it finished). Each
 * (peer, direction) has `window` chunks, made on first use: the engine never
 * has more of a pair in flight. A send's later chunks are copied ahead into
 * the free ones while earlier chunks wait for grants or the wire. */
#include "transport/net/net_bridge_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/log.h"

static sc_stage_pool_t *sc_net_pool(sc_net_slot_t *s) {
  sc_net_t *net = s->net;
  sc_stage_pool_t *pool = &net->pools[2 * s->msg.peer + (s->msg.kind == SC_NET_RECV)];
  if (pool->stage != NULL)
    return pool;
  sc_stage_t *stage = calloc((size_t)net->window, sizeof(*stage));
  if (stage == NULL)
    return NULL;
  for (int i = 0; i < net->window; i++) {
    if (net->ops->host_alloc(net->view->device, net->chunk_bytes, &stage[i].mem) != SYMCOMM_OK ||
        net->ops->event_create(net->view->device, &stage[i].copied) != SYMCOMM_OK) {
      sc_net_bridge_fail(net, SYMCOMM_ERR_OUT_OF_MEMORY, sc_error_last());
      for (int j = 0; j <= i; j++) {
        if (stage[j].mem != NULL)
          net->ops->host_free(net->view->device, stage[j].mem);
        if (stage[j].copied != NULL)
          net->ops->event_destroy(stage[j].copied);
      }
      free(stage);
      return NULL;
    }
  }
  pool->stage = stage;
  pool->n = net->window;
  return pool;
}

/* The chunk holding (s, k), else a free one claimed for it, else NULL. */
static sc_stage_t *sc_net_stage_find(sc_net_slot_t *s, uint64_t k, bool claim) {
  sc_stage_pool_t *pool = sc_net_pool(s);
  if (pool == NULL)
    return NULL;
  sc_stage_t *free_one = NULL;
  for (int i = 0; i < pool->n; i++) {
    sc_stage_t *st = &pool->stage[i];
    if (st->state != SC_STAGE_FREE && st->owner == s && st->chunk == k)
      return st;
    if (st->state == SC_STAGE_FREE && free_one == NULL)
      free_one = st;
  }
  if (!claim || free_one == NULL)
    return NULL;
  free_one->owner = s;
  free_one->chunk = k;
  return free_one;
}

static uint64_t sc_net_stage_len(const sc_net_slot_t *s, uint64_t k) {
  uint64_t c = s->net->chunk_bytes, start = k * c;
  return s->msg.bytes - start < c ? s->msg.bytes - start : c;
}

/* A copy that cannot be queued or that failed: the communicator fails. */
static void sc_net_stage_copy_failed(sc_net_slot_t *s, uint64_t k, const char *what) {
  char why[512];
  snprintf(why, sizeof(why), "%s of chunk %llu of a %s of %llu bytes %s rank %d failed: %s", what,
           (unsigned long long)k, s->msg.kind == SC_NET_SEND ? "send" : "receive",
           (unsigned long long)s->msg.bytes, s->msg.kind == SC_NET_SEND ? "to" : "from",
           s->msg.peer, sc_error_last());
  sc_net_bridge_fail(s->net, SYMCOMM_ERR_SYSTEM, why);
}

/* Starts the copy of chunk k of a send into st; false when it could not be queued. */
static bool sc_net_stage_load(sc_net_slot_t *s, sc_stage_t *st, uint64_t k) {
  sc_net_t *net = s->net;
  if (net->ops->copy(net->load_stream, st->mem, s->buf + k * net->chunk_bytes, sc_net_stage_len(s, k)) != SYMCOMM_OK ||
      net->ops->event_record(st->copied, net->load_stream) != SYMCOMM_OK) {
    st->state = SC_STAGE_FREE;
    sc_net_stage_copy_failed(s, k, "the copy to host memory");
    return false;
  }
  st->state = SC_STAGE_LOADING;
  return true;
}

/* The send's chunks after k are copied while k waits for the wire, as far as
 * free staging chunks go: the engine asks for one chunk at a time, and a copy
 * started only when asked would cost every chunk a turn of the thread. */
static void sc_net_stage_load_ahead(sc_net_slot_t *s, uint64_t k) {
  uint64_t c = s->net->chunk_bytes, nchunks = (s->msg.bytes + c - 1) / c;
  for (uint64_t j = k + 1; j < nchunks && j <= k + (uint64_t)s->net->window; j++) {
    sc_stage_t *st = sc_net_stage_find(s, j, true); /* its own chunk, else a free one claimed */
    if (st != NULL && st->state != SC_STAGE_FREE)
      continue; /* loading or loaded already */
    if (st == NULL || !sc_net_stage_load(s, st, j))
      return;
  }
}

void *sc_net_stage_send_chunk(sc_net_slot_t *s, uint64_t k) {
  sc_net_t *net = s->net;
  sc_stage_t *st = sc_net_stage_find(s, k, true);
  if (st == NULL)
    return NULL;
  switch (st->state) {
  case SC_STAGE_FREE:
    if (sc_net_stage_load(s, st, k))
      sc_net_stage_load_ahead(s, k);
    sc_net_wake(); /* the next turn watches the copies (the poller ran before they started) */
    return NULL;
  case SC_STAGE_LOADING: {
    sc_result_t res = net->ops->event_query(st->copied);
    if (res == SYMCOMM_IN_PROGRESS)
      return NULL;
    if (res != SYMCOMM_OK) {
      sc_net_stage_copy_failed(s, k, "the copy to host memory");
      return NULL;
    }
    st->state = SC_STAGE_LOADED;
    sc_net_stage_load_ahead(s, k);
    return st->mem;
  }
  default:
    sc_net_stage_load_ahead(s, k);
    return st->mem;
  }
}

void sc_net_stage_drop_sends(sc_net_slot_t *s) {
  sc_stage_pool_t *pool = &s->net->pools[2 * s->msg.peer];
  for (int i = 0; i < pool->n; i++) {
    sc_stage_t *st = &pool->stage[i];
    if (st->owner != s || st->state == SC_STAGE_FREE)
      continue;
    /* A copy still running keeps its chunk until it ended (the poll frees it). */
    if (st->state == SC_STAGE_LOADING)
      st->owner = NULL;
    else
      st->state = SC_STAGE_FREE;
  }
}

void sc_net_stage_sent(sc_net_slot_t *s, uint64_t k) {
  sc_stage_t *st = sc_net_stage_find(s, k, false);
  if (st != NULL) {
    st->state = SC_STAGE_FREE;
    sc_net_wake(); /* a chunk the engine was refused for lack of room may go now */
  }
}

void *sc_net_stage_recv_chunk(sc_net_slot_t *s, uint64_t k) {
  sc_stage_t *st = sc_net_stage_find(s, k, true);
  if (st == NULL)
    return NULL;
  if (st->state == SC_STAGE_FREE)
    st->state = SC_STAGE_FILLING;
  return st->state == SC_STAGE_FILLING ? st->mem : NULL;
}

void sc_net_stage_received(sc_net_slot_t *s, uint64_t k) {
  sc_net_t *net = s->net;
  sc_stage_t *st = sc_net_stage_find(s, k, false);
  if (st == NULL || st->state != SC_STAGE_FILLING)
    return;
  if (net->ops->copy(net->unload_stream, s->buf + k * net->chunk_bytes, st->mem,
                     sc_net_stage_len(s, k)) != SYMCOMM_OK ||
      net->ops->event_record(st->copied, net->unload_stream) != SYMCOMM_OK) {
    st->state = SC_STAGE_FREE;
    sc_net_stage_copy_failed(s, k, "the copy to device memory");
    return;
  }
  st->state = SC_STAGE_UNLOADING;
  s->unloading++;
  sc_net_wake();
}

bool sc_net_stage_poll(sc_net_t *net) {
  bool busy = false;
  for (int p = 0; p < 2 * net->view->nranks; p++) {
    sc_stage_pool_t *pool = &net->pools[p];
    for (int i = 0; i < pool->n; i++) {
      sc_stage_t *st = &pool->stage[i];
      if (st->state == SC_STAGE_LOADING) {
        /* A chunk loaded ahead may wait long for its grant: watched here, its
         * end stops the quick polls. The engine's next ask finds it LOADED;
         * one loaded for a send that ended (failed) first is free again. */
        sc_result_t res = net->ops->event_query(st->copied);
        if (res == SYMCOMM_IN_PROGRESS) {
          busy = true;
          continue;
        }
        if (st->owner == NULL)
          st->state = SC_STAGE_FREE;
        else if (res == SYMCOMM_OK)
          st->state = SC_STAGE_LOADED;
        else {
          sc_net_stage_copy_failed(st->owner, st->chunk, "the copy to host memory");
          st->owner = NULL; /* freed at the next poll */
        }
        /* The engine, told "not yet" for this chunk (or refused a free one)
         * earlier in this turn, asks again only on a later turn: and no copy
         * is left to watch, so no hint brings one. */
        sc_net_wake();
        continue;
      }
      if (st->state != SC_STAGE_UNLOADING)
        continue;
      sc_result_t res = net->ops->event_query(st->copied);
      if (res == SYMCOMM_IN_PROGRESS) {
        busy = true;
        continue;
      }
      sc_net_slot_t *s = st->owner;
      st->state = SC_STAGE_FREE;
      /* A receive's chunk is free again: the engine, refused room for a
       * grant, asks again only on a later turn. */
      sc_net_wake();
      if (res != SYMCOMM_OK) {
        sc_net_stage_copy_failed(s, st->chunk, "the copy to device memory");
        s->result = res;
      }
      s->unloading--;
      sc_net_slot_complete(s);
    }
  }
  return busy;
}

void sc_net_stage_free(sc_net_t *net) {
  if (net->pools == NULL)
    return;
  for (int p = 0; p < 2 * net->view->nranks; p++) {
    sc_stage_pool_t *pool = &net->pools[p];
    for (int i = 0; i < pool->n; i++) {
      net->ops->host_free(net->view->device, pool->stage[i].mem);
      net->ops->event_destroy(pool->stage[i].copied);
    }
    free(pool->stage);
  }
  free(net->pools);
  net->pools = NULL;
}
