/* Topology from NVML without a GPU: a fake NVML function table answers as
 * hosts would (H100s on NVSwitches, GPUs joined directly, a GPU without
 * NVLink, old drivers, errors), and the result must be the matrix nvidia-smi
 * shows. Also CUDA_VISIBLE_DEVICES, the fallback on a host without NVML, and
 * written files that read back to the same topology. */
#include <dlfcn.h>
#include <stdint.h>

#include "topo/local_topo.h"
#include "topo/nvml_api.h"
#include "topo_test_util.h"

#define FAKE_UNKNOWN_ERROR 999
#define FAKE_SWITCH (-1)   /* the far end of a link: an NVSwitch */
#define FAKE_UNLISTED (-2) /* a GPU NVML does not list */
#define FAKE_CPU (-3)      /* a POWER9 CPU */

static struct fake_nvml {
  int ngpus;
  char busid[SC_MAX_LOCAL_RANKS][32];
  int links[SC_MAX_LOCAL_RANKS]; /* how many the GPU has; 0: no NVLink at all */
  bool active[SC_MAX_LOCAL_RANKS][SC_NVML_NVLINK_MAX_LINKS];
  int target[SC_MAX_LOCAL_RANKS][SC_NVML_NVLINK_MAX_LINKS]; /* GPU index or FAKE_* */
  int level[SC_MAX_LOCAL_RANKS][SC_MAX_LOCAL_RANKS];
  bool fail_count;
  int fail_pci_of;          /* GPU whose pci_info fails, -1 none */
  int fail_remote_of;       /* GPU whose remote_pci fails on link 0, -1 none */
  bool bad_busid;           /* GPU 1's bus id is garbage */
} fake;

static int fake_index(sc_nvml_device_t d) { return (int)(uintptr_t)d - 1; }

static void fake_format_busid(int bus, char *buf) {
  snprintf(buf, 32, "00000000:%02X:00.0", bus); /* NVML's way: 8-digit domain, upper case */
}

static sc_nvml_return_t fake_init(void) { return SC_NVML_SUCCESS; }
static const char *fake_error_string(sc_nvml_return_t r) {
  return r == FAKE_UNKNOWN_ERROR ? "Unknown Error (fake)" : "some NVML error (fake)";
}
static sc_nvml_return_t fake_count(unsigned *count) {
  if (fake.fail_count)
    return FAKE_UNKNOWN_ERROR;
  *count = (unsigned)fake.ngpus;
  return SC_NVML_SUCCESS;
}
static sc_nvml_return_t fake_by_index(unsigned i, sc_nvml_device_t *d) {
  if ((int)i >= fake.ngpus)
    return SC_NVML_ERROR_INVALID_ARGUMENT;
  *d = (sc_nvml_device_t)(uintptr_t)(i + 1);
  return SC_NVML_SUCCESS;
}
static sc_nvml_return_t fake_pci_info(sc_nvml_device_t d, sc_nvml_pci_info_t *pci) {
  int g = fake_index(d);
  if (g == fake.fail_pci_of)
    return FAKE_UNKNOWN_ERROR;
  memset(pci, 0, sizeof(*pci));
  snprintf(pci->busId, sizeof(pci->busId), "%s", fake.busid[g]);
  snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%s", fake.busid[g] + 4);
  if (g % 2 == 1) /* some GPUs with the 4-digit form only */
    snprintf(pci->busId, sizeof(pci->busId), "?");
  if (fake.bad_busid && g == 1) {
    snprintf(pci->busId, sizeof(pci->busId), "GPU-busid");
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "GPU-busid");
  }
  return SC_NVML_SUCCESS;
}
static sc_nvml_return_t fake_nvlink_state(sc_nvml_device_t d, unsigned link, int *active) {
  int g = fake_index(d);
  if (fake.links[g] == 0)
    return SC_NVML_ERROR_NOT_SUPPORTED;
  if ((int)link >= fake.links[g])
    return SC_NVML_ERROR_INVALID_ARGUMENT;
  *active = fake.active[g][link] ? SC_NVML_FEATURE_ENABLED : 0;
  return SC_NVML_SUCCESS;
}
static sc_nvml_return_t fake_remote_pci(sc_nvml_device_t d, unsigned link, sc_nvml_pci_info_t *pci) {
  int g = fake_index(d);
  if (g == fake.fail_remote_of && link == 0)
    return FAKE_UNKNOWN_ERROR;
  int t = fake.target[g][link];
  if (t >= 0)
    snprintf(pci->busId, sizeof(pci->busId), "%s", fake.busid[t]);
  else
    fake_format_busid(t == FAKE_SWITCH ? 0xC1 + (int)link % 4 : t == FAKE_UNLISTED ? 0xEE : 0x00,
                      pci->busId);
  return SC_NVML_SUCCESS;
}
static sc_nvml_return_t fake_remote_type(sc_nvml_device_t d, unsigned link, int *type) {
  int t = fake.target[fake_index(d)][link];
  *type = t == FAKE_SWITCH ? SC_NVML_NVLINK_DEVICE_TYPE_SWITCH
          : t == FAKE_CPU  ? SC_NVML_NVLINK_DEVICE_TYPE_IBMNPU
                           : SC_NVML_NVLINK_DEVICE_TYPE_GPU;
  return SC_NVML_SUCCESS;
}
static sc_nvml_return_t fake_ancestor(sc_nvml_device_t a, sc_nvml_device_t b, int *level) {
  *level = fake.level[fake_index(a)][fake_index(b)];
  return SC_NVML_SUCCESS;
}

static sc_nvml_fns_t fake_fns(void) {
  return (sc_nvml_fns_t){.init = fake_init,
                         .shutdown = fake_init,
                         .error_string = fake_error_string,
                         .device_count = fake_count,
                         .device_by_index = fake_by_index,
                         .pci_info = fake_pci_info,
                         .nvlink_state = fake_nvlink_state,
                         .nvlink_remote_pci = fake_remote_pci,
                         .nvlink_remote_type = fake_remote_type,
                         .common_ancestor = fake_ancestor};
}

/* n GPUs with 18 links each, none active, all SYS to each other. */
static void fake_host(int n) {
  memset(&fake, 0, sizeof(fake));
  fake.ngpus = n;
  fake.fail_pci_of = fake.fail_remote_of = -1;
  for (int g = 0; g < n; g++) {
    fake_format_busid(0x1B + 0x10 * g, fake.busid[g]);
    fake.links[g] = SC_NVML_NVLINK_MAX_LINKS;
    for (int h = 0; h < n; h++)
      fake.level[g][h] = SC_NVML_TOPOLOGY_SYSTEM;
  }
}

static void fake_link(int g, int target) {
  int l = 0;
  while (fake.active[g][l])
    l++;
  TEST_ASSERT(l < fake.links[g], "GPU %d has no free link", g);
  fake.active[g][l] = true;
  fake.target[g][l] = target;
}

/* Every GPU's first `links` links lead to NVSwitches (HGX H100: 18). */
static void fake_switches(int links) {
  for (int g = 0; g < fake.ngpus; g++)
    for (int l = 0; l < links; l++)
      fake_link(g, FAKE_SWITCH);
}

/* `count` links between a and b, seen from both. */
static void fake_direct(int a, int b, int count) {
  for (int k = 0; k < count; k++) {
    fake_link(a, b);
    fake_link(b, a);
  }
}

static void fake_level(int a, int b, int level) { fake.level[a][b] = fake.level[b][a] = level; }

static sc_topo_t *read_fake(const sc_nvml_fns_t *fns) {
  sc_topo_t *topo = NULL;
  char why[256] = "";
  TEST_ASSERT(sc_topo_from_nvml(fns, &topo, why, sizeof(why)), "failed: %s", why);
  TEST_ASSERT(topo->ngpus == fake.ngpus);
  TEST_ASSERT(strcmp(topo->source, "nvml") == 0);
  for (int g = 0; g < topo->ngpus; g++) {
    char expect[32];
    snprintf(expect, sizeof(expect), "0000:%02x:00.0", 0x1B + 0x10 * g);
    TOPO_BUSID(topo, g, expect);
    TEST_ASSERT(topo->dev[g] == g);
  }
  return topo;
}

static void read_fails(const char *needle) {
  sc_nvml_fns_t fns = fake_fns();
  sc_topo_t *topo = (sc_topo_t *)(uintptr_t)0x1;
  char why[256] = "";
  TEST_ASSERT(!sc_topo_from_nvml(&fns, &topo, why, sizeof(why)));
  TEST_ASSERT(test_contains(why, needle), "'%s' lacks '%s'", why, needle);
  TEST_ASSERT(topo == (sc_topo_t *)(uintptr_t)0x1);
}

/* Written out and read back: the same GPUs, matrix, switch links and class. */
static void check_round_trip(const sc_topo_t *topo) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  TEST_ASSERT(out != NULL);
  TEST_OK(sc_topo_write_xml(topo, out));
  fclose(out);
  sc_topo_t *back = NULL;
  TEST_OK(sc_topo_parse_xml(text, len, "written.xml", &back));
  TEST_ASSERT(back->ngpus == topo->ngpus);
  for (int a = 0; a < topo->ngpus; a++) {
    TEST_ASSERT(back->busid[a] == topo->busid[a] && back->dev[a] == topo->dev[a], "GPU %d", a);
    TEST_ASSERT(back->nvswitch[a] == topo->nvswitch[a], "GPU %d: %d switch links, wrote %d", a,
                back->nvswitch[a], topo->nvswitch[a]);
    for (int b = 0; b < topo->ngpus; b++) {
      char was[16], now[16];
      sc_topo_link_text(topo, a, b, was, sizeof(was));
      sc_topo_link_text(back, a, b, now, sizeof(now));
      TEST_ASSERT(strcmp(was, now) == 0, "%d-%d: wrote %s, read %s\n%s", a, b, was, now, text);
    }
  }
  TEST_ASSERT(sc_topo_classify(back) == sc_topo_classify(topo));
  sc_topo_free(back);
  free(text);
}

/* The class nvidia-smi's matrix has; then written, read back, freed. */
static void finish(sc_topo_t *t, symcomm_topo_class_t cls) {
  TEST_ASSERT(sc_topo_classify(t) == cls, "class %d, expected %d", (int)sc_topo_classify(t), (int)cls);
  check_round_trip(t);
  sc_topo_free(t);
}

/* HGX H100: every GPU's 18 links go to NVSwitches; nvidia-smi shows NV18. */
static void test_h100_nvswitch(void) {
  fake_host(4);
  fake_switches(18);
  sc_nvml_fns_t fns = fake_fns();
  sc_topo_t *t = read_fake(&fns);
  for (int a = 0; a < 4; a++) {
    TEST_ASSERT(t->nvswitch[a] == 18);
    for (int b = a + 1; b < 4; b++)
      TOPO_LINK(t, a, b, SYMCOMM_LINK_NVLINK, 18);
  }
  finish(t, SYMCOMM_TOPO_FULLY_CONNECTED);
}

/* 8 GPUs on switches under a driver without nvmlDeviceGetNvLinkRemoteDeviceType:
 * a far end that is not one of the GPUs is a switch. */
static void test_8gpu_old_driver(void) {
  fake_host(8);
  fake_switches(12);
  sc_nvml_fns_t fns = fake_fns();
  fns.nvlink_remote_type = NULL;
  fns.common_ancestor = NULL;
  sc_topo_t *t = read_fake(&fns);
  for (int a = 0; a < 8; a++)
    for (int b = a + 1; b < 8; b++)
      TOPO_LINK(t, a, b, SYMCOMM_LINK_NVLINK, 12);
  finish(t, SYMCOMM_TOPO_FULLY_CONNECTED);

  /* Direct links are still found by bus id; without a common ancestor the
   * other pairs are SYS. */
  fake_host(3);
  fake_direct(0, 1, 4);
  t = read_fake(&fns);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 4);
  TOPO_LINK(t, 0, 2, SYMCOMM_LINK_SYS, 0);
  TOPO_LINK(t, 1, 2, SYMCOMM_LINK_SYS, 0);
  TEST_ASSERT(t->nvswitch[0] == 0);
  finish(t, SYMCOMM_TOPO_PARTIAL);
}

/* Two GPUs joined directly (an NVLink bridge, or a 4-GPU HGX board's NV6). */
static void test_direct_pairs(void) {
  fake_host(2);
  fake_direct(0, 1, 4);
  sc_nvml_fns_t fns = fake_fns();
  sc_topo_t *t = read_fake(&fns);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 4);
  finish(t, SYMCOMM_TOPO_FULLY_CONNECTED);

  fake_host(4);
  for (int a = 0; a < 4; a++)
    for (int b = a + 1; b < 4; b++)
      fake_direct(a, b, 6);
  t = read_fake(&fns);
  for (int a = 0; a < 4; a++)
    for (int b = a + 1; b < 4; b++)
      TOPO_LINK(t, a, b, SYMCOMM_LINK_NVLINK, 6);
  TEST_ASSERT(t->nvswitch[0] == 0);
  check_round_trip(t);
  sc_topo_free(t);
}

/* DGX-1-like: two quads, GPU i joined to i + 4, the rest PCIe. */
static void test_hybrid_cube_mesh(void) {
  fake_host(8);
  for (int q = 0; q < 8; q += 4)
    for (int a = q; a < q + 4; a++)
      for (int b = a + 1; b < q + 4; b++)
        fake_direct(a, b, 1);
  for (int a = 0; a < 4; a++)
    fake_direct(a, a + 4, 2);
  for (int a = 0; a < 8; a++)
    for (int b = 0; b < 8; b++)
      if (a / 4 == b / 4 && a != b)
        fake_level(a, b, SC_NVML_TOPOLOGY_NODE);
  sc_nvml_fns_t fns = fake_fns();
  sc_topo_t *t = read_fake(&fns);
  TOPO_LINK(t, 0, 4, SYMCOMM_LINK_NVLINK, 2);
  TOPO_LINK(t, 1, 2, SYMCOMM_LINK_NVLINK, 1);
  TOPO_LINK(t, 0, 5, SYMCOMM_LINK_SYS, 0);
  finish(t, SYMCOMM_TOPO_HYBRID_CUBE_MESH);
}

/* GPUs without NVLink: the PCIe path from NVML's common ancestor. */
static void test_pcie_paths(void) {
  fake_host(7);
  for (int g = 2; g < 7; g++)
    fake.links[g] = 0; /* PCIe cards */
  fake_direct(0, 1, 2);
  /* CPU 0: 0, 1, 2 on one switch, 3 on a switch beside it, 6 on another
   * host bridge of the same NUMA node; CPU 1: 4 and 5, one board. */
  for (int a = 0; a < 3; a++) {
    for (int b = a + 1; b < 3; b++)
      fake_level(a, b, SC_NVML_TOPOLOGY_SINGLE);
    fake_level(a, 3, SC_NVML_TOPOLOGY_MULTIPLE);
  }
  for (int a = 0; a < 4; a++)
    fake_level(a, 6, SC_NVML_TOPOLOGY_NODE);
  fake_level(4, 5, SC_NVML_TOPOLOGY_INTERNAL);
  sc_nvml_fns_t fns = fake_fns();
  sc_topo_t *t = read_fake(&fns);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 2);
  TOPO_LINK(t, 0, 2, SYMCOMM_LINK_PIX, 0);
  TOPO_LINK(t, 2, 3, SYMCOMM_LINK_PXB, 0);
  TOPO_LINK(t, 1, 3, SYMCOMM_LINK_PXB, 0);
  TOPO_LINK(t, 3, 6, SYMCOMM_LINK_PHB, 0);
  TOPO_LINK(t, 4, 5, SYMCOMM_LINK_PIX, 0);
  TOPO_LINK(t, 0, 5, SYMCOMM_LINK_SYS, 0);
  TOPO_LINK(t, 6, 4, SYMCOMM_LINK_SYS, 0);
  finish(t, SYMCOMM_TOPO_PARTIAL);

  fake.links[0] = fake.links[1] = 0;
  t = read_fake(&fns);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_PIX, 0);
  finish(t, SYMCOMM_TOPO_NONE);
}

/* Links that are inactive, lead nowhere known, or to a CPU count for nothing. */
static void test_links_not_counted(void) {
  fake_host(4);
  fake_switches(18);
  fake.active[3][5] = false;        /* GPU 3: 17 active */
  fake.fail_remote_of = 2;          /* GPU 2: link 0's far end unknown, 17 counted */
  fake.target[1][0] = FAKE_CPU;     /* GPU 1: one link to a POWER9 CPU */
  fake.target[0][0] = FAKE_UNLISTED; /* GPU 0: one link to a GPU NVML does not list */
  sc_nvml_fns_t fns = fake_fns();
  sc_topo_t *t = read_fake(&fns);
  for (int g = 0; g < 4; g++)
    TEST_ASSERT(t->nvswitch[g] == 17, "GPU %d: %d switch links", g, t->nvswitch[g]);
  TOPO_LINK(t, 0, 3, SYMCOMM_LINK_NVLINK, 17);
  sc_topo_free(t);

  /* A GPU with no active link at all. */
  fake_host(3);
  fake_switches(18);
  memset(fake.active[2], 0, sizeof(fake.active[2]));
  fake_level(0, 2, SC_NVML_TOPOLOGY_MULTIPLE);
  fake_level(1, 2, SC_NVML_TOPOLOGY_MULTIPLE);
  t = read_fake(&fns);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 18);
  TOPO_LINK(t, 0, 2, SYMCOMM_LINK_PXB, 0);
  TOPO_LINK(t, 1, 2, SYMCOMM_LINK_PXB, 0);
  TEST_ASSERT(t->nvswitch[2] == 0);
  finish(t, SYMCOMM_TOPO_PARTIAL);
}

static void test_errors(void) {
  fake_host(4);
  fake.fail_count = true;
  read_fails("nvmlDeviceGetCount_v2: Unknown Error (fake)");
  fake_host(0);
  read_fails("NVML lists no GPU");
  fake_host(4);
  fake.fail_pci_of = 2;
  read_fails("nvmlDeviceGetPciInfo_v3 of GPU 2: Unknown Error (fake)");
  fake_host(4);
  fake.bad_busid = true;
  read_fails("GPU 1: NVML's bus id 'GPU-busid");
  fake_host(4);
  snprintf(fake.busid[3], sizeof(fake.busid[3]), "%s", fake.busid[0]);
  read_fails("for GPUs 0 and 3");
}

static sc_topo_t *nvswitch4(void) {
  fake_host(4);
  fake_switches(18);
  sc_nvml_fns_t fns = fake_fns();
  return read_fake(&fns);
}

static void visible_fails(const sc_topo_t *host, const char *visible, const char *needle) {
  sc_topo_t *t = (sc_topo_t *)(uintptr_t)0x1;
  char why[256] = "";
  TEST_ASSERT(!sc_topo_select_visible(host, visible, &t, why, sizeof(why)), "%s", visible);
  TEST_ASSERT(test_contains(why, needle), "'%s' lacks '%s'", why, needle);
  TEST_ASSERT(t == (sc_topo_t *)(uintptr_t)0x1);
}

/* CUDA device k is the k-th GPU CUDA_VISIBLE_DEVICES lists. */
static void test_visible(void) {
  sc_topo_t *host = nvswitch4();
  host->link[1][3] = host->link[3][1] = SYMCOMM_LINK_PXB; /* tell the pairs apart */
  sc_topo_t *t = NULL;
  char why[256];
  TEST_ASSERT(sc_topo_select_visible(host, "3,1", &t, why, sizeof(why)), "%s", why);
  TEST_ASSERT(t->ngpus == 2 && t->dev[0] == 0 && t->dev[1] == 1);
  TOPO_BUSID(t, 0, "0000:4b:00.0");
  TOPO_BUSID(t, 1, "0000:2b:00.0");
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_PXB, 0);
  TEST_ASSERT(t->nvswitch[0] == 18);
  sc_topo_free(t);
  /* As in CUDA, an entry that is not a GPU ends the list. */
  TEST_ASSERT(sc_topo_select_visible(host, "2,7,0", &t, why, sizeof(why)), "%s", why);
  TEST_ASSERT(t->ngpus == 1);
  TOPO_BUSID(t, 0, "0000:3b:00.0");
  sc_topo_free(t);
  TEST_ASSERT(sc_topo_select_visible(host, NULL, &t, why, sizeof(why)) && t->ngpus == 4);
  TOPO_LINK(t, 0, 2, SYMCOMM_LINK_NVLINK, 18);
  sc_topo_free(t);
  visible_fails(host, "GPU-8c4ef7a2", "is a UUID");
  visible_fails(host, "0,MIG-1", "is a UUID");
  visible_fails(host, "1,1", "names GPU 1 twice");
  visible_fails(host, "", "leaves no GPU");
  visible_fails(host, "-1", "leaves no GPU");
  sc_topo_free(host);
}

/* Topology files of every kind survive a write and a read. */
static void test_files_round_trip(void) {
  const char *files[] = {"topo/nvswitch_8gpu.xml", "topo/hybrid_cube_mesh_8gpu.xml",
                         "topo/pcie_2gpu.xml",     "topo/partial_4gpu.xml",
                         "topo/sim2x8_node1.xml",  "tests/data/nccl_dump_4xh200.xml"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    sc_topo_t *t = topo_test_load(files[i]);
    check_round_trip(t);
    sc_topo_free(t);
  }
  sc_topo_t *t = NULL;
  TEST_OK(sc_topo_builtin_switch(5, 3, &t));
  check_round_trip(t);
  sc_topo_free(t);
}

/* This machine has no driver: the library is missing, and a job's host is
 * the simulated one. */
static void test_no_nvml(void) {
  sc_nvml_lib_t lib;
  char why[256] = "";
  TEST_ASSERT(!sc_nvml_open("libsymcomm-no-such-nvml.so.1", &lib, why, sizeof(why)));
  TEST_ASSERT(test_contains(why, "no libsymcomm-no-such-nvml.so.1"), "%s", why);
  TEST_ASSERT(lib.handle == NULL);
  void *real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (real != NULL) {
    dlclose(real);
    printf("test_topo_nvml: libnvidia-ml.so.1 is present; the fallback is not checked here\n");
    return;
  }
  sc_topo_t *t = NULL;
  TEST_ASSERT(!sc_topo_nvml_read(&t, why, sizeof(why)) && t == NULL);
  TEST_ASSERT(test_contains(why, "no libnvidia-ml.so.1"), "%s", why);
  TEST_OK(sc_topo_load_local(-1, 3, &t));
  TEST_ASSERT(t->ngpus == 3 && strcmp(t->source, "builtin") == 0);
  sc_topo_free(t);
}

int main(void) {
  test_h100_nvswitch();
  test_8gpu_old_driver();
  test_direct_pairs();
  test_hybrid_cube_mesh();
  test_pcie_paths();
  test_links_not_counted();
  test_errors();
  test_visible();
  test_files_round_trip();
  test_no_nvml();
  printf("test_topo_nvml: OK\n");
  return 0;
}
