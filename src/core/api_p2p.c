/* Public send/recv and groups. Ungrouped, each call is one launch: of the P2P
 * program for a peer on this host, of the NET program for one on another
 * host. In a group, calls are collected per thread and queued together at
 * the outermost end, one batch per (communicator, stream), so that all of a
 * group's sends and receives on a stream advance at once (a batch larger
 * than a launch goes in rounds, sc_p2p_launch_group): the batch's exchanges
 * on this host first, then those with other hosts in one NET launch. The
 * first never wait for the second (a host's exchanges only wait for each
 * other), so every rank reaches its NET launch. Two communicators'
 * batches on one stream would run one after the other and could wait on each
 * other forever, so a group refuses that.
 *
 * Nothing here queries or synchronizes a stream (that would break CUDA graph
 * capture): a stopped communicator is seen by the program when it starts.
 * The thread's group buffers are kept from one group to the next, so that
 * only a group larger than any before allocates. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/stream.h"
#include "util/log.h"
#include "util/round.h"

typedef struct sc_group_entry {
  struct symcomm_comm *comm;
  struct symcomm_stream *stream;
  int kind; /* SC_P2P_SEND or SC_P2P_RECV */
  int peer; /* rank in comm */
  void *buf;
  size_t bytes;
} sc_group_entry_t;

typedef struct sc_group {
  int depth;
  int count, cap;
  sc_group_entry_t *entries; /* [cap] */
  sc_p2p_op_t *batch;        /* [cap]: one (communicator, stream)'s ops on this host at end */
  sc_net_op_t *net_batch;    /* [cap]: ... and with other hosts */
} sc_group_t;

static __thread sc_group_t sc_group;
static pthread_key_t sc_group_key;
static pthread_once_t sc_group_once = PTHREAD_ONCE_INIT;

/* A thread's buffers go when the thread does. */
static void sc_group_free(void *arg) {
  sc_group_t *g = arg;
  free(g->entries);
  free(g->batch);
  free(g->net_batch);
  g->entries = NULL;
  g->batch = NULL;
  g->net_batch = NULL;
  g->cap = 0;
}

static void sc_group_key_make(void) { pthread_key_create(&sc_group_key, sc_group_free); }

static sc_result_t sc_p2p_check(const void *buf, size_t count, symcomm_dtype_t dtype, int peer,
                                struct symcomm_comm *comm, symcomm_stream_t stream,
                                const char *call, size_t *bytes) {
  SC_CHECK(sc_comm_check_alive(comm));
  SC_CHECK(sc_stream_use(stream, comm));
  size_t size = 0;
  if ((unsigned)dtype >= SYMCOMM_DTYPE_COUNT)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P, "%s: unknown data type %d", call, (int)dtype);
  symcomm_dtype_size(dtype, &size);
  if (count > SIZE_MAX / size)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P, "%s: %zu elements of %zu bytes overflow",
                    call, count, size);
  if (sc_range_wraps(buf, count * size))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P,
                    "%s: %zu bytes at %p run past the end of the address space", call, count * size,
                    buf);
  if (peer < 0 || peer >= comm->nranks)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P, "%s: rank %d is not in [0, %d)", call,
                    peer, comm->nranks);
  if (peer == comm->rank)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P, "%s: rank %d is this rank itself", call,
                    peer);
  if (buf == NULL && count > 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_P2P, "%s: buf is NULL", call);
  SC_CHECK(sc_comm_check_buffers(comm, call, buf, count * size, "buf", NULL, 0, NULL));
  *bytes = count * size;
  return SYMCOMM_OK;
}

static sc_result_t sc_group_add(struct symcomm_comm *comm, struct symcomm_stream *stream,
                                const sc_group_entry_t *entry) {
  sc_group_t *g = &sc_group;
  if (g->count == g->cap) {
    int cap = g->cap ? 2 * g->cap : 64;
    sc_group_entry_t *e = realloc(g->entries, sizeof(*e) * (size_t)cap);
    if (e != NULL)
      g->entries = e;
    sc_p2p_op_t *b = e != NULL ? realloc(g->batch, sizeof(*b) * (size_t)cap) : NULL;
    if (b != NULL)
      g->batch = b;
    sc_net_op_t *nb = b != NULL ? realloc(g->net_batch, sizeof(*nb) * (size_t)cap) : NULL;
    if (nb == NULL)
      return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_P2P, "no memory for a group of %d ops", cap);
    g->net_batch = nb;
    g->cap = cap;
    pthread_once(&sc_group_once, sc_group_key_make);
    pthread_setspecific(sc_group_key, g);
  }
  g->entries[g->count] = *entry;
  g->entries[g->count].comm = comm;
  g->entries[g->count].stream = stream;
  g->count++;
  return SYMCOMM_OK;
}



/* Sends and receives of one pair and direction run in call order, whatever
 * streams they are queued on (the parts of a message run on several blocks,
 * which must all be its own launch's, and the n-th send meets the n-th
 * receive): an op on another stream than the last one of its queue waits for
 * that stream (an event: legal while a stream is captured, where a query or
 * a synchronize is not; while either stream is captured there is none, as
 * for collectives: the caller orders graph launches). */
static sc_result_t sc_p2p_order(struct symcomm_comm *comm, symcomm_stream_t stream,
                                const sc_p2p_op_t *ops, int n) {
  struct symcomm_stream *followed[2 * SC_MAX_LOCAL_RANKS];
  int nfollowed = 0;
  sc_result_t res = SYMCOMM_OK;
  for (int i = 0; i < n && res == SYMCOMM_OK; i++) {
    struct symcomm_stream **last = &comm->p2p_last_stream[ops[i].kind][ops[i].peer];
    bool done = *last == NULL || *last == stream;
    for (int j = 0; j < nfollowed && !done; j++)
      done = followed[j] == *last;
    if (!done) {
      res = sc_stream_follow(*last, stream,
                             sc_p2p_order_event(comm->p2p, ops[i].kind, ops[i].peer));
      followed[nfollowed++] = *last;
    }
  }
  for (int i = 0; i < n && res == SYMCOMM_OK; i++)
    comm->p2p_last_stream[ops[i].kind][ops[i].peer] = stream;
  return res;
}

static sc_result_t sc_p2p_post(int kind, void *buf, size_t count, symcomm_dtype_t dtype, int peer,
                               struct symcomm_comm *comm, symcomm_stream_t stream) {
  const char *call = kind == SC_P2P_SEND ? "symcomm_send" : "symcomm_recv";
  size_t bytes = 0;
  SC_CHECK(sc_p2p_check(buf, count, dtype, peer, comm, stream, call, &bytes));
  sc_group_entry_t entry = {.kind = kind, .peer = peer, .buf = buf, .bytes = bytes};
  if (sc_group.depth > 0)
    return sc_group_add(comm, stream, &entry);
  if (comm->local_of[peer] < 0) {
    sc_net_op_t op = sc_net_op_make(kind, peer, buf, bytes);
    return sc_net_launch(comm->net, stream->stream, &op, 1, 0, 0);
  }
  sc_p2p_op_t op;
  sc_p2p_op_make(comm->p2p, kind, peer, buf, bytes, &op);
  sc_p2p_args_t args;
  size_t args_bytes = 0;
  uint32_t blocks = 0;
  sc_p2p_build(comm->p2p, &op, 1, &args, &args_bytes, &blocks);
  SC_CHECK(sc_p2p_order(comm, stream, &op, 1));
  return sc_p2p_launch(comm->p2p, stream->stream, &args, args_bytes, blocks);
}

symcomm_result_t symcomm_send(const void *buf, size_t count, symcomm_dtype_t dtype, int peer,
                              symcomm_comm_t comm, symcomm_stream_t stream) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  return sc_comm_finish(comm, sc_p2p_post(SC_P2P_SEND, (void *)buf, count, dtype, peer, comm, stream));
}

symcomm_result_t symcomm_recv(void *buf, size_t count, symcomm_dtype_t dtype, int peer,
                              symcomm_comm_t comm, symcomm_stream_t stream) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  return sc_comm_finish(comm, sc_p2p_post(SC_P2P_RECV, buf, count, dtype, peer, comm, stream));
}

symcomm_result_t symcomm_group_start(void) {
  sc_error_clear();
  sc_group.depth++;
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_group_end(void) {
  sc_error_clear();
  sc_group_t *g = &sc_group;
  if (g->depth == 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_P2P, "symcomm_group_end without symcomm_group_start");
  if (--g->depth > 0)
    return SYMCOMM_OK;
  /* Two communicators on one stream: refuse the whole group. */
  sc_result_t res = SYMCOMM_OK;
  for (int i = 0; i < g->count && res == SYMCOMM_OK; i++)
    for (int j = 0; j < i && res == SYMCOMM_OK; j++)
      if (g->entries[j].stream == g->entries[i].stream && g->entries[j].comm != g->entries[i].comm)
        res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_P2P,
                       "symcomm_group_end: one group uses two communicators on one stream; give "
                       "each communicator its own stream (nothing of the group was queued)");
  if (res != SYMCOMM_OK) {
    for (int i = g->count - 1; i >= 0; i--)
      sc_comm_finish(g->entries[i].comm, res); /* the refusal is every member's last error */
    g->count = 0;
    return res;
  }
  /* One batch per (communicator, stream), in the order they first appear. A
   * batch that fails does not stop the others. */
  for (int i = 0; i < g->count; i++) {
    sc_group_entry_t *first = &g->entries[i];
    if (first->comm == NULL)
      continue; /* already launched with an earlier entry */
    struct symcomm_comm *comm = first->comm;
    struct symcomm_stream *stream = first->stream;
    int n = 0, nnet = 0;
    for (int j = i; j < g->count; j++) {
      sc_group_entry_t *e = &g->entries[j];
      if (e->comm != comm || e->stream != stream)
        continue;
      if (comm->local_of[e->peer] < 0)
        g->net_batch[nnet++] = sc_net_op_make(e->kind, e->peer, e->buf, e->bytes);
      else
        sc_p2p_op_make(comm->p2p, e->kind, e->peer, e->buf, e->bytes, &g->batch[n++]);
      e->comm = NULL;
    }
    sc_result_t r = SYMCOMM_OK;
    if (nnet > SC_NET_MAX_OPS) /* refused before anything of the batch is queued */
      r = SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_P2P,
                   "symcomm_group_end: %d sends and receives with other hosts on one stream; at "
                   "most %d per group and stream (nothing of this batch was queued)",
                   nnet, SC_NET_MAX_OPS);
    if (r == SYMCOMM_OK && n > 0)
      r = sc_p2p_order(comm, stream, g->batch, n);
    if (r == SYMCOMM_OK && n > 0)
      r = sc_p2p_launch_group(comm->p2p, stream->stream, g->batch, n, 0, 0);
    if (r == SYMCOMM_OK && nnet > 0)
      r = sc_net_launch(comm->net, stream->stream, g->net_batch, nnet, 0, 0);
    r = sc_comm_finish(comm, r);
    if (res == SYMCOMM_OK)
      res = r;
  }
  g->count = 0;
  return res;
}
