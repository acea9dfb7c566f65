/* Init's exchange: every rank says which host it is on, which device it uses
 * and how that device reaches the devices of the other ranks on its host
 * (seeds 002 and 003: hostHash + busId all-gather, then links by busId). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/comm.h"
#include "topo/host_id.h"
#include "topo/local_topo.h"
#include "util/log.h"

typedef struct sc_host_report {
  uint64_t host_hash;
  int32_t sim_host;
  int32_t pid;
  int32_t serves_root; /* this process serves the job's root */
  int32_t reserved;
  char hostname[SC_HOSTNAME_BYTES];
} sc_host_report_t;

typedef struct sc_device_report {
  int64_t busid;
  int32_t dev;
  int32_t share_device; /* SYMCOMM_SHARE_DEVICE: every rank must say the same */
} sc_device_report_t;

/* One row of links per rank, towards the ranks of its host in local-rank order. */
typedef struct sc_link_cell {
  uint8_t link;
  uint8_t nvlinks;
} sc_link_cell_t;

typedef struct sc_link_rows {
  const struct symcomm_comm *comm;
  const sc_link_cell_t *cells; /* [nranks][row_len] */
  int row_len;
} sc_link_rows_t;

static void sc_link_rows_lookup(void *ctx, int a, int b, uint8_t *link, uint8_t *nvlinks) {
  const sc_link_rows_t *rows = ctx;
  const sc_link_cell_t *cell =
      &rows->cells[(size_t)a * (size_t)rows->row_len + (size_t)rows->comm->peers[b].local_rank];
  *link = cell->link;
  *nvlinks = cell->nvlinks;
}

static sc_result_t sc_exchange_hosts(struct symcomm_comm *comm) {
  sc_host_identity_t id;
  SC_CHECK(sc_host_identity_get(&id));
  sc_host_report_t mine;
  memset(&mine, 0, sizeof(mine));
  mine.host_hash = id.hash;
  mine.sim_host = id.sim_host;
  mine.pid = (int32_t)getpid();
  mine.serves_root = comm->root_rank == comm->rank || sc_store_server_serves(comm->session);
  snprintf(mine.hostname, sizeof(mine.hostname), "%s", id.hostname);
  sc_host_report_t *all = malloc(sizeof(*all) * (size_t)comm->nranks);
  if (all == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory for %d host reports", comm->nranks);
  sc_result_t res = sc_bootstrap_allgather(&comm->boot, "init:hosts", &mine, sizeof(mine), all);
  if (res == SYMCOMM_OK) {
    /* Whose process serves the root: its end is that rank's. */
    comm->root_rank = -1;
    for (int r = comm->nranks - 1; r >= 0; r--)
      if (all[r].serves_root)
        comm->root_rank = r;
    for (int r = 0; r < comm->nranks; r++) {
      sc_peer_t *p = &comm->peers[r];
      p->host_hash = all[r].host_hash;
      p->sim_host = all[r].sim_host;
      p->pid = all[r].pid;
      p->world_rank = r;
      memcpy(p->hostname, all[r].hostname, sizeof(p->hostname));
      p->hostname[sizeof(p->hostname) - 1] = '\0';
    }
    res = sc_comm_assign_hosts(comm);
  }
  free(all);
  return res;
}

/* This rank's device in its host's topology: a real device (CUDA) by its
 * PCI bus id, found in the topology when it is there; a simulated one by its
 * index. busid: the real bus id, or -1. */
static sc_result_t sc_choose_device(struct symcomm_comm *comm, sc_topo_t **topo_out, int *index,
                                    int64_t *busid) {
  int device = sc_comm_device_index(comm);
  char real[32];
  SC_CHECK(comm->ops->device_busid(comm->device, real, sizeof(real)));
  *busid = -1;
  if (real[0] != '\0')
    SC_CHECK(sc_busid_parse(real, busid));
  int min_gpus = comm->local_size > device + 1 ? comm->local_size : device + 1;
  sc_topo_t *topo = NULL;
  SC_CHECK(sc_topo_load_local(comm->peers[comm->rank].sim_host, min_gpus, &topo));
  int i = *busid >= 0 ? sc_topo_find(topo, *busid) : -1;
  if (i < 0)
    i = sc_topo_find_dev(topo, device);
  if (i < 0) {
    sc_result_t res =
        SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_TOPO,
                 "rank %d wants device %d (%s), but its host's topology (%s) has only %d GPUs",
                 comm->rank, device, comm->options.device >= 0 ? "chosen" : "its local rank",
                 topo->source, topo->ngpus);
    sc_topo_free(topo);
    return res;
  }
  *topo_out = topo;
  *index = i;
  return SYMCOMM_OK;
}

static sc_result_t sc_exchange_devices(struct symcomm_comm *comm, const sc_topo_t *topo, int me,
                                       int64_t own_busid) {
  /* A real device's own bus id, and the index this process opened it by. */
  sc_device_report_t mine = {.busid = own_busid >= 0 ? own_busid : topo->busid[me],
                             .dev = sc_comm_device_index(comm),
                             .share_device = comm->options.share_device ? 1 : 0};
  sc_device_report_t *all = malloc(sizeof(*all) * (size_t)comm->nranks);
  if (all == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory for device reports");
  sc_result_t res = sc_bootstrap_allgather(&comm->boot, "init:devices", &mine, sizeof(mine), all);
  for (int r = 0; res == SYMCOMM_OK && r < comm->nranks; r++) {
    comm->peers[r].busid = all[r].busid;
    comm->peers[r].dev = all[r].dev;
  }
  /* Every rank sees the same reports: all refuse alike, none hangs. */
  for (int r = 1; res == SYMCOMM_OK && r < comm->nranks; r++)
    if (all[r].share_device != all[0].share_device)
      res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_INIT,
                     "ranks disagree on SYMCOMM_SHARE_DEVICE: rank 0 has %d, rank %d has %d; "
                     "set it alike for the whole job", all[0].share_device, r, all[r].share_device);
  /* Seed 002: two ranks of one host on one device is a launch mistake. */
  bool warned = false;
  for (int r = 0; res == SYMCOMM_OK && r < comm->nranks; r++) {
    for (int q = 0; q < r; q++) {
      const sc_peer_t *a = &comm->peers[q], *b = &comm->peers[r];
      if (a->host == b->host && a->busid == b->busid) {
        char busid[16];
        sc_busid_format(a->busid, busid, sizeof(busid));
        if (comm->options.share_device) {
          if (comm->rank == 0 && !warned)
            SC_WARN(SC_TOPO, "ranks %d and %d on host %s share device %d (%s), and maybe others: "
                    "SYMCOMM_SHARE_DEVICE=1, for tests only; their kernels take turns on it", q, r,
                    a->hostname, a->dev, busid);
          warned = true;
          continue;
        }
        res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_TOPO,
                       "ranks %d and %d on host %s both use device %d (%s): give each rank of a "
                       "host its own device (SYMCOMM_DEVICE, config.device, or leave both unset)",
                       q, r, a->hostname, a->dev, busid);
        break;
      }
    }
  }
  free(all);
  return res;
}

static sc_result_t sc_exchange_links(struct symcomm_comm *comm, const sc_topo_t *topo, int me) {
  int row_len = 1;
  for (int r = 0; r < comm->nranks; r++)
    if (comm->peers[r].local_rank + 1 > row_len)
      row_len = comm->peers[r].local_rank + 1;
  size_t cells = (size_t)row_len * (size_t)(unsigned)comm->nranks;
  sc_link_cell_t *mine = calloc((size_t)row_len, sizeof(*mine));
  sc_link_cell_t *all = calloc(cells, sizeof(*all));
  sc_result_t res = SYMCOMM_OK;
  if (mine == NULL || all == NULL) {
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory for link rows");
    goto done;
  }
  for (int r = 0; r < comm->nranks; r++) {
    const sc_peer_t *p = &comm->peers[r];
    if (p->host != comm->host)
      continue;
    int j = sc_topo_find(topo, p->busid);
    sc_link_cell_t *cell = &mine[p->local_rank];
    if (j < 0) {
      char busid[16];
      sc_busid_format(p->busid, busid, sizeof(busid));
      SC_WARN(SC_TOPO, "rank %d's device %s is not in this host's topology (%s); assuming SYS",
              r, busid, topo->source);
      cell->link = SYMCOMM_LINK_SYS;
      continue;
    }
    cell->link = topo->link[me][j];
    /* The cell of the rank itself carries its GPU's NVSwitch links. */
    cell->nvlinks = j == me ? topo->nvswitch[me] : topo->nvlinks[me][j];
  }
  SC_CHECK_GOTO(sc_bootstrap_allgather(&comm->boot, "init:links", mine,
                                       sizeof(*mine) * (size_t)row_len, all),
                res, done);
  sc_link_rows_t rows = {.comm = comm, .cells = all, .row_len = row_len};
  res = sc_comm_build_host_topos(comm, sc_link_rows_lookup, &rows);
done:
  free(mine);
  free(all);
  return res;
}

sc_result_t sc_comm_exchange_identity(struct symcomm_comm *comm) {
  SC_CHECK(sc_exchange_hosts(comm));
  SC_CHECK(sc_comm_open_device(comm, -1));
  sc_topo_t *topo = NULL;
  int me = -1;
  int64_t busid = -1;
  SC_CHECK(sc_choose_device(comm, &topo, &me, &busid));
  sc_result_t res;
  SC_CHECK_GOTO(sc_exchange_devices(comm, topo, me, busid), res, done);
  SC_CHECK_GOTO(sc_exchange_links(comm, topo, me), res, done);
done:
  sc_topo_free(topo);
  return res;
}
