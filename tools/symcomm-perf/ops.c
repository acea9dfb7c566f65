/* Per operation: names, the counts behind a printed size, nccl-tests' bus
 * bandwidth factors, the in-place arrangement of buffers, and the launch on
 * an engine.
 *
 * Sizes are bytes as nccl-tests prints them (bench/RESULTS_FORMAT.md): the
 * per-rank buffer of the operation. A size is rounded down to whole elements
 * and, for allgather, reducescatter and alltoall, to a multiple of nranks
 * elements (the printed size is the rounded one); a size with nothing left is
 * skipped. */
#include <string.h>

#include "engine.h"

static const struct {
  const char *name;
  int reduces, rooted, blocks;
} ops[PERF_OP_COUNT] = {
    [PERF_ALLREDUCE] = {"allreduce", 1, 0, 0},         [PERF_REDUCE] = {"reduce", 1, 1, 0},
    [PERF_BROADCAST] = {"broadcast", 0, 1, 0},         [PERF_ALLGATHER] = {"allgather", 0, 0, 1},
    [PERF_REDUCESCATTER] = {"reducescatter", 1, 0, 1}, [PERF_ALLTOALL] = {"alltoall", 0, 0, 1},
    [PERF_SENDRECV] = {"sendrecv", 0, 0, 0},
};

const char *perf_op_name(perf_op_t op) { return (unsigned)op < PERF_OP_COUNT ? ops[op].name : "?"; }

int perf_op_from_name(const char *name) {
  for (int op = 0; op < PERF_OP_COUNT; op++)
    if (strcmp(name, ops[op].name) == 0)
      return op;
  return -1;
}

int perf_op_reduces(perf_op_t op) { return ops[op].reduces; }
int perf_op_rooted(perf_op_t op) { return ops[op].rooted; }

double perf_op_bus_factor(perf_op_t op, int nranks) {
  double n = nranks;
  switch (op) {
  case PERF_ALLREDUCE:
    return 2.0 * (n - 1) / n;
  case PERF_REDUCESCATTER:
  case PERF_ALLGATHER:
  case PERF_ALLTOALL:
    return (n - 1) / n;
  default:
    return 1.0;
  }
}

int perf_op_counts(perf_op_t op, size_t bytes, size_t elem, int nranks, perf_counts_t *c) {
  size_t n = (size_t)nranks, count = bytes / elem;
  *c = (perf_counts_t){0};
  if (ops[op].blocks) {
    c->param = count / n;
    c->count = c->param * n;
  } else {
    c->param = c->count = count;
  }
  switch (op) {
  case PERF_ALLGATHER:
    c->send_elems = c->param;
    c->recv_elems = c->count;
    break;
  case PERF_REDUCESCATTER:
    c->send_elems = c->count;
    c->recv_elems = c->param;
    break;
  default:
    c->send_elems = c->recv_elems = c->count;
    break;
  }
  return c->param > 0;
}

void perf_op_buffers(perf_op_t op, const perf_counts_t *c, size_t elem, void *send, void *recv,
                     int in_place, int rank, void **s, void **r) {
  *s = send;
  *r = recv;
  if (!in_place)
    return;
  size_t mine = (size_t)rank * c->param * elem;
  *s = recv;
  if (op == PERF_ALLGATHER)
    *s = (char *)recv + mine; /* sendbuf == recvbuf + rank * sendcount */
  else if (op == PERF_REDUCESCATTER)
    *r = (char *)recv + mine; /* recvbuf == sendbuf + rank * recvcount */
}

int perf_op_launch(const perf_engine_ops_t *eng, void *self, perf_op_t op, symcomm_dtype_t dtype,
                   int redop, int root, const perf_counts_t *c, void *send, void *recv,
                   int in_place, int rank, int nranks) {
  void *s, *r;
  perf_op_buffers(op, c, perf_dtype_size(dtype), send, recv, in_place, rank, &s, &r);
  symcomm_op_t rop = (symcomm_op_t)(redop < 0 ? SYMCOMM_SUM : redop);
  switch (op) {
  case PERF_ALLREDUCE:
    return eng->allreduce(self, s, r, c->param, dtype, rop);
  case PERF_REDUCE:
    return eng->reduce(self, s, r, c->param, dtype, rop, root);
  case PERF_BROADCAST:
    return eng->broadcast(self, s, r, c->param, dtype, root);
  case PERF_ALLGATHER:
    return eng->allgather(self, s, r, c->param, dtype);
  case PERF_REDUCESCATTER:
    return eng->reducescatter(self, s, r, c->param, dtype, rop);
  case PERF_ALLTOALL:
    return eng->alltoall(self, s, r, c->param, dtype);
  case PERF_SENDRECV:
    return eng->sendrecv(self, s, r, c->param, dtype, (rank + 1) % nranks,
                         (rank + nranks - 1) % nranks);
  default:
    return -1;
  }
}
