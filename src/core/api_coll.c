/* Public collectives: argument checks, the one-rank case, SYMCOMM_CHECK, then
 * src/coll/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stream.h"
#include "util/log.h"
#include "util/round.h"

/* Two buffers of `a` and `b` bytes that overlap, but not as the same start. */
static bool sc_overlap(const void *x, size_t a, const void *y, size_t b) {
  const char *p = x, *q = y;
  if (a == 0 || b == 0 || p == q)
    return false;
  return p < q + b && q < p + a;
}

static void sc_call_text(const sc_coll_call_t *call, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s(count %zu, %s", sc_coll_kind_name(call->kind), call->count,
                   symcomm_dtype_string((symcomm_dtype_t)call->dtype));
  if (call->kind == SC_COLL_ALLREDUCE || call->kind == SC_COLL_REDUCE ||
      call->kind == SC_COLL_REDUCESCATTER)
    n += snprintf(buf + n, len - (size_t)n, ", %s", symcomm_op_string((symcomm_op_t)call->op));
  if (call->kind == SC_COLL_REDUCE || call->kind == SC_COLL_BROADCAST)
    n += snprintf(buf + n, len - (size_t)n, ", root %d", call->root);
  snprintf(buf + n, len - (size_t)n, ")");
}

/* SYMCOMM_CHECK=1 (as read at init): every rank shows its call to the others
 * through the root. */
static sc_result_t sc_coll_check_agreement(struct symcomm_comm *comm, const sc_coll_call_t *call) {
  if (!comm->options.check_calls)
    return SYMCOMM_OK;
  typedef struct { int64_t kind, count, dtype, op, root; } desc_t;
  desc_t mine = {call->kind, (int64_t)call->count, call->dtype, call->op, call->root};
  desc_t *all = malloc(sizeof(desc_t) * (size_t)comm->nranks);
  if (all == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_COLL, "no memory for SYMCOMM_CHECK");
  sc_result_t res = sc_bootstrap_allgather(&comm->boot, "coll:check", &mine, sizeof(mine), all);
  for (int r = 0; res == SYMCOMM_OK && r < comm->nranks; r++) {
    if (memcmp(&all[r], &mine, sizeof(mine)) == 0)
      continue;
    sc_coll_call_t theirs = *call;
    theirs.kind = (sc_coll_kind_t)all[r].kind;
    theirs.count = (size_t)all[r].count;
    theirs.dtype = (int)all[r].dtype;
    theirs.op = (int)all[r].op;
    theirs.root = (int)all[r].root;
    char a[160], b[160];
    sc_call_text(call, a, sizeof(a));
    sc_call_text(&theirs, b, sizeof(b));
    res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_COLL, "rank %d calls %s, but rank %d calls %s",
                   comm->rank, a, r, b);
  }
  free(all);
  return res;
}

/* The checks every collective makes before anything is queued. */
static sc_result_t sc_coll_check(struct symcomm_comm *comm, symcomm_stream_t stream,
                                 sc_coll_call_t *call, const char *name) {
  SC_CHECK(sc_comm_check_alive(comm));
  SC_CHECK(sc_stream_use(stream, comm));
  if ((unsigned)call->dtype >= SYMCOMM_DTYPE_COUNT)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL, "%s: unknown data type %d", name,
                    call->dtype);
  bool reduces = call->kind == SC_COLL_ALLREDUCE || call->kind == SC_COLL_REDUCE ||
                 call->kind == SC_COLL_REDUCESCATTER;
  if (reduces && (unsigned)call->op >= SYMCOMM_OP_COUNT)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL, "%s: unknown reduction %d", name,
                    call->op);
  bool rooted = call->kind == SC_COLL_REDUCE || call->kind == SC_COLL_BROADCAST;
  if (rooted && (call->root < 0 || call->root >= comm->nranks))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL, "%s: root %d is not in [0, %d)", name,
                    call->root, comm->nranks);
  symcomm_dtype_size((symcomm_dtype_t)call->dtype, &call->elem);
  size_t n = (size_t)comm->nranks;
  bool blocks = call->kind == SC_COLL_ALLGATHER || call->kind == SC_COLL_REDUCESCATTER ||
                call->kind == SC_COLL_ALLTOALL;
  if (call->count > SIZE_MAX / call->elem / (blocks ? n : 1))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL, "%s: %zu elements of %zu bytes overflow",
                    name, call->count, call->elem);
  size_t one = call->count * call->elem, all = blocks ? one * n : one;
  size_t send_bytes = call->kind == SC_COLL_ALLGATHER ? one : all;
  size_t recv_bytes = call->kind == SC_COLL_REDUCESCATTER ? one : all;
  bool is_root = rooted && comm->rank == call->root;
  bool needs_send = call->kind != SC_COLL_BROADCAST || is_root;
  bool needs_recv = call->kind != SC_COLL_REDUCE || is_root;
  if (call->count > 0 && ((needs_send && call->sendbuf == NULL) || (needs_recv && call->recvbuf == NULL)))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL, "%s: %s is NULL", name,
                    needs_send && call->sendbuf == NULL ? "sendbuf" : "recvbuf");
  SC_CHECK(sc_comm_check_buffers(comm, name, call->sendbuf, needs_send ? send_bytes : 0, "sendbuf",
                                 call->recvbuf, needs_recv ? recv_bytes : 0, "recvbuf"));
  bool send_wraps = needs_send && sc_range_wraps(call->sendbuf, send_bytes);
  if (send_wraps || (needs_recv && sc_range_wraps(call->recvbuf, recv_bytes)))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                    "%s: %s of %zu bytes at %p runs past the end of the address space", name,
                    send_wraps ? "sendbuf" : "recvbuf", send_wraps ? send_bytes : recv_bytes,
                    send_wraps ? call->sendbuf : call->recvbuf);
  /* In place is the one overlap that works: sendbuf == recvbuf, or NCCL's
   * offsets for allgather and reducescatter. */
  const char *send = call->sendbuf, *recv = call->recvbuf;
  bool in_place = send == recv ||
                  (call->kind == SC_COLL_ALLGATHER && send == recv + (size_t)comm->rank * one) ||
                  (call->kind == SC_COLL_REDUCESCATTER && recv == send + (size_t)comm->rank * one);
  if (needs_send && needs_recv && !in_place && sc_overlap(send, send_bytes, recv, recv_bytes))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_COLL,
                    "%s: sendbuf and recvbuf overlap without being in place", name);
  uint64_t failed;
  if (comm->coll_broken || sc_coll_failed(comm->coll, &failed)) {
    comm->coll_broken = true;
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_COLL,
                    "%s: an earlier collective failed or was only half queued, so the ranks are "
                    "out of step; abort and destroy this communicator",
                    name);
  }
  return SYMCOMM_OK;
}

/* One rank: the result is the input (AVG divides by 1). */
static sc_result_t sc_coll_alone(struct symcomm_comm *comm, const sc_coll_call_t *call,
                                 symcomm_stream_t stream) {
  size_t bytes = call->count * call->elem;
  if (bytes == 0 || call->sendbuf == call->recvbuf || call->recvbuf == NULL)
    return SYMCOMM_OK;
  return comm->ops->copy(stream->stream, call->recvbuf, call->sendbuf, bytes);
}

static sc_result_t sc_coll_run(struct symcomm_comm *comm, symcomm_stream_t stream,
                               sc_coll_call_t *call, const char *name) {
  SC_CHECK(sc_coll_check(comm, stream, call, name));
  SC_CHECK(sc_coll_check_agreement(comm, call));
  if (comm->nranks == 1)
    return sc_coll_alone(comm, call, stream);
  /* Collectives of a communicator share its scratch: one on another stream
   * than the last waits for that one (an event: legal while a stream is
   * captured, where a query or a synchronize is not). */
  sc_result_t res = SYMCOMM_OK;
  sc_event_t *order = comm->coll_hosts != NULL ? sc_coll_hosts_order_event(comm->coll_hosts)
                                               : sc_coll_order_event(comm->coll);
  if (comm->coll_last_stream != stream)
    res = sc_stream_follow(comm->coll_last_stream, stream, order);
  if (res == SYMCOMM_OK)
    res = comm->coll_hosts != NULL ? sc_coll_hosts_enqueue(comm->coll_hosts, call, stream->stream)
                                   : sc_coll_enqueue(comm->coll, call, stream->stream);
  comm->coll_last_stream = stream;
  if (res != SYMCOMM_OK)
    comm->coll_broken = true;
  return res;
}

#define SC_COLL_ENTRY(name, ...)                                     \
  sc_error_clear();                                                  \
  SC_CHECK(sc_comm_check(comm));                                     \
  sc_coll_call_t call = {__VA_ARGS__};                               \
  return sc_comm_finish_during(comm, sc_coll_run(comm, stream, &call, name), name)

symcomm_result_t symcomm_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                                   symcomm_dtype_t dtype, symcomm_op_t op, symcomm_comm_t comm,
                                   symcomm_stream_t stream) {
  SC_COLL_ENTRY("symcomm_allreduce", .kind = SC_COLL_ALLREDUCE, .sendbuf = sendbuf,
                .recvbuf = recvbuf, .count = count, .dtype = (int)dtype, .op = (int)op, .root = -1);
}

symcomm_result_t symcomm_reduce(const void *sendbuf, void *recvbuf, size_t count,
                                symcomm_dtype_t dtype, symcomm_op_t op, int root,
                                symcomm_comm_t comm, symcomm_stream_t stream) {
  SC_COLL_ENTRY("symcomm_reduce", .kind = SC_COLL_REDUCE, .sendbuf = sendbuf, .recvbuf = recvbuf,
                .count = count, .dtype = (int)dtype, .op = (int)op, .root = root);
}

symcomm_result_t symcomm_broadcast(const void *sendbuf, void *recvbuf, size_t count,
                                   symcomm_dtype_t dtype, int root, symcomm_comm_t comm,
                                   symcomm_stream_t stream) {
  SC_COLL_ENTRY("symcomm_broadcast", .kind = SC_COLL_BROADCAST, .sendbuf = sendbuf,
                .recvbuf = recvbuf, .count = count, .dtype = (int)dtype, .op = 0, .root = root);
}

symcomm_result_t symcomm_allgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                   symcomm_dtype_t dtype, symcomm_comm_t comm,
                                   symcomm_stream_t stream) {
  SC_COLL_ENTRY("symcomm_allgather", .kind = SC_COLL_ALLGATHER, .sendbuf = sendbuf,
                .recvbuf = recvbuf, .count = sendcount, .dtype = (int)dtype, .op = 0, .root = -1);
}

symcomm_result_t symcomm_reducescatter(const void *sendbuf, void *recvbuf, size_t recvcount,
                                       symcomm_dtype_t dtype, symcomm_op_t op, symcomm_comm_t comm,
                                       symcomm_stream_t stream) {
  SC_COLL_ENTRY("symcomm_reducescatter", .kind = SC_COLL_REDUCESCATTER, .sendbuf = sendbuf,
                .recvbuf = recvbuf, .count = recvcount, .dtype = (int)dtype, .op = (int)op,
                .root = -1);
}

symcomm_result_t symcomm_alltoall(const void *sendbuf, void *recvbuf, size_t count_per_peer,
                                  symcomm_dtype_t dtype, symcomm_comm_t comm,
                                  symcomm_stream_t stream) {
  SC_COLL_ENTRY("symcomm_alltoall", .kind = SC_COLL_ALLTOALL, .sendbuf = sendbuf,
                .recvbuf = recvbuf, .count = count_per_peer, .dtype = (int)dtype, .op = 0,
                .root = -1);
}
