/* Init, split and destroy under symcomm-run, checked on every rank:
 *   symcomm-run -n N [--hosts H] -- test_comm_basic H [iterations]
 * Each iteration makes a world communicator from the environment, checks what
 * it says of ranks, hosts and devices, splits it several ways (reversed keys,
 * NOCOLOR, by host, a split of a split) and destroys everything. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int env_int(const char *name, int fallback) {
  const char *v = getenv(name);
  return v != NULL && v[0] != '\0' ? atoi(v) : fallback;
}

/* The bus id of `peer` in comm, as a string. */
static void busid_of(symcomm_comm_t comm, int peer, char *buf) {
  TEST_OK(symcomm_comm_peer_busid(comm, peer, buf, 32));
}

/* Every rank of child must keep the device it had in parent. */
static void check_devices_kept(symcomm_comm_t parent, symcomm_comm_t child) {
  int n;
  TEST_OK(symcomm_comm_size(child, &n));
  for (int r = 0; r < n; r++) {
    int w;
    char a[32], b[32];
    TEST_OK(symcomm_comm_peer_world_rank(child, r, &w));
    busid_of(child, r, a);
    busid_of(parent, w, b); /* parent is the world communicator */
    TEST_ASSERT(strcmp(a, b) == 0, "world rank %d: busId %s in the split, %s in the world", w, a, b);
  }
}

static void check_world(symcomm_comm_t world, int hosts) {
  int rank, size, local, local_size, nhosts, host;
  TEST_OK(symcomm_comm_rank(world, &rank));
  TEST_OK(symcomm_comm_size(world, &size));
  TEST_OK(symcomm_comm_local_rank(world, &local));
  TEST_OK(symcomm_comm_local_size(world, &local_size));
  TEST_OK(symcomm_comm_host_count(world, &nhosts));
  TEST_OK(symcomm_comm_host_index(world, &host));
  TEST_ASSERT(rank == env_int("SYMCOMM_RANK", -1), "rank %d", rank);
  TEST_ASSERT(size == env_int("SYMCOMM_WORLD_SIZE", -1), "size %d", size);
  TEST_ASSERT(local == env_int("SYMCOMM_LOCAL_RANK", -1), "local rank %d", local);
  TEST_ASSERT(local_size == env_int("SYMCOMM_LOCAL_SIZE", -1), "local size %d", local_size);
  TEST_ASSERT(nhosts == hosts, "%d hosts, expected %d", nhosts, hosts);
  int sim = env_int("SYMCOMM_HOSTID", -1);
  if (sim >= 0)
    TEST_ASSERT(host == sim, "host index %d on simulated host %d", host, sim);
  /* Simulated devices: domain = host number << 8, bus = local rank + 1. Real
   * ones (CUDA): the GPU's own, lower case, one GPU per rank of the host. */
  char busid[32], expected[32];
  busid_of(world, rank, busid);
  const char *backend = "host";
  TEST_OK(symcomm_comm_device(world, &backend, NULL));
  if (strcmp(backend, "cuda") == 0) {
    unsigned dom, bus, dev, fn;
    char tail;
    TEST_ASSERT(sscanf(busid, "%4x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) == 4 &&
                    strlen(busid) == 12,
                "busId %s", busid);
    for (const char *c = busid; *c; c++)
      TEST_ASSERT(!(*c >= 'A' && *c <= 'F'), "busId %s is not lower case", busid);
    for (int peer = 0; peer < size && !test_device_shared(); peer++) {
      int peer_host;
      TEST_OK(symcomm_comm_peer_host(world, peer, &peer_host));
      busid_of(world, peer, expected);
      TEST_ASSERT(peer == rank || peer_host != host || strcmp(busid, expected) != 0,
                  "ranks %d and %d share GPU %s", rank, peer, busid);
    }
  } else {
    snprintf(expected, sizeof(expected), "%04x:%02x:00.0", sim >= 0 ? sim << 8 : 0, local + 1);
    TEST_ASSERT(strcmp(busid, expected) == 0, "busId %s, expected %s", busid, expected);
  }
  /* Host names are distinct per simulated host. */
  char name[128];
  TEST_OK(symcomm_comm_host_name(world, host, name, sizeof(name)));
  if (sim >= 0) {
    char suffix[16];
    snprintf(suffix, sizeof(suffix), "/sim%d", sim);
    TEST_ASSERT(test_contains(name, suffix), "host name %s", name);
  }
  /* The host's topology lists this host's ranks in local-rank order. */
  symcomm_topo_t topo;
  TEST_OK(symcomm_comm_host_topo(world, host, &topo));
  int ngpus, r;
  TEST_OK(symcomm_topo_gpu_count(topo, &ngpus));
  TEST_ASSERT(ngpus == local_size);
  TEST_OK(symcomm_topo_gpu_rank(topo, local, &r));
  TEST_ASSERT(r == rank);
  symcomm_topo_class_t cls;
  TEST_OK(symcomm_topo_class(topo, &cls));
  /* One device shared (SYMCOMM_SHARE_DEVICE=1) has no links to itself. */
  if (!test_device_shared() || local_size == 1)
    TEST_ASSERT(cls == SYMCOMM_TOPO_FULLY_CONNECTED, "class %s", symcomm_topo_class_string(cls));
  TEST_OK(symcomm_topo_free(topo));
}

static void check_splits(symcomm_comm_t world) {
  int rank, size, host, nhosts;
  TEST_OK(symcomm_comm_rank(world, &rank));
  TEST_OK(symcomm_comm_size(world, &size));
  TEST_OK(symcomm_comm_host_index(world, &host));
  TEST_OK(symcomm_comm_host_count(world, &nhosts));

  /* Even and odd ranks, each in reverse order (key = -rank). */
  symcomm_comm_t parity;
  TEST_OK(symcomm_comm_split(world, rank % 2, -rank, &parity));
  int prank, psize;
  TEST_OK(symcomm_comm_rank(parity, &prank));
  TEST_OK(symcomm_comm_size(parity, &psize));
  int members = (size + 1 - rank % 2) / 2;
  TEST_ASSERT(psize == members, "parity size %d, expected %d", psize, members);
  TEST_ASSERT(prank == (size - 1 - rank) / 2, "rank %d has parity rank %d", rank, prank);
  int previous = size;
  for (int r = 0; r < psize; r++) {
    int w;
    TEST_OK(symcomm_comm_peer_world_rank(parity, r, &w));
    TEST_ASSERT(w % 2 == rank % 2 && w < previous, "member %d is world rank %d", r, w);
    previous = w;
  }
  check_devices_kept(world, parity);

  /* Every third rank sits out. */
  symcomm_comm_t some = NULL;
  int color = rank % 3 == 0 ? SYMCOMM_SPLIT_NOCOLOR : 7;
  TEST_OK(symcomm_comm_split(world, color, 0, &some));
  if (color == SYMCOMM_SPLIT_NOCOLOR) {
    TEST_ASSERT(some == NULL, "NOCOLOR gave a communicator");
  } else {
    int ssize;
    TEST_OK(symcomm_comm_size(some, &ssize));
    TEST_ASSERT(ssize == size - (size + 2) / 3, "size %d", ssize);
  }

  /* One communicator per host: everyone in it is local. */
  symcomm_comm_t local;
  TEST_OK(symcomm_comm_split(world, host, rank, &local));
  int lsize, llocal_size, lhosts;
  TEST_OK(symcomm_comm_size(local, &lsize));
  TEST_OK(symcomm_comm_local_size(local, &llocal_size));
  TEST_OK(symcomm_comm_host_count(local, &lhosts));
  TEST_ASSERT(lsize == llocal_size && lhosts == 1, "size %d local %d hosts %d", lsize, llocal_size,
              lhosts);
  check_devices_kept(world, local);

  /* A split of a split outlives its parent. */
  symcomm_comm_t nested;
  TEST_OK(symcomm_comm_split(parity, prank / 2, prank, &nested));
  TEST_OK(symcomm_comm_destroy(parity));
  if (some != NULL) {
    TEST_OK(symcomm_comm_split(some, 0, 0, &parity)); /* still usable after a sibling's end */
    TEST_OK(symcomm_comm_destroy(parity));
  }
  int nrank;
  TEST_OK(symcomm_comm_rank(nested, &nrank));
  TEST_ASSERT(nrank == prank % 2, "nested rank %d", nrank);
  check_devices_kept(world, nested);
  TEST_OK(symcomm_comm_destroy(nested));
  TEST_OK(symcomm_comm_destroy(local));
  if (some != NULL)
    TEST_OK(symcomm_comm_destroy(some));

  /* Queries refuse what is not there, and say so on the communicator. */
  int x;
  TEST_EXPECT_RESULT(symcomm_comm_peer_host(world, size, &x), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(symcomm_last_error(world), "is not in [0,"), "%s",
              symcomm_last_error(world));
  TEST_EXPECT_RESULT(symcomm_comm_split(world, -5, 0, &local), SYMCOMM_ERR_INVALID_ARGUMENT);
  (void)nhosts;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_comm_basic HOSTS [ITERATIONS]\n");
    return 2;
  }
  int hosts = atoi(argv[1]);
  int iterations = argc > 2 ? atoi(argv[2]) : 1;
  for (int i = 0; i < iterations; i++) {
    symcomm_comm_t world;
    TEST_OK(symcomm_init_from_env(&world, NULL));
    check_world(world, hosts);
    check_splits(world);
    TEST_OK(symcomm_comm_destroy(world));
  }
  if (env_int("SYMCOMM_RANK", -1) == 0)
    printf("test_comm_basic: %d iteration(s) passed on %d ranks\n", iterations,
           env_int("SYMCOMM_WORLD_SIZE", -1));
  return 0;
}
