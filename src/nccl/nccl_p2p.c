/* Sends and receives, and the gather and scatter NCCL 2.28 declares, made of
 * them in a group. A rank's send to itself is legal inside a group (PyTorch's
 * all-to-all posts one): the group pairs it with the receive and copies. */
#include "shim.h"

/* On a held comm. */
static ncclResult_t shim_p2p_held(bool send, void *buf, size_t count, ncclDataType_t datatype,
                                  int peer, ncclComm_t comm, cudaStream_t stream, const char *call) {
  symcomm_dtype_t dtype;
  size_t elem, bytes;
  symcomm_stream_t s;
  bool sync;
  ncclResult_t res = shim_move_type(datatype, call, &dtype, &elem);
  if (res == ncclSuccess)
    res = shim_bytes(count, 1, elem, call, &bytes);
  if (res != ncclSuccess)
    return res;
  if (peer < 0 || peer >= comm->nranks)
    return shim_fail(ncclInvalidArgument, "%s: peer %d is not in [0, %d)", call, peer, comm->nranks);
  if ((res = shim_stream(comm, stream, &s, &sync)) != ncclSuccess)
    return res;
  if (peer == comm->rank) {
    if (!shim_in_group())
      return shim_fail(ncclInvalidUsage,
                       "%s: a rank's send to itself needs its receive in the same group "
                       "(ncclGroupStart/ncclGroupEnd)",
                       call);
    res = shim_group_add_self(comm, send, buf, bytes, s);
  } else {
    symcomm_result_t r = send ? symcomm_send(buf, count, dtype, peer, comm->sc, s)
                              : symcomm_recv(buf, count, dtype, peer, comm->sc, s);
    res = shim_result(r, comm->sc);
  }
  return res == ncclSuccess ? shim_stream_done(comm, sync) : res;
}

static ncclResult_t shim_p2p(bool send, void *buf, size_t count, ncclDataType_t datatype, int peer,
                             ncclComm_t comm, cudaStream_t stream, const char *call) {
  ncclResult_t res = shim_comm_hold(comm, true, call);
  if (res != ncclSuccess) {
    shim_group_note(res);
    return res;
  }
  res = shim_p2p_held(send, buf, count, datatype, peer, comm, stream, call);
  shim_comm_release(comm);
  shim_group_note(res);
  return res;
}

SHIM_API ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                               ncclComm_t comm, cudaStream_t stream) {
  return shim_p2p(true, (void *)sendbuff, count, datatype, peer, comm, stream, "ncclSend");
}
SHIM_PROFILED(ncclSend);

SHIM_API ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                               ncclComm_t comm, cudaStream_t stream) {
  return shim_p2p(false, recvbuff, count, datatype, peer, comm, stream, "ncclRecv");
}
SHIM_PROFILED(ncclRecv);

/* On a held comm: checks what gather and scatter need before any of their sends is posted
 * (a group that failed halfway would queue the other half). */
static ncclResult_t shim_rooted_check(ncclComm_t comm, size_t count, ncclDataType_t datatype,
                                      int root, const char *call, size_t *block) {
  symcomm_dtype_t dtype;
  size_t elem, all;
  ncclResult_t res = shim_move_type(datatype, call, &dtype, &elem);
  if (res == ncclSuccess)
    res = shim_bytes(count, (size_t)comm->nranks, elem, call, &all);
  if (res == ncclSuccess && (root < 0 || root >= comm->nranks))
    res = shim_fail(ncclInvalidArgument, "%s: root %d is not in [0, %d)", call, root, comm->nranks);
  *block = count * elem;
  return res;
}

/* Gather (gather = true): the root's block r of buf comes from rank r's one.
 * Scatter: rank r's one comes from the root's block r. In place: the root's
 * own block is its one. */
static ncclResult_t shim_rooted(bool gather, const void *sendbuff, void *recvbuff, size_t count,
                                ncclDataType_t datatype, int root, ncclComm_t comm,
                                cudaStream_t stream, const char *call) {
  size_t block;
  ncclResult_t res = shim_comm_hold(comm, true, call);
  if (res != ncclSuccess)
    return res;
  if ((res = shim_rooted_check(comm, count, datatype, root, call, &block)) != ncclSuccess) {
    shim_comm_release(comm);
    return res;
  }
  char *blocks = gather ? recvbuff : (char *)sendbuff;
  void *one = gather ? (void *)sendbuff : recvbuff;
  ncclGroupStart();
  if (comm->rank != root) {
    res = shim_p2p_held(gather, one, count, datatype, root, comm, stream, call);
  } else {
    for (int r = 0; r < comm->nranks && res == ncclSuccess; r++) {
      char *at = blocks + (size_t)r * block;
      if (r != root)
        res = shim_p2p_held(!gather, at, count, datatype, r, comm, stream, call);
      else if (at != one && count > 0) {
        res = shim_p2p_held(true, gather ? one : at, count, datatype, r, comm, stream, call);
        if (res == ncclSuccess)
          res = shim_p2p_held(false, gather ? at : one, count, datatype, r, comm, stream, call);
      }
    }
  }
  ncclResult_t end = ncclGroupEnd();
  shim_comm_release(comm);
  return res != ncclSuccess ? res : end;
}

SHIM_API ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count,
                                 ncclDataType_t datatype, int root, ncclComm_t comm,
                                 cudaStream_t stream) {
  ncclResult_t res = shim_rooted(true, sendbuff, recvbuff, count, datatype, root, comm, stream, "ncclGather");
  shim_group_note(res);
  return res;
}
SHIM_PROFILED(ncclGather);

SHIM_API ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count,
                                  ncclDataType_t datatype, int root, ncclComm_t comm,
                                  cudaStream_t stream) {
  ncclResult_t res = shim_rooted(false, sendbuff, recvbuff, count, datatype, root, comm, stream, "ncclScatter");
  shim_group_note(res);
  return res;
}
SHIM_PROFILED(ncclScatter);
