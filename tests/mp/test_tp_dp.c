/* Seed 003's scenario, checked: hosts x local ranks, TP = split by host
 * (key = local rank), DP = split by local rank (key = host).
 *   symcomm-run -n 16 --hosts 2 -- test_tp_dp
 * Optionally with SYMCOMM_TOPO_FILE: every host's topology class is checked
 * against EXPECT_CLASS when that variable is set. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static void check_members(symcomm_comm_t comm, const char *what, int n, int first, int stride) {
  int size;
  TEST_OK(symcomm_comm_size(comm, &size));
  TEST_ASSERT(size == n, "%s has %d ranks, expected %d", what, size, n);
  for (int r = 0; r < n; r++) {
    int w;
    TEST_OK(symcomm_comm_peer_world_rank(comm, r, &w));
    TEST_ASSERT(w == first + r * stride, "%s rank %d is world rank %d, expected %d", what, r, w,
                first + r * stride);
  }
}

static void check_class(symcomm_comm_t comm, int host) {
  const char *expect = getenv("EXPECT_CLASS");
  if (expect == NULL)
    return;
  symcomm_topo_t topo;
  symcomm_topo_class_t cls;
  TEST_OK(symcomm_comm_host_topo(comm, host, &topo));
  TEST_OK(symcomm_topo_class(topo, &cls));
  TEST_ASSERT(strcmp(symcomm_topo_class_string(cls), expect) == 0, "host %d is %s, expected %s",
              host, symcomm_topo_class_string(cls), expect);
  TEST_OK(symcomm_topo_free(topo));
}

int main(void) {
  symcomm_comm_t world, tp, dp;
  TEST_OK(symcomm_init_from_env(&world, NULL));
  int rank, size, host, nhosts, local, local_size;
  TEST_OK(symcomm_comm_rank(world, &rank));
  TEST_OK(symcomm_comm_size(world, &size));
  TEST_OK(symcomm_comm_host_index(world, &host));
  TEST_OK(symcomm_comm_host_count(world, &nhosts));
  TEST_OK(symcomm_comm_local_rank(world, &local));
  TEST_OK(symcomm_comm_local_size(world, &local_size));
  TEST_ASSERT(local_size * nhosts == size, "%d hosts of %d ranks for %d ranks", nhosts, local_size,
              size);
  for (int h = 0; h < nhosts; h++)
    check_class(world, h);

  TEST_OK(symcomm_comm_split(world, host, local, &tp));
  TEST_OK(symcomm_comm_split(world, local, host, &dp));

  /* TP: this host's ranks, in local order, all on one host. */
  check_members(tp, "TP", local_size, host * local_size, 1);
  int tp_hosts, tp_local_size;
  TEST_OK(symcomm_comm_host_count(tp, &tp_hosts));
  TEST_OK(symcomm_comm_local_size(tp, &tp_local_size));
  TEST_ASSERT(tp_hosts == 1 && tp_local_size == local_size);
  check_class(tp, 0);

  /* DP: the ranks of equal local rank, one per host, in host order; each
   * keeps its own host's device (busIds differ in their PCI domain). */
  check_members(dp, "DP", nhosts, local, local_size);
  int dp_hosts, dp_local_size, dp_host;
  TEST_OK(symcomm_comm_host_count(dp, &dp_hosts));
  TEST_OK(symcomm_comm_local_size(dp, &dp_local_size));
  TEST_OK(symcomm_comm_host_index(dp, &dp_host));
  TEST_ASSERT(dp_hosts == nhosts && dp_local_size == 1 && dp_host == host);
  for (int r = 0; r < nhosts; r++) {
    char in_dp[32], in_world[32];
    TEST_OK(symcomm_comm_peer_busid(dp, r, in_dp, sizeof(in_dp)));
    TEST_OK(symcomm_comm_peer_busid(world, local + r * local_size, in_world, sizeof(in_world)));
    TEST_ASSERT(strcmp(in_dp, in_world) == 0, "DP rank %d: %s vs %s", r, in_dp, in_world);
    for (int q = 0; q < r && !test_device_shared(); q++) { /* shared on purpose */
      char other[32];
      TEST_OK(symcomm_comm_peer_busid(dp, q, other, sizeof(other)));
      TEST_ASSERT(strcmp(other, in_dp) != 0, "DP ranks %d and %d share busId %s", q, r, in_dp);
    }
  }

  TEST_OK(symcomm_comm_destroy(dp));
  TEST_OK(symcomm_comm_destroy(tp));
  TEST_OK(symcomm_comm_destroy(world));
  if (rank == 0)
    printf("test_tp_dp: %d hosts x %d ranks: TP and DP groups correct\n", nhosts, local_size);
  return 0;
}
