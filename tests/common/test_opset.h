/* A fixed set of different operations on device buffers, for tests that run
 * the same work many times in other settings (a caller's CUDA stream, a CUDA
 * graph replayed, compute-sanitizer): two all-reduces (one-shot and two-shot
 * sizes), a reduce, a broadcast, an all-gather, a reduce-scatter, an
 * all-to-all and a grouped send/recv ring of several chunks. Odd counts,
 * several types and ops, roots that differ. Each round has its own seed:
 * every input depends on (seed, operation, rank, index), every output starts
 * as the sentinel between guards and is checked element by element. */
#ifndef SC_TEST_OPSET_H
#define SC_TEST_OPSET_H

#include <stdint.h>

#include "symcomm.h"
#include "test_device.h"

typedef enum {
  OPSET_ALLREDUCE,
  OPSET_REDUCE,
  OPSET_BROADCAST,
  OPSET_ALLGATHER,
  OPSET_REDUCESCATTER,
  OPSET_ALLTOALL,
  OPSET_SENDRECV
} opset_kind_t;

typedef struct opset_op {
  opset_kind_t kind;
  symcomm_dtype_t t;
  symcomm_op_t op;
  size_t count; /* as the API counts it (bytes for the ring: uint8) */
  int root;
  tdev_buf_t send, recv;
} opset_op_t;

enum { OPSET_MAX = 9 };

typedef struct opset {
  symcomm_comm_t comm;
  int rank, nranks;
  int n;
  opset_op_t ops[OPSET_MAX];
} opset_t;

/* The buffers, on comm's device (tdev_open(comm) first). */
void opset_init(opset_t *s, symcomm_comm_t comm);
void opset_free(opset_t *s);
/* Host copies: inputs of round `seed`, outputs the sentinel. */
void opset_fill(opset_t *s, uint64_t seed);
/* Host copies -> device (inputs and outputs), synchronously, or queued on a
 * CUDA stream of the caller (cuda only; nothing waits). */
void opset_push(opset_t *s);
void opset_push_async(opset_t *s, void *cuda_stream);
/* Queues every operation on `stream`, in the set's order (the ring as one group). */
void opset_enqueue(opset_t *s, symcomm_stream_t stream);
/* Outputs -> host copies, synchronously or queued on a CUDA stream. */
void opset_pull(opset_t *s);
void opset_pull_async(opset_t *s, void *cuda_stream);
/* Fails the test unless every output holds round `seed`'s result; `what`
 * names the round in the message. */
void opset_check(opset_t *s, uint64_t seed, const char *what);
/* A whole round on `stream`: fill, push, enqueue, synchronize, pull, check. */
void opset_round(opset_t *s, symcomm_stream_t stream, uint64_t seed, const char *what);
/* One line: the operations of the set. */
void opset_describe(const opset_t *s, char *buf, size_t len);

#endif
