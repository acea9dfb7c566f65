/* Public topology entry points: files, a communicator's hosts, and queries. */
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "util/log.h"

const char *symcomm_topo_class_string(symcomm_topo_class_t cls) {
  switch (cls) {
  case SYMCOMM_TOPO_NONE: return "NONE";
  case SYMCOMM_TOPO_PARTIAL: return "PARTIAL";
  case SYMCOMM_TOPO_HYBRID_CUBE_MESH: return "HYBRID_CUBE_MESH";
  case SYMCOMM_TOPO_FULLY_CONNECTED: return "FULLY_CONNECTED";
  }
  return "UNKNOWN";
}

const char *symcomm_link_string(symcomm_link_t link) {
  switch (link) {
  case SYMCOMM_LINK_SELF: return "X";
  case SYMCOMM_LINK_NVLINK: return "NV";
  case SYMCOMM_LINK_PIX: return "PIX";
  case SYMCOMM_LINK_PXB: return "PXB";
  case SYMCOMM_LINK_PHB: return "PHB";
  case SYMCOMM_LINK_SYS: return "SYS";
  case SYMCOMM_LINK_NET: return "NET";
  }
  return "UNKNOWN";
}

symcomm_result_t symcomm_topo_load(const char *path, symcomm_topo_t *topo) {
  sc_error_clear();
  if (path == NULL || topo == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "symcomm_topo_load: %s is NULL",
                    path == NULL ? "path" : "topo");
  return sc_topo_load_file(path, topo);
}

symcomm_result_t symcomm_topo_write(symcomm_topo_t topo, const char *path) {
  sc_error_clear();
  if (topo == NULL || path == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "symcomm_topo_write: %s is NULL",
                    topo == NULL ? "topo" : "path");
  return sc_topo_write_file(topo, path);
}

symcomm_result_t symcomm_comm_host_topo(symcomm_comm_t comm, int host, symcomm_topo_t *topo) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  sc_result_t res = SYMCOMM_OK;
  sc_topo_t *copy = NULL;
  if (topo == NULL)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "symcomm_comm_host_topo: topo is NULL");
  else if (host < 0 || host >= comm->nhosts)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO,
                   "symcomm_comm_host_topo: host %d is not in [0, %d)", host, comm->nhosts);
  else if ((copy = malloc(sizeof(*copy))) == NULL)
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_TOPO, "no memory for a topology");
  if (res == SYMCOMM_OK) {
    memcpy(copy, comm->host_topo[host], sizeof(*copy));
    *topo = copy;
  }
  return sc_comm_finish(comm, res);
}

static sc_result_t sc_topo_check(symcomm_topo_t topo, const void *out, int gpu_a, int gpu_b,
                                 const char *call) {
  if (topo == NULL || out == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "%s: %s is NULL", call,
                    topo == NULL ? "topo" : "an output pointer");
  if (gpu_a < 0 || gpu_a >= topo->ngpus || gpu_b < 0 || gpu_b >= topo->ngpus)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "%s: GPU %d is not in [0, %d)", call,
                    gpu_a < 0 || gpu_a >= topo->ngpus ? gpu_a : gpu_b, topo->ngpus);
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_topo_gpu_count(symcomm_topo_t topo, int *count) {
  sc_error_clear();
  if (topo == NULL || count == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "symcomm_topo_gpu_count: NULL argument");
  *count = topo->ngpus;
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_topo_gpu_busid(symcomm_topo_t topo, int gpu, char *busid, size_t len) {
  sc_error_clear();
  SC_CHECK(sc_topo_check(topo, busid, gpu, gpu, "symcomm_topo_gpu_busid"));
  if (len < 13)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO,
                    "symcomm_topo_gpu_busid: %zu bytes cannot hold a bus id (13 needed)", len);
  sc_busid_format(topo->busid[gpu], busid, len);
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_topo_gpu_rank(symcomm_topo_t topo, int gpu, int *rank) {
  sc_error_clear();
  SC_CHECK(sc_topo_check(topo, rank, gpu, gpu, "symcomm_topo_gpu_rank"));
  *rank = topo->rank[gpu];
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_topo_link(symcomm_topo_t topo, int gpu_a, int gpu_b, symcomm_link_t *link,
                                   int *nvlinks) {
  sc_error_clear();
  SC_CHECK(sc_topo_check(topo, link, gpu_a, gpu_b, "symcomm_topo_link"));
  *link = (symcomm_link_t)topo->link[gpu_a][gpu_b];
  if (nvlinks != NULL)
    *nvlinks = topo->nvlinks[gpu_a][gpu_b];
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_topo_class(symcomm_topo_t topo, symcomm_topo_class_t *cls) {
  sc_error_clear();
  SC_CHECK(sc_topo_check(topo, cls, 0, 0, "symcomm_topo_class"));
  *cls = sc_topo_classify(topo);
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_topo_free(symcomm_topo_t topo) {
  sc_error_clear();
  sc_topo_free(topo);
  return SYMCOMM_OK;
}
