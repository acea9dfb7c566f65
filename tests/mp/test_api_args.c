/* Every public call refuses bad arguments with INVALID_ARGUMENT (or
 * INVALID_USAGE) and a sentence, before doing anything. One process, a
 * communicator of one rank. */
#include <string.h>

#include "test_util.h"

#define EXPECT_BAD(call, needle)                                                              \
  do {                                                                                        \
    symcomm_result_t r_ = (call);                                                             \
    TEST_ASSERT(r_ == SYMCOMM_ERR_INVALID_ARGUMENT, "%s gave %s", #call,                      \
                symcomm_result_string(r_));                                                   \
    TEST_ASSERT(test_contains(symcomm_last_error(NULL), needle), "%s: '%s' not in '%s'", #call, \
                needle, symcomm_last_error(NULL));                                            \
  } while (0)

int main(void) {
  /* Library calls. */
  int version = 0;
  TEST_OK(symcomm_get_version(&version));
  TEST_ASSERT(version == SYMCOMM_VERSION);
  EXPECT_BAD(symcomm_get_version(NULL), "version is NULL");
  TEST_ASSERT(strcmp(symcomm_result_string(SYMCOMM_ERR_TIMEOUT), "SYMCOMM_ERR_TIMEOUT") == 0);
  TEST_ASSERT(strcmp(symcomm_result_string(SYMCOMM_OK), "SYMCOMM_OK") == 0);
  TEST_ASSERT(symcomm_result_string((symcomm_result_t)99) != NULL);
  EXPECT_BAD(symcomm_get_unique_id(NULL), "id is NULL");

  /* Init and its config. */
  symcomm_unique_id_t id;
  TEST_OK(symcomm_get_unique_id(&id));
  symcomm_comm_t comm = NULL;
  EXPECT_BAD(symcomm_comm_init(NULL, 1, &id, 0, NULL), "comm is NULL");
  EXPECT_BAD(symcomm_comm_init(&comm, 1, NULL, 0, NULL), "id is NULL");
  EXPECT_BAD(symcomm_comm_init(&comm, 0, &id, 0, NULL), "nranks = 0");
  EXPECT_BAD(symcomm_comm_init(&comm, -3, &id, 0, NULL), "nranks = -3");
  EXPECT_BAD(symcomm_comm_init(&comm, 2, &id, 2, NULL), "rank 2 is not in [0, 2)");
  EXPECT_BAD(symcomm_comm_init(&comm, 2, &id, -1, NULL), "rank -1");
  symcomm_config_t config = SYMCOMM_CONFIG_INITIALIZER;
  config.size = 4;
  EXPECT_BAD(symcomm_comm_init(&comm, 1, &id, 0, &config), "SYMCOMM_CONFIG_INITIALIZER");
  config = (symcomm_config_t)SYMCOMM_CONFIG_INITIALIZER;
  config.timeout_ms = -5;
  EXPECT_BAD(symcomm_comm_init(&comm, 1, &id, 0, &config), "timeout_ms = -5");
  config = (symcomm_config_t)SYMCOMM_CONFIG_INITIALIZER;
  config.device = 1000;
  EXPECT_BAD(symcomm_comm_init(&comm, 1, &id, 0, &config), "config.device = 1000");
  config = (symcomm_config_t)SYMCOMM_CONFIG_INITIALIZER;
  config.version = SYMCOMM_VERSION + 10000;
  TEST_EXPECT_RESULT(symcomm_comm_init(&comm, 1, &id, 0, &config), SYMCOMM_ERR_UNSUPPORTED);
  TEST_ASSERT(comm == NULL, "an output was set by a failed call");

  config = (symcomm_config_t)SYMCOMM_CONFIG_INITIALIZER;
  config.name = "args";
  config.timeout_ms = 20000;
  TEST_OK(symcomm_comm_init(&comm, 1, &id, 0, &config));

  /* Queries. */
  int x;
  EXPECT_BAD(symcomm_comm_rank(NULL, &x), "communicator is NULL");
  EXPECT_BAD(symcomm_comm_rank(comm, NULL), "output pointer is NULL");
  TEST_ASSERT(test_contains(symcomm_last_error(comm), "output pointer is NULL"),
              "the comm's sentence: %s", symcomm_last_error(comm));
  EXPECT_BAD(symcomm_comm_size(comm, NULL), "NULL");
  EXPECT_BAD(symcomm_comm_local_rank(comm, NULL), "NULL");
  EXPECT_BAD(symcomm_comm_local_size(comm, NULL), "NULL");
  EXPECT_BAD(symcomm_comm_host_count(comm, NULL), "NULL");
  EXPECT_BAD(symcomm_comm_host_index(comm, NULL), "NULL");
  EXPECT_BAD(symcomm_comm_peer_host(comm, 1, &x), "rank 1 is not in [0, 1)");
  EXPECT_BAD(symcomm_comm_peer_world_rank(comm, -1, &x), "rank -1");
  char busid[32];
  EXPECT_BAD(symcomm_comm_peer_busid(comm, 0, busid, 5), "cannot hold a bus id");
  EXPECT_BAD(symcomm_comm_host_name(comm, 3, busid, sizeof(busid)), "host 3 is not in [0, 1)");
  TEST_OK(symcomm_comm_peer_busid(comm, 0, busid, sizeof(busid)));
  TEST_ASSERT(strlen(busid) == 12, "busId '%s'", busid);

  /* Split. */
  symcomm_comm_t sub;
  EXPECT_BAD(symcomm_comm_split(comm, 0, 0, NULL), "newcomm is NULL");
  EXPECT_BAD(symcomm_comm_split(comm, -7, 0, &sub), "color -7 is negative");
  EXPECT_BAD(symcomm_comm_split(NULL, 0, 0, &sub), "communicator is NULL");

  /* Topology. */
  symcomm_topo_t topo;
  EXPECT_BAD(symcomm_topo_load(NULL, &topo), "path is NULL");
  TEST_ASSERT(symcomm_topo_load("/nonexistent/topo.xml", &topo) != SYMCOMM_OK);
  TEST_ASSERT(test_contains(symcomm_last_error(NULL), "/nonexistent/topo.xml"), "%s",
              symcomm_last_error(NULL));
  EXPECT_BAD(symcomm_comm_host_topo(comm, 1, &topo), "host 1 is not in [0, 1)");
  TEST_OK(symcomm_comm_host_topo(comm, 0, &topo));
  symcomm_link_t link;
  EXPECT_BAD(symcomm_topo_link(topo, 0, 1, &link, NULL), "GPU 1 is not in [0, 1)");
  EXPECT_BAD(symcomm_topo_link(topo, 0, 0, NULL, NULL), "NULL");
  EXPECT_BAD(symcomm_topo_gpu_busid(topo, 0, busid, 4), "cannot hold a bus id");
  EXPECT_BAD(symcomm_topo_gpu_count(NULL, &x), "NULL");
  TEST_OK(symcomm_topo_link(topo, 0, 0, &link, NULL));
  TEST_ASSERT(link == SYMCOMM_LINK_SELF);
  TEST_OK(symcomm_topo_free(topo));
  TEST_ASSERT(strcmp(symcomm_topo_class_string(SYMCOMM_TOPO_HYBRID_CUBE_MESH), "HYBRID_CUBE_MESH") == 0);
  TEST_ASSERT(strcmp(symcomm_link_string(SYMCOMM_LINK_PXB), "PXB") == 0);

  /* Abort, then everything but destroy says ABORTED. */
  TEST_OK(symcomm_comm_abort(comm));
  TEST_OK(symcomm_comm_abort(comm));
  TEST_EXPECT_RESULT(symcomm_comm_split(comm, 0, 0, &sub), SYMCOMM_ERR_ABORTED);
  TEST_OK(symcomm_comm_destroy(comm));
  EXPECT_BAD(symcomm_comm_destroy(NULL), "communicator is NULL");
  printf("test_api_args: all passed\n");
  return 0;
}
