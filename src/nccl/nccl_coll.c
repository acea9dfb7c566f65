/* The collectives: each checks the communicator, types and sizes, maps the
 * stream, queues symcomm's collective and, for a NULL stream on simulated
 * GPUs, waits for it (or leaves that to the group's end). */
#include "shim.h"

typedef struct shim_call {
  symcomm_stream_t stream;
  bool sync;
  symcomm_dtype_t dtype;
  symcomm_op_t op;
  size_t elem;
} shim_call_t;

/* On a held comm. factor: how many count-sized blocks the largest buffer holds (nranks for
 * all-gather's output, 1 for all-reduce). reduce: the call takes op. */
static ncclResult_t shim_coll_begin(ncclComm_t comm, cudaStream_t stream, ncclDataType_t t,
                                    ncclRedOp_t op, bool reduce, size_t count, bool per_rank,
                                    const char *call, shim_call_t *c) {
  ncclResult_t res = reduce ? shim_reduce_type(t, op, call, &c->dtype, &c->op, &c->elem)
               : shim_move_type(t, call, &c->dtype, &c->elem);
  size_t bytes;
  if (res == ncclSuccess)
    res = shim_bytes(count, per_rank ? (size_t)comm->nranks : 1, c->elem, call, &bytes);
  if (res == ncclSuccess)
    res = shim_stream(comm, stream, &c->stream, &c->sync);
  return res;
}

enum shim_coll { SHIM_ALLREDUCE, SHIM_REDUCE, SHIM_BROADCAST, SHIM_ALLGATHER, SHIM_REDUCESCATTER, SHIM_ALLTOALL };

static const struct {
  const char *name;
  bool reduce;   /* takes an operator */
  bool per_rank; /* a buffer holds nranks blocks of count */
} shim_colls[] = {
    [SHIM_ALLREDUCE] = {"ncclAllReduce", true, false},
    [SHIM_REDUCE] = {"ncclReduce", true, false},
    [SHIM_BROADCAST] = {"ncclBroadcast", false, false},
    [SHIM_ALLGATHER] = {"ncclAllGather", false, true},
    [SHIM_REDUCESCATTER] = {"ncclReduceScatter", true, true},
    [SHIM_ALLTOALL] = {"ncclAlltoAll", false, true},
};

static ncclResult_t shim_coll_call(enum shim_coll kind, const void *sendbuff, void *recvbuff,
                                   size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root,
                                   ncclComm_t comm, cudaStream_t stream) {
  shim_call_t c;
  ncclResult_t res = shim_comm_hold(comm, true, shim_colls[kind].name);
  if (res != ncclSuccess)
    return res;
  res = shim_coll_begin(comm, stream, datatype, op, shim_colls[kind].reduce, count,
                        shim_colls[kind].per_rank, shim_colls[kind].name, &c);
  if (res != ncclSuccess) {
    shim_comm_release(comm);
    return res;
  }
  symcomm_comm_t sc = comm->sc;
  symcomm_result_t r = SYMCOMM_ERR_INTERNAL;
  switch (kind) {
  case SHIM_ALLREDUCE: r = symcomm_allreduce(sendbuff, recvbuff, count, c.dtype, c.op, sc, c.stream); break;
  case SHIM_REDUCE: r = symcomm_reduce(sendbuff, recvbuff, count, c.dtype, c.op, root, sc, c.stream); break;
  case SHIM_BROADCAST: r = symcomm_broadcast(sendbuff, recvbuff, count, c.dtype, root, sc, c.stream); break;
  case SHIM_ALLGATHER: r = symcomm_allgather(sendbuff, recvbuff, count, c.dtype, sc, c.stream); break;
  case SHIM_REDUCESCATTER: r = symcomm_reducescatter(sendbuff, recvbuff, count, c.dtype, c.op, sc, c.stream); break;
  case SHIM_ALLTOALL: r = symcomm_alltoall(sendbuff, recvbuff, count, c.dtype, sc, c.stream); break;
  }
  res = shim_result(r, sc);
  if (res == ncclSuccess)
    res = shim_stream_done(comm, c.sync);
  shim_comm_release(comm);
  return res;
}

static ncclResult_t shim_coll(enum shim_coll kind, const void *sendbuff, void *recvbuff, size_t count,
                              ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                              cudaStream_t stream) {
  ncclResult_t res = shim_coll_call(kind, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
  shim_group_note(res);
  return res;
}

SHIM_API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                    cudaStream_t stream) {
  return shim_coll(SHIM_ALLREDUCE, sendbuff, recvbuff, count, datatype, op, 0, comm, stream);
}
SHIM_PROFILED(ncclAllReduce);

SHIM_API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count,
                                 ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                                 cudaStream_t stream) {
  return shim_coll(SHIM_REDUCE, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}
SHIM_PROFILED(ncclReduce);

SHIM_API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                                    ncclDataType_t datatype, int root, ncclComm_t comm,
                                    cudaStream_t stream) {
  return shim_coll(SHIM_BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
}
SHIM_PROFILED(ncclBroadcast);

SHIM_API ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream) {
  return shim_coll(SHIM_BROADCAST, buff, buff, count, datatype, ncclSum, root, comm, stream);
}
SHIM_PROFILED(ncclBcast);

SHIM_API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return shim_coll(SHIM_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, stream);
}
SHIM_PROFILED(ncclAllGather);

SHIM_API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                        ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                        cudaStream_t stream) {
  return shim_coll(SHIM_REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0, comm, stream);
}
SHIM_PROFILED(ncclReduceScatter);

SHIM_API ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                                   ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return shim_coll(SHIM_ALLTOALL, sendbuff, recvbuff, count, datatype, ncclSum, 0, comm, stream);
}
SHIM_PROFILED(ncclAlltoAll);
