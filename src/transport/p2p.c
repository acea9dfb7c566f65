#include "transport/p2p.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/param.h"

struct sc_p2p {
  sc_comm_view_t *view;
  sc_window_t *win; /* buffer: the pad, then one ring per local peer */
  uint64_t chunk_bytes;
  uint32_t slots;
  size_t ring_offset;
  size_t ring_bytes;
  pthread_mutex_t lock;  /* counters: sends may be posted from several threads */
  uint64_t *sends, *recvs;             /* [local_size] messages posted */
  uint64_t *send_chunks, *recv_chunks; /* [local_size] chunks of those messages */
  bool *send_broken, *recv_broken;     /* [local_size] out of step after a cancel */
};

static sc_result_t sc_p2p_params(uint64_t *chunk_bytes, uint32_t *slots) {
  long long chunk = 0, nslots = 0;
  SC_CHECK(sc_param_int(SC_PARAM_P2P_CHUNK_BYTES, &chunk, NULL));
  SC_CHECK(sc_param_int(SC_PARAM_P2P_SLOTS, &nslots, NULL));
  if (chunk < 4096 || chunk > (1ll << 30) || chunk % 64 != 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P,
                    "SYMCOMM_P2P_CHUNK_BYTES=%lld: use a multiple of 64 from 4096 to 1 GiB", chunk);
  if (nslots < 1 || nslots > 64)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P, "SYMCOMM_P2P_SLOTS=%lld is not 1..64",
                    nslots);
  *chunk_bytes = (uint64_t)chunk;
  *slots = (uint32_t)nslots;
  return SYMCOMM_OK;
}

sc_result_t sc_p2p_create(sc_comm_view_t *view, sc_p2p_t **out) {
  sc_p2p_t *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_P2P, "no memory for send/recv state");
  pthread_mutex_init(&p->lock, NULL);
  sc_result_t res;
  SC_CHECK_GOTO(sc_p2p_params(&p->chunk_bytes, &p->slots), res, fail);
  p->view = view;
  p->ring_offset = (sizeof(sc_p2p_pad_t) + 4095) / 4096 * 4096;
  p->ring_bytes = (size_t)p->chunk_bytes * p->slots;
  /* Every rank's window has the same size (windows are collective): rings
   * for as many peers as the largest host has. Unused rings cost nothing. */
  size_t n = (size_t)view->max_local_size;
  p->sends = calloc(n, sizeof(uint64_t));
  p->recvs = calloc(n, sizeof(uint64_t));
  p->send_chunks = calloc(n, sizeof(uint64_t));
  p->recv_chunks = calloc(n, sizeof(uint64_t));
  p->send_broken = calloc(n, sizeof(bool));
  p->recv_broken = calloc(n, sizeof(bool));
  if (p->sends == NULL || p->recvs == NULL || p->send_chunks == NULL || p->recv_chunks == NULL ||
      p->send_broken == NULL || p->recv_broken == NULL) {
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_P2P, "no memory for send/recv counters");
    goto fail;
  }
  SC_CHECK_GOTO(sc_window_create(view, p->ring_offset + n * p->ring_bytes, NULL, 0, &p->win), res,
                fail);
  *out = p;
  return SYMCOMM_OK;
fail:
  sc_p2p_destroy(p);
  return res;
}

void sc_p2p_destroy(sc_p2p_t *p) {
  if (p == NULL)
    return;
  sc_window_release(p->win);
  pthread_mutex_destroy(&p->lock);
  free(p->sends);
  free(p->recvs);
  free(p->send_chunks);
  free(p->recv_chunks);
  free(p->send_broken);
  free(p->recv_broken);
  free(p);
}

/* A receive whose whole buffer lies in one of this rank's windows can take
 * the data straight from the sender. */
static void sc_p2p_find_window(const sc_comm_view_t *view, const void *buf, size_t bytes,
                               sc_p2p_op_t *op) {
  uint32_t id;
  size_t offset;
  if (sc_window_find(view, 0, buf, bytes, &id, &offset)) {
    op->window = id + 1;
    op->offset = offset;
  }
}

sc_result_t sc_p2p_prepare(sc_p2p_t *p, int kind, int peer, void *buf, size_t bytes,
                           sc_p2p_op_t *op) {
  const sc_comm_view_t *view = p->view;
  int pl = view->local_of[peer];
  memset(op, 0, sizeof(*op));
  op->kind = kind;
  op->peer = peer;
  op->peer_index = pl;
  op->my_index = view->local_rank;
  op->peer_pad = (sc_p2p_pad_t *)p->win->peer[peer];
  char *my_buffer = p->win->peer[view->rank];
  char *peer_buffer = p->win->peer[peer];
  op->ring = kind == SC_P2P_SEND
                 ? peer_buffer + p->ring_offset + (size_t)view->local_rank * p->ring_bytes
                 : my_buffer + p->ring_offset + (size_t)pl * p->ring_bytes;
  op->buf = buf;
  op->bytes = bytes;
  if (kind == SC_P2P_RECV)
    sc_p2p_find_window(view, buf, bytes, op);
  uint64_t chunks = sc_p2p_chunks(bytes, p->chunk_bytes);
  pthread_mutex_lock(&p->lock);
  if (kind == SC_P2P_SEND ? p->send_broken[pl] : p->recv_broken[pl]) {
    pthread_mutex_unlock(&p->lock);
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_P2P,
                    "%s rank %d is out of step since an earlier one could not be queued",
                    kind == SC_P2P_SEND ? "sending to" : "receiving from", peer);
  }
  if (kind == SC_P2P_SEND) {
    op->msg = p->sends[pl]++;
    op->chunk_base = p->send_chunks[pl];
    p->send_chunks[pl] += chunks;
  } else {
    op->msg = p->recvs[pl]++;
    op->chunk_base = p->recv_chunks[pl];
    p->recv_chunks[pl] += chunks;
  }
  pthread_mutex_unlock(&p->lock);
  SC_TRACE(SC_P2P, "%s #%llu %s rank %d: %zu bytes in %llu chunks", kind == SC_P2P_SEND ? "send" : "recv",
           (unsigned long long)op->msg, kind == SC_P2P_SEND ? "to" : "from", peer, bytes,
           (unsigned long long)chunks);
  return SYMCOMM_OK;
}

sc_result_t sc_p2p_launch(sc_p2p_t *p, sc_stream_t *stream, const sc_p2p_op_t *ops, int n) {
  size_t args_bytes = sizeof(sc_p2p_args_t) + sizeof(sc_p2p_op_t) * (size_t)n;
  sc_p2p_args_t *args = malloc(args_bytes);
  if (args == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_P2P, "no memory for %d send/recv ops", n);
  args->my_pad = (sc_p2p_pad_t *)p->win->peer[p->view->rank];
  args->windows = p->view->windows;
  args->guard = p->view->guard;
  args->guard.call = SC_CALL_P2P;
  args->chunk_bytes = p->chunk_bytes;
  args->slots = p->slots;
  args->nops = (uint32_t)n;
  args->rank = p->view->rank;
  args->reserved = 0;
  memcpy(args->ops, ops, sizeof(sc_p2p_op_t) * (size_t)n);
  sc_result_t res = p->view->ops->launch(stream, SC_PROGRAM_P2P, args, args_bytes, SC_LAUNCH_ONE(p->view->status));
  free(args);
  if (res != SYMCOMM_OK)
    sc_p2p_cancel(p, ops, n);
  return res;
}

void sc_p2p_cancel(sc_p2p_t *p, const sc_p2p_op_t *ops, int n) {
  pthread_mutex_lock(&p->lock);
  for (int i = n - 1; i >= 0; i--) {
    const sc_p2p_op_t *op = &ops[i];
    int pl = op->peer_index;
    bool send = op->kind == SC_P2P_SEND;
    uint64_t *count = send ? &p->sends[pl] : &p->recvs[pl];
    uint64_t *chunks = send ? &p->send_chunks[pl] : &p->recv_chunks[pl];
    if (*count == op->msg + 1 && *chunks == op->chunk_base + sc_p2p_chunks(op->bytes, p->chunk_bytes)) {
      *count = op->msg;
      *chunks = op->chunk_base;
    } else {
      (send ? p->send_broken : p->recv_broken)[pl] = true;
    }
  }
  pthread_mutex_unlock(&p->lock);
}
