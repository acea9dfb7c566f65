/* The caller's stream as a symcomm stream (see shim.h for the rule on each
 * backend). On CUDA each cudaStream_t is wrapped once per communicator and
 * kept until the communicator ends, so a call on a known stream neither
 * allocates nor synchronizes (nor breaks a CUDA graph capture). */
#include <stdlib.h>

#include "shim.h"

static symcomm_stream_t shim_stream_find(ncclComm_t comm, void *key) {
  for (int i = 0; i < comm->nstreams; i++)
    if (comm->streams[i].key == key)
      return comm->streams[i].stream;
  return NULL;
}

static ncclResult_t shim_stream_wrap(ncclComm_t comm, void *key, symcomm_stream_t *out) {
  pthread_mutex_lock(&comm->lock);
  ncclResult_t res = ncclSuccess;
  symcomm_stream_t s = shim_stream_find(comm, key);
  if (s == NULL && comm->nstreams == comm->cap_streams) {
    int cap = comm->cap_streams ? 2 * comm->cap_streams : 8;
    shim_stream_entry_t *grown = realloc(comm->streams, (size_t)cap * sizeof(*grown));
    if (grown == NULL)
      res = shim_fail(ncclSystemError, "no memory to remember a stream");
    else {
      comm->streams = grown;
      comm->cap_streams = cap;
    }
  }
  if (s == NULL && res == ncclSuccess) {
    res = shim_result(symcomm_stream_from_cuda(comm->sc, key, &s), comm->sc);
    if (res == ncclSuccess)
      comm->streams[comm->nstreams++] = (shim_stream_entry_t){key, s};
  }
  pthread_mutex_unlock(&comm->lock);
  if (res == ncclSuccess)
    *out = s;
  return res;
}

ncclResult_t shim_stream(ncclComm_t comm, cudaStream_t stream, symcomm_stream_t *out, bool *sync) {
  *sync = false;
  if (comm->cuda)
    return shim_stream_wrap(comm, (void *)stream, out);
  if (stream == NULL) {
    *out = comm->own;
    *sync = true;
  } else {
    *out = (symcomm_stream_t)(void *)stream;
  }
  return ncclSuccess;
}

ncclResult_t shim_stream_finish(ncclComm_t comm) {
  return shim_result(symcomm_stream_synchronize(comm->own), comm->sc);
}

ncclResult_t shim_stream_done(ncclComm_t comm, bool sync) {
  if (!sync)
    return ncclSuccess;
  if (shim_in_group())
    return shim_group_add_sync(comm);
  return shim_stream_finish(comm);
}

ncclResult_t shim_stream_drain(ncclComm_t comm) {
  ncclResult_t res = ncclSuccess, r;
  if (comm->own != NULL && (r = shim_stream_finish(comm)) != ncclSuccess)
    res = r;
  pthread_mutex_lock(&comm->lock);
  for (int i = 0; i < comm->nstreams; i++)
    if ((r = shim_result(symcomm_stream_synchronize(comm->streams[i].stream), comm->sc)) !=
            ncclSuccess &&
        res == ncclSuccess)
      res = r;
  pthread_mutex_unlock(&comm->lock);
  return res;
}

void shim_stream_release(ncclComm_t comm) {
  for (int i = 0; i < comm->nstreams; i++)
    symcomm_stream_destroy(comm->streams[i].stream);
  comm->nstreams = 0;
  if (comm->own != NULL)
    symcomm_stream_destroy(comm->own);
  comm->own = NULL;
}
