/* A communicator's device: the backend, the status block programs read, the view
 * lower layers get, and send/recv's windows. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/comm.h"
#include "util/log.h"
#include "util/param.h"

/* The cores this process may run on (its affinity mask), else those online. */
static long sc_usable_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return CPU_COUNT(&set);
  return sysconf(_SC_NPROCESSORS_ONLN);
}

static sc_result_t sc_comm_fill_view(struct symcomm_comm *comm) {
  comm->local_of = malloc(sizeof(int) * (size_t)comm->nranks);
  comm->local_rank_to_rank = malloc(sizeof(int) * (size_t)comm->local_size);
  comm->pids = malloc(sizeof(int) * (size_t)comm->nranks);
  if (comm->local_of == NULL || comm->local_rank_to_rank == NULL || comm->pids == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory for %d ranks", comm->nranks);
  for (int r = 0; r < comm->nranks; r++) {
    const sc_peer_t *p = &comm->peers[r];
    comm->pids[r] = p->pid;
    comm->local_of[r] = p->host == comm->host ? p->local_rank : -1;
    if (p->host == comm->host)
      comm->local_rank_to_rank[p->local_rank] = r;
  }
  sc_comm_view_t *v = &comm->view;
  v->rank = comm->rank;
  v->nranks = comm->nranks;
  v->local_rank = comm->local_rank;
  v->local_size = comm->local_size;
  v->topo_class = (int)sc_topo_classify(comm->host_topo[comm->host]);
  v->max_local_size = 0;
  for (int r = 0; r < comm->nranks; r++)
    if (comm->peers[r].local_rank + 1 > v->max_local_size)
      v->max_local_size = comm->peers[r].local_rank + 1;
  v->local_of = comm->local_of;
  v->local_rank_to_rank = comm->local_rank_to_rank;
  v->pids = comm->pids;
  v->secret = comm->secret;
  v->boot = &comm->boot;
  v->ops = comm->ops;
  v->device = comm->device;
  v->status = comm->status;
  v->dev_stop = comm->dev_stop;
  v->abort_fd = comm->abort_wake.fd;
  v->timeout_ms = comm->options.timeout_ms;
  /* A wait may poll before giving the core away only when that starves
   * nobody: every rank on the host (of this communicator, or of the job it
   * was split from) has a core each for its two threads, the caller and its
   * stream's worker. */
  long long spin = -1;
  SC_CHECK(sc_param_int(SC_PARAM_SPIN_US, &spin, NULL));
  if (spin < -1 || spin > 1000000)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV,
                    "SYMCOMM_SPIN_US=%lld: use -1 (automatic) or 0 to 1000000 microseconds", spin);
  if (spin < 0) {
    int ranks = comm->local_size > comm->options.host_ranks_hint ? comm->local_size
                                                                  : comm->options.host_ranks_hint;
    long cores = sc_usable_cores();
    spin = cores > 0 && 2 * (long)ranks <= cores ? 20 : 0;
  }
  v->max_blocks = comm->options.max_blocks;
  v->guard = (sc_guard_t){.status = comm->status, .timeout_ms = comm->options.timeout_ms,
                          .spin_us = (uint32_t)spin};
  v->exchanges = 0;
  v->windows = comm->window_table;
  v->dev_windows = comm->dev_window_table;
  v->windows_made = 0;
  v->reg_pads = NULL;
  return SYMCOMM_OK;
}

int sc_comm_device_index(const struct symcomm_comm *comm) {
  if (comm->options.device >= 0)
    return comm->options.device;
  /* Simulated hosts on a machine with real GPUs (SYMCOMM_HOSTID on a GPU
   * host): ranks of different simulated hosts must not share a GPU, so a rank
   * takes its place among the ranks of this machine (its hostname), not of
   * its simulated host. */
  const sc_peer_t *me = &comm->peers[comm->rank];
  if (comm->ops != NULL && comm->ops != &sc_backend_host && me->sim_host >= 0) {
    int index = 0;
    for (int r = 0; r < comm->rank; r++)
      index += strcmp(comm->peers[r].hostname, me->hostname) == 0;
    return index;
  }
  return comm->local_rank;
}

sc_result_t sc_comm_open_device(struct symcomm_comm *comm, int index) {
  if (comm->device != NULL)
    return SYMCOMM_OK;
  if (comm->ops == NULL) {
    pthread_mutex_init(&comm->lock, NULL);
    SC_CHECK(sc_backend_select(comm->options.backend[0] != '\0' ? comm->options.backend : NULL,
                               &comm->ops));
  }
  if (index < 0) /* the default, which depends on the backend */
    index = sc_comm_device_index(comm);
  return comm->ops->device_open(index, &comm->device);
}

sc_result_t sc_comm_check_buffers(struct symcomm_comm *comm, const char *call, const void *a,
                                  size_t a_bytes, const char *a_name, const void *b,
                                  size_t b_bytes, const char *b_name) {
  char what[128];
  if (a_bytes > 0) {
    snprintf(what, sizeof(what), "%s: %s", call, a_name);
    SC_CHECK(comm->ops->ptr_check(comm->device, a, a_bytes, what));
  }
  if (b_bytes > 0 && !(b == a && b_bytes <= a_bytes)) {
    snprintf(what, sizeof(what), "%s: %s", call, b_name);
    SC_CHECK(comm->ops->ptr_check(comm->device, b, b_bytes, what));
  }
  return SYMCOMM_OK;
}

/* The network's first failure (its progress thread): the communicator fails
 * here, and the root tells the other ranks. */
static void sc_comm_net_failed(void *ctx, sc_result_t res, const char *sentence) {
  sc_comm_watch_fail_here(ctx, res, sentence);
}

sc_result_t sc_comm_attach_device(struct symcomm_comm *comm) {
  SC_CHECK(sc_comm_open_device(comm, comm->peers[comm->rank].dev));
  void *word = NULL;
  SC_CHECK(comm->ops->host_alloc(comm->device, sizeof(sc_dev_status_t), &word));
  comm->status = word;
  memset(comm->status, 0, sizeof(*comm->status));
  comm->status->rank = -1;
  SC_CHECK(comm->ops->dev_alloc(comm->device, sizeof(uint64_t), &word)); /* zeroed */
  comm->dev_stop = word;
  SC_CHECK(comm->ops->host_alloc(comm->device, sizeof(sc_dev_window_t) * SC_MAX_WINDOWS, &word));
  comm->window_table = word;
  SC_CHECK(comm->ops->dev_alloc(comm->device, sizeof(sc_dev_window_t) * SC_MAX_WINDOWS, &word));
  comm->dev_window_table = word;
  SC_CHECK(sc_comm_fill_view(comm));
  /* Collective, so decided alike everywhere: also a rank alone on its host
   * takes part when other hosts have several ranks. */
  if (comm->view.max_local_size > 1)
    SC_CHECK(sc_p2p_create(&comm->view, &comm->p2p));
  if (comm->nhosts > 1) {
    SC_CHECK(sc_net_create(&comm->view, sc_comm_net_failed, comm, &comm->net));
    int *host_of = malloc(sizeof(int) * (size_t)comm->nranks);
    if (host_of == NULL)
      return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory for %d ranks", comm->nranks);
    for (int r = 0; r < comm->nranks; r++)
      host_of[r] = comm->peers[r].host;
    sc_result_t res = sc_coll_hosts_create(&comm->view, host_of, comm->nhosts, sc_comm_net_failed,
                                           comm, &comm->coll_hosts);
    free(host_of);
    SC_CHECK(res);
  }
  if (comm->nranks > 1 && comm->nhosts == 1)
    SC_CHECK(sc_coll_create(&comm->view, &comm->coll));
  return SYMCOMM_OK;
}
