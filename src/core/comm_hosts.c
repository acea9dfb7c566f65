/* Hosts and local ranks of a communicator, and the topology of each host. */
#include <stdio.h>
#include <stdlib.h>

#include "core/comm.h"
#include "util/log.h"

sc_result_t sc_comm_assign_hosts(struct symcomm_comm *comm) {
  int nhosts = 0;
  for (int r = 0; r < comm->nranks; r++) {
    sc_peer_t *p = &comm->peers[r];
    p->host = -1;
    p->local_rank = 0;
    /* Quadratic, but only at init and split, and over small rank counts. */
    for (int q = 0; q < r; q++) {
      if (comm->peers[q].host_hash == p->host_hash) {
        if (p->host < 0)
          p->host = comm->peers[q].host;
        p->local_rank++;
      }
    }
    if (p->host < 0)
      p->host = nhosts++;
  }
  comm->nhosts = nhosts;
  const sc_peer_t *me = &comm->peers[comm->rank];
  comm->host = me->host;
  comm->local_rank = me->local_rank;
  comm->local_size = 0;
  for (int r = 0; r < comm->nranks; r++)
    if (comm->peers[r].host == me->host)
      comm->local_size++;
  /* Every rank sees every host, so all of them refuse alike. Local ranks
   * count up from 0 on each host: one past the largest is the host's size. */
  for (int r = 0; r < comm->nranks; r++) {
    const sc_peer_t *p = &comm->peers[r];
    if (p->local_rank < SC_MAX_LOCAL_RANKS)
      continue;
    char sim[16] = "";
    if (p->sim_host >= 0)
      snprintf(sim, sizeof(sim), "/sim%d", p->sim_host);
    return SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_INIT,
                    "host %d (%s%s) has more than %d ranks of this communicator (rank %d is its "
                    "%dth); symcomm supports at most %d ranks per host, one per GPU",
                    p->host, p->hostname, sim, SC_MAX_LOCAL_RANKS, r, p->local_rank + 1,
                    SC_MAX_LOCAL_RANKS);
  }
  return SYMCOMM_OK;
}

sc_result_t sc_comm_build_host_topos(struct symcomm_comm *comm, sc_comm_link_fn links_of,
                                     void *ctx) {
  comm->host_topo = calloc((size_t)comm->nhosts, sizeof(*comm->host_topo));
  if (comm->host_topo == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_TOPO, "no memory for %d host topologies",
                    comm->nhosts);
  int *members = malloc(sizeof(int) * (size_t)comm->nranks);
  if (members == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_TOPO, "no memory for host membership");
  sc_result_t res = SYMCOMM_OK;
  for (int h = 0; h < comm->nhosts; h++) {
    int n = 0;
    for (int r = 0; r < comm->nranks; r++)
      if (comm->peers[r].host == h)
        members[n++] = r;
    sc_topo_t *topo = NULL;
    SC_CHECK_GOTO(sc_topo_alloc(n, "communicator", &topo), res, done);
    for (int a = 0; a < n; a++) {
      const sc_peer_t *pa = &comm->peers[members[a]];
      topo->busid[a] = pa->busid;
      topo->dev[a] = pa->dev;
      topo->rank[a] = members[a];
      uint8_t self;
      links_of(ctx, members[a], members[a], &self, &topo->nvswitch[a]);
      for (int b = 0; b < n; b++) {
        if (a == b)
          continue;
        links_of(ctx, members[a], members[b], &topo->link[a][b], &topo->nvlinks[a][b]);
      }
    }
    comm->host_topo[h] = topo;
  }
done:
  free(members);
  return res;
}
