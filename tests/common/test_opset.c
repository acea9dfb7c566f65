#include "test_opset.h"

#include <stdio.h>
#include <string.h>

#include "test_data.h"
#include "test_util.h"

static const char *const opset_names[] = {"allreduce",     "reduce",   "broadcast", "allgather",
                                          "reducescatter", "alltoall", "sendrecv"};

static void opset_add(opset_t *s, opset_kind_t kind, symcomm_dtype_t t, symcomm_op_t op,
                      size_t count, int root) {
  TEST_ASSERT(s->n < OPSET_MAX);
  int k = s->n++;
  opset_op_t *o = &s->ops[k];
  size_t n = (size_t)s->nranks, sz = td_dtype_size(t);
  size_t in = kind == OPSET_REDUCESCATTER || kind == OPSET_ALLTOALL ? n * count : count;
  size_t out = kind == OPSET_ALLGATHER || kind == OPSET_ALLTOALL ? n * count : count;
  *o = (opset_op_t){.kind = kind, .t = t, .op = op, .count = count, .root = root};
  /* Aligned to the element only, differently for each buffer. */
  o->send = tdev_buf_alloc(in * sz, sz * (size_t)(k % 3));
  o->recv = tdev_buf_alloc(out * sz, sz * (size_t)((k + 1) % 3));
}

void opset_init(opset_t *s, symcomm_comm_t comm) {
  memset(s, 0, sizeof(*s));
  s->comm = comm;
  TEST_OK(symcomm_comm_rank(comm, &s->rank));
  TEST_OK(symcomm_comm_size(comm, &s->nranks));
  int n = s->nranks;
  opset_add(s, OPSET_ALLREDUCE, SYMCOMM_FLOAT32, SYMCOMM_SUM, 1001, 0);
  opset_add(s, OPSET_ALLREDUCE, SYMCOMM_BFLOAT16, SYMCOMM_SUM, 100003, 0); /* 200 KB: two-shot */
  opset_add(s, OPSET_REDUCE, SYMCOMM_INT32, SYMCOMM_MAX, 777, 1 % n);
  opset_add(s, OPSET_BROADCAST, SYMCOMM_UINT8, SYMCOMM_SUM, 4099, n - 1);
  opset_add(s, OPSET_ALLGATHER, SYMCOMM_INT64, SYMCOMM_SUM, 513, 0);
  opset_add(s, OPSET_REDUCESCATTER, SYMCOMM_FLOAT16, SYMCOMM_AVG, 257, 0);
  opset_add(s, OPSET_ALLTOALL, SYMCOMM_UINT32, SYMCOMM_SUM, 301, 0);
  opset_add(s, OPSET_SENDRECV, SYMCOMM_UINT8, SYMCOMM_SUM, (600u << 10) + 1, 0); /* 2 chunks */
}

void opset_free(opset_t *s) {
  for (int k = 0; k < s->n; k++) {
    tdev_buf_free(&s->ops[k].send);
    tdev_buf_free(&s->ops[k].recv);
  }
  s->n = 0;
}

static bool opset_reduces(opset_kind_t k) {
  return k == OPSET_ALLREDUCE || k == OPSET_REDUCE || k == OPSET_REDUCESCATTER;
}

static uint64_t opset_seed(uint64_t seed, int k) { return seed * 16 + (uint64_t)k; }

void opset_fill(opset_t *s, uint64_t seed) {
  for (int k = 0; k < s->n; k++) {
    opset_op_t *o = &s->ops[k];
    size_t in = o->send.host.bytes / td_dtype_size(o->t);
    uint64_t sk = opset_seed(seed, k);
    if (o->kind == OPSET_SENDRECV)
      td_fill(o->send.host.data, o->count, sk, s->rank);
    else if (opset_reduces(o->kind))
      td_fill_small(o->send.host.data, in, o->t, o->op, sk, s->rank, 0);
    else
      td_fill_elems(o->send.host.data, in, o->t, sk, s->rank, 0);
    td_reset(o->recv.host.data, o->recv.host.bytes);
  }
}

void opset_push(opset_t *s) {
  for (int k = 0; k < s->n; k++) {
    tdev_buf_push(&s->ops[k].send);
    tdev_buf_push(&s->ops[k].recv);
  }
}

/* A buffer's whole range (guards included) as a device address, host copy and length. */
static void opset_range(tdev_buf_t *b, tdev_ptr_t *dev, unsigned char **host, size_t *bytes) {
  *dev = (tdev_ptr_t)(uintptr_t)(b->data - TD_GUARD);
  *host = b->host.data - TD_GUARD;
  *bytes = b->host.bytes + 2 * TD_GUARD;
}

void opset_push_async(opset_t *s, void *cuda_stream) {
  const tdev_driver_t *cu = tdev_cu();
  for (int k = 0; k < s->n; k++) {
    tdev_buf_t *bufs[2] = {&s->ops[k].send, &s->ops[k].recv};
    for (int i = 0; i < 2; i++) {
      tdev_ptr_t dev;
      unsigned char *host;
      size_t bytes;
      opset_range(bufs[i], &dev, &host, &bytes);
      TDEV_CU(cu->cuMemcpyHtoDAsync(dev, host, bytes, cuda_stream));
    }
  }
}

void opset_pull(opset_t *s) {
  for (int k = 0; k < s->n; k++)
    tdev_buf_pull(&s->ops[k].recv);
}

void opset_pull_async(opset_t *s, void *cuda_stream) {
  const tdev_driver_t *cu = tdev_cu();
  for (int k = 0; k < s->n; k++) {
    tdev_ptr_t dev;
    unsigned char *host;
    size_t bytes;
    opset_range(&s->ops[k].recv, &dev, &host, &bytes);
    TDEV_CU(cu->cuMemcpyDtoHAsync(host, dev, bytes, cuda_stream));
  }
}

void opset_enqueue(opset_t *s, symcomm_stream_t stream) {
  symcomm_comm_t c = s->comm;
  int right = (s->rank + 1) % s->nranks, left = (s->rank + s->nranks - 1) % s->nranks;
  for (int k = 0; k < s->n; k++) {
    opset_op_t *o = &s->ops[k];
    void *in = o->send.data, *out = o->recv.data;
    switch (o->kind) {
    case OPSET_ALLREDUCE: TEST_OK(symcomm_allreduce(in, out, o->count, o->t, o->op, c, stream)); break;
    case OPSET_REDUCE: TEST_OK(symcomm_reduce(in, out, o->count, o->t, o->op, o->root, c, stream)); break;
    case OPSET_BROADCAST: TEST_OK(symcomm_broadcast(in, out, o->count, o->t, o->root, c, stream)); break;
    case OPSET_ALLGATHER: TEST_OK(symcomm_allgather(in, out, o->count, o->t, c, stream)); break;
    case OPSET_REDUCESCATTER:
      TEST_OK(symcomm_reducescatter(in, out, o->count, o->t, o->op, c, stream));
      break;
    case OPSET_ALLTOALL: TEST_OK(symcomm_alltoall(in, out, o->count, o->t, c, stream)); break;
    case OPSET_SENDRECV:
      TEST_OK(symcomm_group_start());
      TEST_OK(symcomm_send(in, o->count, SYMCOMM_UINT8, right, c, stream));
      TEST_OK(symcomm_recv(out, o->count, SYMCOMM_UINT8, left, c, stream));
      TEST_OK(symcomm_group_end());
      break;
    }
  }
}

void opset_check(opset_t *s, uint64_t seed, const char *what) {
  int n = s->nranks, left = (s->rank + n - 1) % n;
  for (int k = 0; k < s->n; k++) {
    opset_op_t *o = &s->ops[k];
    const unsigned char *out = o->recv.host.data;
    size_t block = o->count * td_dtype_size(o->t);
    uint64_t sk = opset_seed(seed, k);
    char name[200];
    snprintf(name, sizeof(name), "%s: %s %s count %zu (operation %d of the set)", what,
             opset_names[o->kind], symcomm_dtype_string(o->t), o->count, k);
    switch (o->kind) {
    case OPSET_ALLREDUCE: td_check_reduced(out, o->count, o->t, o->op, sk, 0, n, name); break;
    case OPSET_REDUCE:
      if (s->rank == o->root)
        td_check_reduced(out, o->count, o->t, o->op, sk, 0, n, name);
      else /* nobody writes a non-root's receive buffer */
        td_check_untouched(out, block, name);
      break;
    case OPSET_BROADCAST: td_check_elems(out, o->count, o->t, sk, o->root, 0, name); break;
    case OPSET_REDUCESCATTER:
      td_check_reduced(out, o->count, o->t, o->op, sk, (uint64_t)s->rank * o->count, n, name);
      break;
    case OPSET_ALLGATHER:
    case OPSET_ALLTOALL:
      for (int r = 0; r < n; r++) {
        uint64_t first = o->kind == OPSET_ALLTOALL ? (uint64_t)s->rank * o->count : 0;
        char block_name[240];
        snprintf(block_name, sizeof(block_name), "%s, block of rank %d", name, r);
        td_check_elems(out + (size_t)r * block, o->count, o->t, sk, r, first, block_name);
      }
      break;
    case OPSET_SENDRECV: td_check(out, o->count, sk, left, name); break;
    }
    td_check_guards(out, o->recv.host.bytes, name);
  }
}

void opset_round(opset_t *s, symcomm_stream_t stream, uint64_t seed, const char *what) {
  opset_fill(s, seed);
  opset_push(s);
  opset_enqueue(s, stream);
  symcomm_result_t r = symcomm_stream_synchronize(stream);
  TEST_ASSERT(r == SYMCOMM_OK, "%s: synchronize returned %s: %s", what, symcomm_result_string(r),
              symcomm_last_error(s->comm));
  opset_pull(s);
  opset_check(s, seed, what);
}

void opset_describe(const opset_t *s, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int k = 0; k < s->n && used < len; k++) {
    const opset_op_t *o = &s->ops[k];
    int w = snprintf(buf + used, len - used, "%s%s %s x%zu", k ? ", " : "", opset_names[o->kind],
                     symcomm_dtype_string(o->t), o->count);
    used += w > 0 ? (size_t)w : 0;
  }
}
