/* Classification on hand-built link matrices (seed 002), the built-in
 * simulated host, host domains, allocation and link text. */
#include "topo_test_util.h"

/* A topology of n GPUs with NVLink on the listed pairs (edges[2k], edges[2k+1])
 * and SYS elsewhere. */
static sc_topo_t *build(int n, const int *edges, int nedges) {
  sc_topo_t *t = NULL;
  TEST_OK(sc_topo_alloc(n, "hand", &t));
  for (int k = 0; k < nedges; k++) {
    int a = edges[2 * k], b = edges[2 * k + 1];
    t->link[a][b] = t->link[b][a] = SYMCOMM_LINK_NVLINK;
    t->nvlinks[a][b] = t->nvlinks[b][a] = 1;
  }
  return t;
}

static symcomm_topo_class_t classify(int n, const int *edges, int nedges) {
  sc_topo_t *t = build(n, edges, nedges);
  symcomm_topo_class_t cls = sc_topo_classify(t);
  sc_topo_free(t);
  return cls;
}

#define NEDGES(e) ((int)(sizeof(e) / sizeof((e)[0]) / 2))

/* DGX-1: quads {0,1,2,3} and {4,5,6,7}, GPU i joined to GPU i+4. */
static const int hcm[] = {0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3, 4, 5, 4, 6,
                          4, 7, 5, 6, 5, 7, 6, 7, 0, 4, 1, 5, 2, 6, 3, 7};

static void test_small(void) {
  TEST_ASSERT(classify(1, NULL, 0) == SYMCOMM_TOPO_FULLY_CONNECTED);
  const int pair[] = {0, 1};
  TEST_ASSERT(classify(2, pair, 1) == SYMCOMM_TOPO_FULLY_CONNECTED);
  TEST_ASSERT(classify(2, NULL, 0) == SYMCOMM_TOPO_NONE);
  TEST_ASSERT(classify(3, pair, 1) == SYMCOMM_TOPO_PARTIAL);
  const int pairs4[] = {0, 1, 2, 3};
  TEST_ASSERT(classify(4, pairs4, NEDGES(pairs4)) == SYMCOMM_TOPO_PARTIAL);
  TEST_ASSERT(sc_topo_classify(NULL) == SYMCOMM_TOPO_NONE);
}

static void test_hybrid_cube_mesh(void) {
  TEST_ASSERT(classify(8, hcm, NEDGES(hcm)) == SYMCOMM_TOPO_HYBRID_CUBE_MESH);

  /* The same graph with the GPUs renumbered, so the quads are not 0-3 and
   * 4-7 and GPU 0's crossing link is not its last neighbour. */
  const int relabel[8] = {5, 2, 7, 0, 3, 6, 1, 4};
  int edges[sizeof(hcm) / sizeof(hcm[0])];
  for (size_t k = 0; k < sizeof(hcm) / sizeof(hcm[0]); k++)
    edges[k] = relabel[hcm[k]];
  TEST_ASSERT(classify(8, edges, NEDGES(hcm)) == SYMCOMM_TOPO_HYBRID_CUBE_MESH);

  /* Quads joined by a matching other than i <-> i+4 are still a hybrid cube mesh. */
  const int twisted[] = {0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3, 4, 5, 4, 6,
                         4, 7, 5, 6, 5, 7, 6, 7, 0, 6, 1, 4, 2, 7, 3, 5};
  TEST_ASSERT(classify(8, twisted, NEDGES(twisted)) == SYMCOMM_TOPO_HYBRID_CUBE_MESH);

  /* One crossing link missing: degrees 3, so PARTIAL. */
  TEST_ASSERT(classify(8, hcm, NEDGES(hcm) - 1) == SYMCOMM_TOPO_PARTIAL);
  /* An extra link: degree 5 somewhere. */
  int extra[sizeof(hcm) / sizeof(hcm[0]) + 2];
  memcpy(extra, hcm, sizeof(hcm));
  extra[sizeof(hcm) / sizeof(hcm[0])] = 0;
  extra[sizeof(hcm) / sizeof(hcm[0]) + 1] = 5;
  TEST_ASSERT(classify(8, extra, NEDGES(hcm) + 1) == SYMCOMM_TOPO_PARTIAL);
  /* Two quads without the matching. */
  TEST_ASSERT(classify(8, hcm, 12) == SYMCOMM_TOPO_PARTIAL);
}

/* 4-regular graphs on 8 GPUs that are not two quads plus a matching. */
static void test_degree_four_impostors(void) {
  /* The circulant C8(1,2): GPU i joined to i+-1 and i+-2. */
  int c8[32];
  int k = 0;
  for (int i = 0; i < 8; i++) {
    c8[k++] = i;
    c8[k++] = (i + 1) % 8;
    c8[k++] = i;
    c8[k++] = (i + 2) % 8;
  }
  sc_topo_t *t = build(8, c8, 16);
  for (int a = 0; a < 8; a++) {
    int degree = 0;
    for (int b = 0; b < 8; b++)
      degree += t->link[a][b] == SYMCOMM_LINK_NVLINK;
    TEST_ASSERT(degree == 4, "C8(1,2) is 4-regular");
  }
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_PARTIAL);
  sc_topo_free(t);

  /* The complete bipartite K4,4: 4-regular, no triangle at all. */
  int k44[32];
  k = 0;
  for (int a = 0; a < 4; a++) {
    for (int b = 4; b < 8; b++) {
      k44[k++] = a;
      k44[k++] = b;
    }
  }
  TEST_ASSERT(classify(8, k44, 16) == SYMCOMM_TOPO_PARTIAL);

  /* The circulant C8(2,3), the complement of the Wagner graph. */
  int c823[32];
  k = 0;
  for (int i = 0; i < 8; i++) {
    c823[k++] = i;
    c823[k++] = (i + 2) % 8;
    c823[k++] = i;
    c823[k++] = (i + 3) % 8;
  }
  TEST_ASSERT(classify(8, c823, 16) == SYMCOMM_TOPO_PARTIAL);

  /* Whereas the complement of the cube Q3 is one: GPUs of even and of odd
   * bit parity form the quads, and a <-> 7-a is the matching. */
  int cube_complement[32];
  k = 0;
  for (int a = 0; a < 8; a++) {
    for (int b = a + 1; b < 8; b++) {
      int bits = __builtin_popcount((unsigned)(a ^ b));
      if (bits >= 2) {
        cube_complement[k++] = a;
        cube_complement[k++] = b;
      }
    }
  }
  TEST_ASSERT(k == 32, "%d", k);
  TEST_ASSERT(classify(8, cube_complement, 16) == SYMCOMM_TOPO_HYBRID_CUBE_MESH);
}

static void test_fully_connected(void) {
  int all[64 * 63];
  for (int n = 2; n <= SC_MAX_LOCAL_RANKS; n *= 2) {
    int k = 0;
    for (int a = 0; a < n; a++) {
      for (int b = a + 1; b < n; b++) {
        all[k++] = a;
        all[k++] = b;
      }
    }
    TEST_ASSERT(classify(n, all, k / 2) == SYMCOMM_TOPO_FULLY_CONNECTED, "%d GPUs", n);
    if (n > 2)
      TEST_ASSERT(classify(n, all, k / 2 - 1) == SYMCOMM_TOPO_PARTIAL, "%d GPUs", n);
  }
  /* A link written one way only still joins the pair. */
  sc_topo_t *t = NULL;
  TEST_OK(sc_topo_alloc(2, "hand", &t));
  t->link[0][1] = SYMCOMM_LINK_NVLINK;
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_FULLY_CONNECTED);
  sc_topo_free(t);
}

static void test_alloc(void) {
  sc_topo_t *t = (sc_topo_t *)(uintptr_t)0x1;
  TEST_EXPECT_RESULT(sc_topo_alloc(0, "x", &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(sc_topo_alloc(SC_MAX_LOCAL_RANKS + 1, "x", &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "1 to 64 GPUs, not 65"), "%s", sc_error_last());
  TEST_EXPECT_RESULT(sc_topo_alloc(2, "x", NULL), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(t == (sc_topo_t *)(uintptr_t)0x1);
  TEST_OK(sc_topo_alloc(3, NULL, &t));
  TEST_ASSERT(t->ngpus == 3 && t->source[0] == '\0');
  for (int a = 0; a < 3; a++) {
    TEST_ASSERT(t->rank[a] == -1 && t->dev[a] == a);
    for (int b = 0; b < 3; b++)
      TEST_ASSERT(t->link[a][b] == (a == b ? SYMCOMM_LINK_SELF : SYMCOMM_LINK_SYS));
  }
  sc_topo_free(t);
  char long_source[400];
  memset(long_source, 'p', sizeof(long_source) - 1);
  long_source[sizeof(long_source) - 1] = '\0';
  TEST_OK(sc_topo_alloc(1, long_source, &t));
  TEST_ASSERT(strlen(t->source) == sizeof(t->source) - 1);
  sc_topo_free(t);
  sc_topo_free(NULL);
  TEST_ASSERT(sc_topo_find(NULL, 0) == -1 && sc_topo_find_dev(NULL, 0) == -1);
}

static void test_builtin_switch(void) {
  sc_topo_t *t = NULL;
  TEST_OK(sc_topo_builtin_switch(8, 0, &t));
  TEST_ASSERT(t->ngpus == 8 && strcmp(t->source, "builtin") == 0);
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_FULLY_CONNECTED);
  TOPO_BUSID(t, 0, "0000:01:00.0");
  TOPO_BUSID(t, 7, "0000:08:00.0");
  for (int a = 0; a < 8; a++) {
    TEST_ASSERT(t->dev[a] == a && t->rank[a] == -1);
    for (int b = a + 1; b < 8; b++)
      TOPO_LINK(t, a, b, SYMCOMM_LINK_NVLINK, 1);
  }
  int64_t busid;
  TEST_OK(sc_busid_parse("0000:05:00.0", &busid));
  TEST_ASSERT(sc_topo_find(t, busid) == 4);
  sc_topo_free(t);

  TEST_OK(sc_topo_builtin_switch(1, 0x100, &t));
  TOPO_BUSID(t, 0, "0100:01:00.0");
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_FULLY_CONNECTED);
  sc_topo_free(t);

  TEST_OK(sc_topo_builtin_switch(SC_MAX_LOCAL_RANKS, 0, &t));
  TOPO_BUSID(t, 63, "0000:40:00.0");
  sc_topo_free(t);

  t = (sc_topo_t *)(uintptr_t)0x1;
  TEST_EXPECT_RESULT(sc_topo_builtin_switch(0, 0, &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(sc_topo_builtin_switch(65, 0, &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(sc_topo_builtin_switch(2, -1, &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(sc_topo_builtin_switch(2, 0x10000, &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(sc_topo_builtin_switch(2, 0, NULL), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(t == (sc_topo_t *)(uintptr_t)0x1);
}

static void test_host_domain(void) {
  sc_topo_t *t = NULL;
  TEST_OK(sc_topo_builtin_switch(4, 0, &t));
  sc_topo_set_host_domain(t, 1);
  TOPO_BUSID(t, 0, "0100:01:00.0");
  TOPO_BUSID(t, 3, "0100:04:00.0");
  TEST_ASSERT(t->busid[0] == 0x10001000);
  sc_topo_set_host_domain(t, 1); /* idempotent */
  TOPO_BUSID(t, 0, "0100:01:00.0");
  sc_topo_set_host_domain(t, 7); /* a later host replaces the earlier one */
  TOPO_BUSID(t, 2, "0700:03:00.0");
  sc_topo_set_host_domain(t, 0);
  TOPO_BUSID(t, 2, "0000:03:00.0");
  sc_topo_free(t);

  /* A real domain's low byte is kept, so Azure-style per-GPU domains stay apart. */
  TEST_OK(sc_topo_alloc(2, "hand", &t));
  TEST_OK(sc_busid_parse("0001:00:00.0", &t->busid[0]));
  TEST_OK(sc_busid_parse("0002:00:00.0", &t->busid[1]));
  sc_topo_set_host_domain(t, 2);
  TOPO_BUSID(t, 0, "0201:00:00.0");
  TOPO_BUSID(t, 1, "0202:00:00.0");
  sc_topo_set_host_domain(t, 255);
  TOPO_BUSID(t, 1, "ff02:00:00.0");
  sc_topo_free(t);
  sc_topo_set_host_domain(NULL, 1);
}

static void test_link_text(void) {
  sc_topo_t *t = NULL;
  TEST_OK(sc_topo_alloc(4, "hand", &t));
  t->link[0][1] = SYMCOMM_LINK_NVLINK;
  t->nvlinks[0][1] = 12;
  t->link[0][2] = SYMCOMM_LINK_PIX;
  t->link[0][3] = SYMCOMM_LINK_PHB;
  t->link[1][2] = SYMCOMM_LINK_PXB;
  t->link[1][3] = SYMCOMM_LINK_NET;
  t->link[2][3] = 42; /* not a link type */
  const struct {
    int a, b;
    const char *text;
  } cases[] = {{0, 0, "X"},   {0, 1, "NV12"}, {0, 2, "PIX"}, {0, 3, "PHB"}, {1, 2, "PXB"},
               {1, 3, "NET"}, {3, 0, "SYS"},  {2, 3, "?"},   {-1, 0, "?"},  {0, 4, "?"}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char text[16] = "unset";
    sc_topo_link_text(t, cases[i].a, cases[i].b, text, sizeof(text));
    TEST_ASSERT(strcmp(text, cases[i].text) == 0, "%d-%d: '%s'", cases[i].a, cases[i].b, text);
  }
  char small[3];
  sc_topo_link_text(t, 0, 1, small, sizeof(small));
  TEST_ASSERT(strcmp(small, "NV") == 0, "'%s'", small);
  sc_topo_link_text(t, 0, 1, NULL, 0);
  char text[8];
  sc_topo_link_text(NULL, 0, 0, text, sizeof(text));
  TEST_ASSERT(strcmp(text, "?") == 0);
  sc_topo_free(t);
}

int main(void) {
  test_small();
  test_hybrid_cube_mesh();
  test_degree_four_impostors();
  test_fully_connected();
  test_alloc();
  test_builtin_switch();
  test_host_domain();
  test_link_text();
  printf("test_topo_classify: OK\n");
  return 0;
}
