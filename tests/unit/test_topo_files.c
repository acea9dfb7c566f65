/* Every topology file shipped in topo/: it loads, classifies as its README
 * says, and a few pairs have the link type and NVLink count it describes. */
#include <dirent.h>

#include "topo_test_util.h"

static void test_nvswitch_8gpu(void) {
  sc_topo_t *t = topo_test_load("topo/nvswitch_8gpu.xml");
  TEST_ASSERT(t->ngpus == 8);
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_FULLY_CONNECTED);
  for (int a = 0; a < 8; a++) {
    TEST_ASSERT(t->dev[a] == a && t->rank[a] == -1);
    for (int b = a + 1; b < 8; b++)
      TOPO_LINK(t, a, b, SYMCOMM_LINK_NVLINK, 18);
  }
  TOPO_BUSID(t, 0, "0000:18:00.0");
  TOPO_BUSID(t, 7, "0000:db:00.0");
  char text[16];
  sc_topo_link_text(t, 2, 5, text, sizeof(text));
  TEST_ASSERT(strcmp(text, "NV18") == 0, "'%s'", text);
  sc_topo_free(t);
}

static void test_hybrid_cube_mesh_8gpu(void) {
  sc_topo_t *t = topo_test_load("topo/hybrid_cube_mesh_8gpu.xml");
  TEST_ASSERT(t->ngpus == 8);
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_HYBRID_CUBE_MESH);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 2);
  TOPO_LINK(t, 0, 2, SYMCOMM_LINK_NVLINK, 1);
  TOPO_LINK(t, 0, 3, SYMCOMM_LINK_NVLINK, 1);
  TOPO_LINK(t, 0, 4, SYMCOMM_LINK_NVLINK, 2); /* across the quads */
  TOPO_LINK(t, 3, 7, SYMCOMM_LINK_NVLINK, 1);
  TOPO_LINK(t, 5, 7, SYMCOMM_LINK_NVLINK, 2);
  TOPO_LINK(t, 0, 5, SYMCOMM_LINK_SYS, 0); /* no NVLink, other CPU */
  TOPO_LINK(t, 2, 7, SYMCOMM_LINK_SYS, 0);
  /* Every GPU has six NVLinks, to exactly four GPUs. */
  for (int a = 0; a < 8; a++) {
    int links = 0, peers = 0;
    for (int b = 0; b < 8; b++) {
      if (t->link[a][b] == SYMCOMM_LINK_NVLINK) {
        links += t->nvlinks[a][b];
        peers++;
      }
    }
    TEST_ASSERT(links == 6 && peers == 4, "GPU %d: %d links to %d GPUs", a, links, peers);
  }
  TOPO_BUSID(t, 4, "0000:85:00.0");
  sc_topo_free(t);
}

static void test_pcie_2gpu(void) {
  sc_topo_t *t = topo_test_load("topo/pcie_2gpu.xml");
  TEST_ASSERT(t->ngpus == 2);
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_NONE);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_PXB, 0);
  char text[16];
  sc_topo_link_text(t, 1, 0, text, sizeof(text));
  TEST_ASSERT(strcmp(text, "PXB") == 0, "'%s'", text);
  sc_topo_free(t);
}

static void test_partial_4gpu(void) {
  sc_topo_t *t = topo_test_load("topo/partial_4gpu.xml");
  TEST_ASSERT(t->ngpus == 4);
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_PARTIAL);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 4); /* listed by GPU 0 only */
  TOPO_LINK(t, 2, 3, SYMCOMM_LINK_NVLINK, 4);
  TOPO_LINK(t, 0, 2, SYMCOMM_LINK_SYS, 0);
  TOPO_LINK(t, 1, 3, SYMCOMM_LINK_SYS, 0);
  sc_topo_free(t);
}

/* Seed 003: the base file, one file per simulated host, host 1 in PCI domain
 * 0100, and the same bus ids as the built-in simulated host. */
static void test_sim2x8(void) {
  sc_topo_t *base = topo_test_load("topo/sim2x8.xml");
  sc_topo_t *node0 = topo_test_load("topo/sim2x8_node0.xml");
  sc_topo_t *node1 = topo_test_load("topo/sim2x8_node1.xml");
  sc_topo_t *builtin = NULL;
  TEST_OK(sc_topo_builtin_switch(8, 0, &builtin));
  const sc_topo_t *all[] = {base, node0, node1};
  for (int k = 0; k < 3; k++) {
    const sc_topo_t *t = all[k];
    TEST_ASSERT(t->ngpus == 8);
    TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_FULLY_CONNECTED);
    TOPO_LINK(t, 0, 7, SYMCOMM_LINK_NVLINK, 18);
    TOPO_LINK(t, 3, 4, SYMCOMM_LINK_NVLINK, 18);
    for (int g = 0; g < 8; g++) {
      TEST_ASSERT(t->dev[g] == g);
      TEST_ASSERT(sc_busid_domain(t->busid[g]) == (k == 2 ? 0x100 : 0), "file %d GPU %d", k, g);
      TEST_ASSERT(sc_busid_with_domain(t->busid[g], 0) == builtin->busid[g], "file %d GPU %d", k,
                  g);
    }
  }
  TOPO_BUSID(node1, 0, "0100:01:00.0");
  TOPO_BUSID(node1, 7, "0100:08:00.0");
  TEST_ASSERT(node1->busid[0] == 0x10001000);
  /* Moving host 0's devices to host 1 gives host 1's file, and again is a no-op. */
  sc_topo_set_host_domain(node0, 1);
  for (int g = 0; g < 8; g++)
    TEST_ASSERT(node0->busid[g] == node1->busid[g]);
  sc_topo_set_host_domain(node1, 1);
  TEST_ASSERT(node1->busid[0] == 0x10001000);
  sc_topo_free(builtin);
  sc_topo_free(node1);
  sc_topo_free(node0);
  sc_topo_free(base);
}

/* Any file in topo/, including ones added later, must load, and README.md
 * must say what it models. */
static void test_every_file(void) {
  char dir_path[1024], readme_path[1024];
  topo_test_path("topo", dir_path, sizeof(dir_path));
  topo_test_path("topo/README.md", readme_path, sizeof(readme_path));
  FILE *f = fopen(readme_path, "r");
  TEST_ASSERT(f != NULL, "no %s", readme_path);
  static char readme[64 * 1024];
  size_t n = fread(readme, 1, sizeof(readme) - 1, f);
  readme[n] = '\0';
  fclose(f);
  DIR *dir = opendir(dir_path);
  TEST_ASSERT(dir != NULL, "no %s", dir_path);
  int files = 0;
  for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".xml") != 0)
      continue;
    char relative[512];
    snprintf(relative, sizeof(relative), "topo/%s", e->d_name);
    sc_topo_t *t = topo_test_load(relative);
    TEST_ASSERT(t->ngpus >= 1);
    sc_topo_free(t);
    TEST_ASSERT(test_contains(readme, e->d_name), "topo/README.md does not mention %s", e->d_name);
    files++;
  }
  closedir(dir);
  TEST_ASSERT(files >= 7, "only %d files in topo/", files);
}

int main(void) {
  test_nvswitch_8gpu();
  test_hybrid_cube_mesh_8gpu();
  test_pcie_2gpu();
  test_partial_4gpu();
  test_sim2x8();
  test_every_file();
  printf("test_topo_files: OK\n");
  return 0;
}
