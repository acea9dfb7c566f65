/* symcomm_comm_split: new communicators from the colors and keys of a parent's
 * ranks. Each new communicator gets its own root, served by its rank 0, so it
 * outlives the parent. Ranks keep their devices: the new communicator's peers
 * and host topologies are taken from the parent's by rank, and with them every
 * rank's busId (seed 003: never re-derive a device from a new rank number). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/split_order.h"
#include "util/log.h"
#include "util/param.h"

/* Links between two ranks of the child, read from the parent's host topology. */
typedef struct sc_split_links {
  const struct symcomm_comm *parent;
  const int *parent_rank; /* child rank -> parent rank */
} sc_split_links_t;

static void sc_split_link_lookup(void *ctx, int a, int b, uint8_t *link, uint8_t *nvlinks) {
  const sc_split_links_t *s = ctx;
  const sc_peer_t *pa = &s->parent->peers[s->parent_rank[a]];
  const sc_peer_t *pb = &s->parent->peers[s->parent_rank[b]];
  const sc_topo_t *topo = s->parent->host_topo[pa->host];
  *link = topo->link[pa->local_rank][pb->local_rank];
  *nvlinks = a == b ? topo->nvswitch[pa->local_rank] : topo->nvlinks[pa->local_rank][pb->local_rank];
}

/* The new communicator's leader starts its root and publishes it through the
 * parent; every rank learns its own color's root. */
static sc_result_t sc_split_publish_root(struct symcomm_comm *parent, bool leader,
                                         sc_root_addr_t *my_root, sc_store_server_t **server,
                                         symcomm_unique_id_t *all_roots) {
  symcomm_unique_id_t mine;
  memset(&mine, 0, sizeof(mine));
  sc_result_t leader_res = SYMCOMM_OK;
  if (leader) {
    sc_sockaddr_t near;
    sc_secret_t secret;
    bool use_near = !sc_param_is_set(SC_PARAM_SOCKET_IFNAME);
    leader_res = sc_secret_random(&secret);
    if (leader_res == SYMCOMM_OK && use_near)
      leader_res = sc_bootstrap_local_address(&parent->boot, &near);
    if (leader_res == SYMCOMM_OK)
      leader_res = sc_root_start(NULL, use_near ? &near : NULL, &secret,
                                 parent->options.timeout_ms, my_root, server);
    if (leader_res == SYMCOMM_OK)
      sc_root_encode(my_root, &mine);
    /* On failure the zeroed id tells the other members why they get no root. */
  }
  SC_CHECK(sc_bootstrap_allgather(&parent->boot, "split:roots", &mine, sizeof(mine), all_roots));
  return leader_res;
}

static sc_result_t sc_split_build(struct symcomm_comm *parent, const sc_split_member_t *members,
                                  int n, int new_rank, const sc_root_addr_t *root,
                                  sc_store_server_t *server, struct symcomm_comm **out) {
  struct symcomm_comm *child = NULL;
  int *parent_rank = malloc(sizeof(int) * (size_t)n);
  if (parent_rank == NULL) {
    if (server != NULL)
      sc_store_server_release(server);
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory for a split of %d ranks", n);
  }
  sc_result_t res = sc_comm_alloc(new_rank, n, &parent->options, &child);
  if (res != SYMCOMM_OK) {
    free(parent_rank);
    if (server != NULL)
      sc_store_server_release(server);
    return res;
  }
  /* Its ranks share the host's cores with the parent's other ranks. */
  if (parent->local_size > child->options.host_ranks_hint)
    child->options.host_ranks_hint = parent->local_size;
  child->root = server;
  child->session = root->session;
  child->secret = root->secret;
  for (int i = 0; i < n; i++) {
    parent_rank[i] = members[i].parent_rank;
    child->peers[i] = parent->peers[members[i].parent_rank];
  }
  SC_CHECK_GOTO(sc_comm_assign_hosts(child), res, fail);
  sc_split_links_t links = {.parent = parent, .parent_rank = parent_rank};
  SC_CHECK_GOTO(sc_comm_build_host_topos(child, sc_split_link_lookup, &links), res, fail);
  /* Until the split returns, aborting the parent is what interrupts it. */
  SC_CHECK_GOTO(sc_bootstrap_connect(&child->boot, root, new_rank, n, child->options.timeout_ms,
                                     parent->abort_wake.fd),
                res, fail);
  SC_CHECK_GOTO(sc_comm_watch_open(child, root, parent->abort_wake.fd), res, fail);
  child->root_rank = 0; /* the new rank 0 started the root */
  SC_CHECK_GOTO(sc_comm_watch_start(child), res, fail);
  /* Every member has joined before anyone uses the new communicator. */
  SC_CHECK_GOTO(sc_bootstrap_barrier(&child->boot, "split:joined"), res, fail);
  SC_CHECK_GOTO(sc_comm_attach_device(child), res, fail);
  sc_comm_watch_attach(child);
  SC_CHECK_GOTO(sc_comm_check_alive(parent), res, fail);
  sc_bootstrap_set_abort_fd(&child->boot, child->abort_wake.fd);
  free(parent_rank);
  *out = child;
  return SYMCOMM_OK;
fail:
  free(parent_rank);
  sc_comm_free_failed(child);
  return res;
}

static sc_result_t sc_comm_split(struct symcomm_comm *parent, int color, int key,
                                 symcomm_comm_t *newcomm) {
  SC_CHECK(sc_comm_check_alive(parent));
  int mine[2] = {color, key};
  int *all = malloc(sizeof(int) * 4 * (size_t)parent->nranks); /* [nranks][2], then colors, keys */
  sc_split_member_t *members = malloc(sizeof(*members) * (size_t)parent->nranks);
  symcomm_unique_id_t *roots = malloc(sizeof(*roots) * (size_t)parent->nranks);
  sc_store_server_t *server = NULL;
  sc_result_t res = SYMCOMM_OK;
  if (all == NULL || members == NULL || roots == NULL) {
    res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory to split %d ranks", parent->nranks);
    goto done;
  }
  SC_CHECK_GOTO(sc_bootstrap_allgather(&parent->boot, "split:colors", mine, sizeof(mine), all),
                res, done);
  int *colors = all + 2 * parent->nranks, *keys = all + 3 * parent->nranks;
  for (int r = 0; r < parent->nranks; r++) {
    colors[r] = all[2 * r];
    keys[r] = all[2 * r + 1];
  }
  int n = color == SYMCOMM_SPLIT_NOCOLOR ? 0
                                         : sc_split_order(colors, keys, parent->nranks, color, members);
  int new_rank = -1;
  for (int i = 0; i < n; i++)
    if (members[i].parent_rank == parent->rank)
      new_rank = i;
  sc_root_addr_t root;
  SC_CHECK_GOTO(sc_split_publish_root(parent, new_rank == 0, &root, &server, roots), res, done);
  if (color == SYMCOMM_SPLIT_NOCOLOR) {
    *newcomm = NULL;
    goto done;
  }
  int leader = members[0].parent_rank;
  static const symcomm_unique_id_t no_root;
  if (memcmp(&roots[leader], &no_root, sizeof(no_root)) == 0) {
    res = SC_RAISE(SYMCOMM_ERR_REMOTE, SC_INIT,
                   "rank %d, rank 0 of the new communicator of color %d, could not start its root",
                   leader, color);
    goto done;
  }
  SC_CHECK_GOTO(sc_root_decode(&roots[leader], &root), res, done);
  struct symcomm_comm *child = NULL;
  res = sc_split_build(parent, members, n, new_rank, &root, server, &child);
  server = NULL; /* sc_split_build took it */
  if (res == SYMCOMM_OK) {
    snprintf(child->options.name, sizeof(child->options.name), "%s%ssplit %d", parent->options.name,
             parent->options.name[0] ? "/" : "", color);
    sc_comm_log_complete(child, "split");
    *newcomm = child;
  }
done:
  if (server != NULL)
    sc_store_server_release(server);
  free(all);
  free(members);
  free(roots);
  return res;
}

symcomm_result_t symcomm_comm_split(symcomm_comm_t comm, int color, int key,
                                    symcomm_comm_t *newcomm) {
  sc_error_clear();
  SC_CHECK(sc_comm_check(comm));
  sc_result_t res = SYMCOMM_OK;
  if (newcomm == NULL)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "symcomm_comm_split: newcomm is NULL");
  else if (color < 0 && color != SYMCOMM_SPLIT_NOCOLOR)
    res = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                   "symcomm_comm_split: color %d is negative (only SYMCOMM_SPLIT_NOCOLOR may be)",
                   color);
  else
    res = sc_comm_split(comm, color, key, newcomm);
  return sc_comm_finish_during(comm, res, "split");
}
