/* What a communicator tells about itself and its ranks. */
#include <stdio.h>

#include "backend/dev_result.h"
#include "core/comm.h"
#include "util/log.h"

/* Checks comm and an output pointer; every query starts with it. */
static sc_result_t sc_query_check(symcomm_comm_t comm, const void *out, const char *call) {
  SC_CHECK(sc_comm_check(comm));
  if (out == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "%s: the output pointer is NULL", call);
  return SYMCOMM_OK;
}

static sc_result_t sc_query_peer(symcomm_comm_t comm, int peer, const void *out, const char *call) {
  SC_CHECK(sc_query_check(comm, out, call));
  if (peer < 0 || peer >= comm->nranks)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "%s: rank %d is not in [0, %d)", call,
                    peer, comm->nranks);
  return SYMCOMM_OK;
}

/* A query of one int: check, then copy. */
#define SC_QUERY_INT(call, out, value)                                  \
  do {                                                                  \
    sc_error_clear();                                                   \
    sc_result_t res_ = sc_query_check(comm, (out), call);               \
    if (res_ == SYMCOMM_OK)                                             \
      *(out) = (value);                                                 \
    return sc_comm_finish(comm, res_);                                  \
  } while (0)

symcomm_result_t symcomm_comm_rank(symcomm_comm_t comm, int *rank) {
  SC_QUERY_INT("symcomm_comm_rank", rank, comm->rank);
}

symcomm_result_t symcomm_comm_size(symcomm_comm_t comm, int *size) {
  SC_QUERY_INT("symcomm_comm_size", size, comm->nranks);
}

symcomm_result_t symcomm_comm_local_rank(symcomm_comm_t comm, int *local_rank) {
  SC_QUERY_INT("symcomm_comm_local_rank", local_rank, comm->local_rank);
}

symcomm_result_t symcomm_comm_local_size(symcomm_comm_t comm, int *local_size) {
  SC_QUERY_INT("symcomm_comm_local_size", local_size, comm->local_size);
}

symcomm_result_t symcomm_comm_host_count(symcomm_comm_t comm, int *count) {
  SC_QUERY_INT("symcomm_comm_host_count", count, comm->nhosts);
}

symcomm_result_t symcomm_comm_host_index(symcomm_comm_t comm, int *host) {
  SC_QUERY_INT("symcomm_comm_host_index", host, comm->host);
}

symcomm_result_t symcomm_comm_peer_host(symcomm_comm_t comm, int peer, int *host) {
  sc_error_clear();
  sc_result_t res = sc_query_peer(comm, peer, host, "symcomm_comm_peer_host");
  if (res == SYMCOMM_OK)
    *host = comm->peers[peer].host;
  return sc_comm_finish(comm, res);
}

symcomm_result_t symcomm_comm_peer_world_rank(symcomm_comm_t comm, int peer, int *world_rank) {
  sc_error_clear();
  sc_result_t res = sc_query_peer(comm, peer, world_rank, "symcomm_comm_peer_world_rank");
  if (res == SYMCOMM_OK)
    *world_rank = comm->peers[peer].world_rank;
  return sc_comm_finish(comm, res);
}

symcomm_result_t symcomm_comm_peer_busid(symcomm_comm_t comm, int peer, char *busid, size_t len) {
  sc_error_clear();
  sc_result_t res = sc_query_peer(comm, peer, busid, "symcomm_comm_peer_busid");
  if (res == SYMCOMM_OK && len < 13)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                   "symcomm_comm_peer_busid: %zu bytes cannot hold a bus id (13 needed)", len);
  if (res == SYMCOMM_OK)
    sc_busid_format(comm->peers[peer].busid, busid, len);
  return sc_comm_finish(comm, res);
}

symcomm_result_t symcomm_comm_device(symcomm_comm_t comm, const char **backend, int *device) {
  sc_error_clear();
  sc_result_t res = sc_query_check(comm, comm, "symcomm_comm_device");
  if (res == SYMCOMM_OK) {
    if (backend != NULL)
      *backend = comm->ops->name;
    if (device != NULL)
      *device = comm->peers[comm->rank].dev;
  }
  return sc_comm_finish(comm, res);
}

symcomm_result_t symcomm_comm_host_name(symcomm_comm_t comm, int host, char *name, size_t len) {
  sc_error_clear();
  sc_result_t res = sc_query_check(comm, name, "symcomm_comm_host_name");
  if (res == SYMCOMM_OK && (host < 0 || host >= comm->nhosts))
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                   "symcomm_comm_host_name: host %d is not in [0, %d)", host, comm->nhosts);
  if (res == SYMCOMM_OK && len == 0)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "symcomm_comm_host_name: len is 0");
  if (res == SYMCOMM_OK) {
    const sc_peer_t *p = &comm->peers[comm->host_topo[host]->rank[0]];
    if (p->sim_host >= 0)
      snprintf(name, len, "%s/sim%d", p->hostname, p->sim_host);
    else
      snprintf(name, len, "%s", p->hostname);
  }
  return sc_comm_finish(comm, res);
}

/* Reads only words the device programs and the monitor write once (the
 * status block's `first`, the abort flag, `failed` after its text): no lock,
 * no stream, nothing queued, so that a watchdog thread may ask while
 * kernels run or a stream is being captured. */
symcomm_result_t symcomm_comm_get_async_error(symcomm_comm_t comm, symcomm_result_t *async_error) {
  sc_error_clear();
  sc_result_t res = sc_query_check(comm, async_error, "symcomm_comm_get_async_error");
  if (res != SYMCOMM_OK)
    return sc_comm_finish(comm, res);
  char text[sizeof(comm->fail_text)];
  sc_result_t found = SYMCOMM_OK;
  const sc_dev_status_t *st = comm->status;
  if (st != NULL && __atomic_load_n(&st->first_failed, __ATOMIC_ACQUIRE) == 2) {
    /* A program's own account names the peer and the operation, as the
     * stream that ran it would. */
    sc_dev_error_t first = st->first;
    sc_dev_error_describe(&first, text, sizeof(text));
    found = sc_backend_dev_result(&first);
  } else if ((found = atomic_load(&comm->failed)) != SYMCOMM_OK) {
    /* The first failure the host recorded: this rank's abort included. */
    snprintf(text, sizeof(text), "%s", comm->fail_text);
  } else if (atomic_load(&comm->aborted)) { /* an abort recording itself right now */
    snprintf(text, sizeof(text), "the communicator was aborted");
    found = SYMCOMM_ERR_ABORTED;
  }
  if (found != SYMCOMM_OK) {
    sc_error_pass(found, text);
    sc_comm_note_error(comm);
  }
  *async_error = found;
  return SYMCOMM_OK;
}
