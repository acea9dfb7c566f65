/* NCCL topology semantics on top of the XML reader: which GPUs a file has,
 * their order, NVLink counts (direct, through NVSwitches, to GPUs not in the
 * file), PCIe path types, and the errors that name their line. */
#include <sys/stat.h>
#include <unistd.h>

#include "topo_test_util.h"

/* One GPU: <pci busid=BUS class=GPU><gpu dev=DEV>LINKS</gpu></pci> */
#define GPU(bus, dev, links)                                                                       \
  "<pci busid=\"" bus "\" class=\"0x030200\" vendor=\"0x10de\"><gpu dev=\"" dev                    \
  "\" sm=\"90\" rank=\"0\" gdr=\"1\">" links "</gpu></pci>\n"
#define SYSTEM(body) "<system version=\"1\">\n<cpu numaid=\"0\">\n" body "</cpu>\n</system>\n"

/* A host of n GPUs on one CPU, GPU g at bus id 0000:0<g+1>:00.0 with the
 * <nvlink> elements links[g]. */
static sc_topo_t *parse_gpus(int n, const char *const *links) {
  char xml[4096];
  size_t len = (size_t)snprintf(xml, sizeof(xml), "<system version=\"1\">\n<cpu numaid=\"0\">\n");
  for (int g = 0; g < n; g++)
    len += (size_t)snprintf(xml + len, sizeof(xml) - len,
                            "<pci busid=\"0000:%02x:00.0\" class=\"0x030200\">\n"
                            "  <gpu dev=\"%d\" sm=\"90\" rank=\"%d\" gdr=\"1\">%s</gpu>\n"
                            "</pci>\n",
                            g + 1, g, g, links[g]);
  snprintf(xml + len, sizeof(xml) - len, "</cpu>\n</system>\n");
  TEST_ASSERT(len < sizeof(xml) - 32);
  return topo_test_parse(xml);
}

#define SWITCH18 "<nvlink target=\"fffffff:ff:ff.0\" count=\"18\" tclass=\"0x068000\"/>"
#define SWITCH12 "<nvlink target=\"fffffff:ff:ff.0\" count=\"12\" tclass=\"0x068000\"/>"
#define SWITCH6 "<nvlink target=\"fffffff:ff:ff.0\" count=\"6\" tclass=\"0x068000\"/>"

static void test_switch_links(void) {
  /* Through NVSwitches: a pair gets the smaller of the two GPUs' switch links. */
  const char *const three[] = {SWITCH18, SWITCH12, SWITCH18};
  sc_topo_t *t = parse_gpus(3, three);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 12);
  TOPO_LINK(t, 0, 2, SYMCOMM_LINK_NVLINK, 18);
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_FULLY_CONNECTED);
  TEST_ASSERT(t->rank[0] == -1 && t->rank[2] == -1, "ranks of a file are unknown");
  TEST_ASSERT(strcmp(t->source, "test.xml") == 0);
  sc_topo_free(t);

  /* Several switches (the per-switch style of NCCL dumps) add up; a target
   * that is neither a GPU of the file nor classed is a switch too. */
  const char *const styles[] = {
      "<nvlink target=\"0000:c0:00.0\" count=\"2\" tclass=\"0x068000\"/>"
      "<nvlink target=\"0000:c1:00.0\" count=\"2\" tclass=\"0x068000\"/>",
      "<nvlink target=\"0000:c0:00.0\" count=\"4\"/>",
      "<nvlink target=\"fffffff:ffff:ff\" count=\"3\"/>",
  };
  t = parse_gpus(3, styles);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 4);
  TOPO_LINK(t, 0, 2, SYMCOMM_LINK_NVLINK, 3);
  TOPO_LINK(t, 1, 2, SYMCOMM_LINK_NVLINK, 3);
  sc_topo_free(t);

  /* Direct links and switch links between the same pair add up. */
  const char *const both[] = {
      SWITCH6 "<nvlink target=\"0000:02:00.0\" count=\"2\" tclass=\"0x030200\"/>", SWITCH6};
  t = parse_gpus(2, both);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 8);
  sc_topo_free(t);

  /* A GPU with switch links and one without: no NVLink between them. */
  const char *const one_sided[] = {SWITCH6, ""};
  t = parse_gpus(2, one_sided);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_PHB, 0);
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_NONE);
  sc_topo_free(t);
}

static void test_direct_links(void) {
  /* Listed by both GPUs (NCCL dumps): counted once, not twice. */
  const char *const twice[] = {
      "<nvlink target=\"0000:02:00.0\" count=\"2\" tclass=\"0x030200\"/>",
      "<nvlink target=\"0000:01:00.0\" count=\"2\" tclass=\"0x030200\"/>",
  };
  sc_topo_t *t = parse_gpus(2, twice);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 2);
  sc_topo_free(t);

  /* Listed by one GPU only (hand-written files), without tclass: still both ways. */
  const char *const once[] = {"", "<nvlink target=\"0000:01:00.0\" count=\"3\"/>"};
  t = parse_gpus(2, once);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 3);
  sc_topo_free(t);

  /* One element per link (count defaults to 1): they add up within a GPU;
   * when the two GPUs disagree the larger count wins. */
  const char *const per_link[] = {
      "<nvlink target=\"0000:02:00.0\"/><nvlink target=\"0000:02:00.0\"/>",
      "<nvlink target=\"0000:01:00.0\" count=\"1\" tclass=\"0x030200\"/>",
  };
  t = parse_gpus(2, per_link);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 2);
  sc_topo_free(t);

  /* count="0" is no link. */
  const char *const zero[] = {"<nvlink target=\"0000:02:00.0\" count=\"0\"/>", ""};
  t = parse_gpus(2, zero);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_PHB, 0);
  sc_topo_free(t);
}

/* Targets that must not become links. */
static void test_ignored_links(void) {
  /* A GPU-class target that is not in the file (NCCL lists the NVLinks of a
   * GPU to GPUs its job does not use): ignored, not taken for a switch,
   * otherwise these two GPUs would look linked. */
  const char *const absent[] = {
      "<nvlink target=\"0000:85:00.0\" count=\"2\" tclass=\"0x030200\"/>",
      "<nvlink target=\"0000:86:00.0\" count=\"2\" tclass=\"0x030200\"/>",
  };
  sc_topo_t *t = parse_gpus(2, absent);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_PHB, 0);
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_NONE);
  sc_topo_free(t);

  /* A GPU linked to itself (Azure's NC A100 v4 image ships such a file). */
  const char *const self[] = {
      "<nvlink target=\"0000:01:00.0\" count=\"12\" tclass=\"0x030200\"/>",
      "<nvlink target=\"0000:02:00.0\" count=\"12\" tclass=\"0x030200\"/>",
  };
  t = parse_gpus(2, self);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_PHB, 0);
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_NONE);
  sc_topo_free(t);

  /* NVLink to the CPU (POWER9, class 0x068001) joins no GPUs. */
  const char *const to_cpu[] = {
      "<nvlink target=\"0000:00:00.0\" count=\"3\" tclass=\"0x068001\"/>",
      "<nvlink target=\"0000:00:00.0\" count=\"3\" tclass=\"0x068001\"/>",
  };
  t = parse_gpus(2, to_cpu);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_PHB, 0);
  sc_topo_free(t);
}

static void test_order(void) {
  /* By dev when every GPU has one. */
  sc_topo_t *t = topo_test_parse(SYSTEM(GPU("0000:01:00.0", "2", "") GPU("0000:02:00.0", "0", "")
                                            GPU("0000:03:00.0", "1", "")));
  TOPO_BUSID(t, 0, "0000:02:00.0");
  TOPO_BUSID(t, 1, "0000:03:00.0");
  TOPO_BUSID(t, 2, "0000:01:00.0");
  TEST_ASSERT(t->dev[0] == 0 && t->dev[1] == 1 && t->dev[2] == 2);
  TEST_ASSERT(sc_topo_find(t, 0x1000) == 2 && sc_topo_find(t, 0x9000) == -1);
  TEST_ASSERT(sc_topo_find_dev(t, 1) == 1 && sc_topo_find_dev(t, 7) == -1);
  sc_topo_free(t);

  /* dev values are kept as given, even with gaps (a trimmed dump). */
  t = topo_test_parse(SYSTEM(GPU("0000:01:00.0", "5", "") GPU("0000:02:00.0", "3", "")));
  TEST_ASSERT(t->dev[0] == 3 && t->dev[1] == 5);
  TOPO_BUSID(t, 0, "0000:02:00.0");
  sc_topo_free(t);

  /* One GPU without dev: document order, dev = position. */
  t = topo_test_parse(
      SYSTEM(GPU("0000:01:00.0", "2", "") "<pci busid=\"0000:02:00.0\"><gpu sm=\"90\"/></pci>\n"));
  TOPO_BUSID(t, 0, "0000:01:00.0");
  TEST_ASSERT(t->dev[0] == 0 && t->dev[1] == 1);
  sc_topo_free(t);
}

static void test_pci_paths(void) {
  const char *xml =
      "<system version=\"1\">\n"
      "  <cpu numaid=\"0\">\n"
      "    <pci busid=\"0000:10:00.0\" class=\"0x060400\">\n" /* switch A */
      "      <pci busid=\"0000:11:00.0\" class=\"0x030200\"><gpu dev=\"0\"/></pci>\n"
      "      <pci busid=\"0000:12:00.0\" class=\"0x030200\"><gpu dev=\"1\"/></pci>\n"
      "      <pci busid=\"0000:13:00.0\" class=\"0x060400\">\n" /* switch B below A */
      "        <pci busid=\"0000:14:00.0\" class=\"0x030200\"><gpu dev=\"2\"/></pci>\n"
      "      </pci>\n"
      "    </pci>\n"
      "    <pci busid=\"0000:20:00.0\" class=\"0x030200\"><gpu dev=\"3\"/></pci>\n"
      "    <nic><net name=\"eth0\" dev=\"0\"/></nic>\n"
      "  </cpu>\n"
      "  <cpu numaid=\"1\">\n"
      "    <pci busid=\"0000:80:00.0\" class=\"0x030200\"><gpu dev=\"4\"/></pci>\n"
      "  </cpu>\n"
      "  <cpu numaid=\"0\">\n" /* NUMA node 0 listed a second time */
      "    <pci busid=\"0000:30:00.0\" class=\"0x030200\"><gpu dev=\"5\"/></pci>\n"
      "  </cpu>\n"
      "  <pci busid=\"0000:f0:00.0\" class=\"0x030200\"><gpu dev=\"6\"/></pci>\n" /* no CPU */
      "</system>\n";
  sc_topo_t *t = topo_test_parse(xml);
  TEST_ASSERT(t->ngpus == 7);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_PIX, 0); /* one switch */
  TOPO_LINK(t, 0, 2, SYMCOMM_LINK_PXB, 0); /* switches A and B */
  TOPO_LINK(t, 0, 3, SYMCOMM_LINK_PHB, 0); /* through the CPU */
  TOPO_LINK(t, 2, 3, SYMCOMM_LINK_PHB, 0);
  TOPO_LINK(t, 0, 4, SYMCOMM_LINK_SYS, 0); /* across CPUs */
  TOPO_LINK(t, 3, 5, SYMCOMM_LINK_PHB, 0); /* same numaid */
  TOPO_LINK(t, 4, 5, SYMCOMM_LINK_SYS, 0);
  TOPO_LINK(t, 0, 6, SYMCOMM_LINK_SYS, 0);
  TOPO_LINK(t, 0, 0, SYMCOMM_LINK_SELF, 0);
  TEST_ASSERT(sc_topo_classify(t) == SYMCOMM_TOPO_NONE);
  sc_topo_free(t);
}

/* Broadcom PEX Gen4 switches appear as a switch with sub-switches; like NCCL,
 * the sub-switches are one switch with their parent (PIX, not PXB). */
static void test_bcm_switch_folding(void) {
  static const char *const vendors[] = {"0x1000", "0x10b5"};
  for (int v = 0; v < 2; v++) {
    char xml[2048];
    const char *sw = "class=\"0x060400\" vendor=\"%s\" device=\"0xc010\" subsystem_vendor=\"%s\" "
                     "subsystem_device=\"0xa096\"";
    char attrs[256];
    snprintf(attrs, sizeof(attrs), sw, vendors[v], vendors[v]);
    snprintf(xml, sizeof(xml),
             "<system><cpu numaid=\"0\">\n"
             "<pci busid=\"0000:0c:00.0\" %s>\n"
             "  <pci busid=\"0000:0e:00.0\" %s>\n"
             "    <pci busid=\"0000:10:00.0\" class=\"0x030200\"><gpu dev=\"0\"/></pci>\n"
             "  </pci>\n"
             "  <pci busid=\"0000:15:00.0\" %s>\n"
             "    <pci busid=\"0000:17:00.0\" class=\"0x030200\"><gpu dev=\"1\"/></pci>\n"
             "  </pci>\n"
             "  <pci busid=\"0000:18:00.0\" class=\"0x030200\"><gpu dev=\"2\"/></pci>\n"
             "</pci>\n"
             "</cpu></system>\n",
             attrs, attrs, attrs);
    sc_topo_t *t = topo_test_parse(xml);
    symcomm_link_t expected = v == 0 ? SYMCOMM_LINK_PIX : SYMCOMM_LINK_PXB;
    TOPO_LINK(t, 0, 1, expected, 0);
    TOPO_LINK(t, 0, 2, expected, 0);
    sc_topo_free(t);
  }
}

/* GPU-class <pci> elements without <gpu> (cloud images' files, which leave the
 * GPUs to NCCL's detection) are GPUs; another vendor's display device is not. */
static void test_bare_gpu_pci(void) {
  sc_topo_t *t = topo_test_parse(
      "<system version=\"1\">\n"
      "  <cpu numaid=\"0\">\n"
      "    <pci busid=\"ffff:ff:01.0\" class=\"0x060400\">\n"
      "      <pci busid=\"0003:00:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\"/>\n"
      "      <pci busid=\"0103:00:00.0\" class=\"0x020700\"/>\n"
      "      <pci busid=\"0004:00:00.0\" class=\"0x030200\"/>\n"
      "    </pci>\n"
      "    <pci busid=\"0000:02:00.0\" class=\"0x030000\" vendor=\"0x1a03\"/>\n"
      "  </cpu>\n"
      "  <cpu numaid=\"1\">\n"
      "    <pci busid=\"0001:00:00.0\" class=\"0x030200\" vendor=\"0x10de\"/>\n"
      "  </cpu>\n"
      "</system>\n");
  TEST_ASSERT(t->ngpus == 3, "%d GPUs", t->ngpus);
  TOPO_BUSID(t, 0, "0003:00:00.0");
  TOPO_BUSID(t, 1, "0004:00:00.0");
  TOPO_BUSID(t, 2, "0001:00:00.0");
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_PIX, 0);
  TOPO_LINK(t, 0, 2, SYMCOMM_LINK_SYS, 0);
  sc_topo_free(t);
}

/* What the parser passes over: other elements, unknown attributes, NICs. */
static void test_tolerated(void) {
  sc_topo_t *t = topo_test_parse(
      "<?xml version=\"1.0\"?>\n"
      "<system version=\"2\" future=\"yes\">\n"
      "  <cpu host_hash=\"0x16fe256e956b115c\" numaid=\"-1\" arch=\"x86_64\" "
      "vendor=\"GenuineIntel\">\n"
      "    <pci busid=\"0000:05:00.0\" class=\"0x030200\" vendor=\"0x10de\" link_speed=\"\" "
      "link_width=\"0\" extra='x &amp; y'>\n"
      "      <gpu dev=\"0\" sm=\"90\" rank=\"7\" gdr=\"1\" mem=\"81559\">\n"
      "        <nvlink target=\"fffffff:ff:ff.0\" count=\"18\" tclass=\"0x068000\"/>\n"
      "        <c2c bw=\"56376\" count=\"7\"/>\n"
      "        <future-element/>\n"
      "      </gpu>\n"
      "      <pcilink target=\"0000:06:00.0\"/>\n"
      "    </pci>\n"
      "    <pci busid=\"0000:06:00.0\" class=\"0x030200\" vendor=\"0x10de\">\n"
      "      <gpu dev=\"1\" sm=\"90\" rank=\"8\" gdr=\"1\">\n"
      "        <nvlink target=\"fffffff:ff:ff.0\" count=\"18\" tclass=\"0x068000\"/>\n"
      "      </gpu>\n"
      "    </pci>\n"
      "    <pci busid=\"0000:0d:00.0\" class=\"0x020000\">\n"
      "      <nic><net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" gdr=\"1\"/></nic>\n"
      "    </pci>\n"
      "    <nic><net name=\"eth0\" dev=\"1\" speed=\"-1\"/></nic>\n"
      "  </cpu>\n"
      "  <gin/>\n"
      "</system>\n");
  TEST_ASSERT(t->ngpus == 2);
  TOPO_LINK(t, 0, 1, SYMCOMM_LINK_NVLINK, 18);
  TEST_ASSERT(t->rank[0] == -1);
  sc_topo_free(t);
}

static void test_errors(void) {
  TOPO_PARSE_FAILS("<?xml version=\"1.0\"?>\n<topology>\n</topology>\n", 2,
                   "the root element is <topology>");
  TOPO_PARSE_FAILS("<system>\n<cpu numaid=\"0\">\n<nic/>\n</cpu>\n</system>\n", 1, "no GPU");
  TOPO_PARSE_FAILS("<system>\n<cpu>\n<gpu dev=\"0\"/>\n</cpu>\n</system>\n", 3,
                   "<gpu> must be inside a <pci busid=\"...\"> element, not inside <cpu>");
  TOPO_PARSE_FAILS("<system>\n<gpu dev=\"0\"/>\n</system>\n", 2, "not inside <system>");
  TOPO_PARSE_FAILS(
      "<system>\n<cpu>\n<pci class=\"0x030200\">\n<gpu dev=\"0\"/>\n</pci>\n</cpu>\n</system>\n", 4,
      "without a busid");
  TOPO_PARSE_FAILS(
      "<system>\n<cpu>\n<pci busid=\"0000:7:00.0\">\n<gpu dev=\"0\"/>\n</pci>\n</cpu>\n</system>\n",
      3, "bad bus id '0000:7:00.0'");
  TOPO_PARSE_FAILS("<system>\n<cpu>\n"
                   "<pci busid=\"0000:07:00.0\"><gpu dev=\"0\"/></pci>\n"
                   "<pci busid=\"0000:08:00.0\"><gpu dev=\"1\"/></pci>\n"
                   "<pci busid=\"0000:07:00.0\">\n<gpu dev=\"2\"/></pci>\n"
                   "</cpu>\n</system>\n",
                   6, "duplicate GPU bus id 0000:07:00.0: already given to the GPU at line 3");
  /* Two <gpu> in one <pci> (several ranks or MLO parts of one GPU). */
  TOPO_PARSE_FAILS("<system>\n<cpu>\n<pci busid=\"0000:07:00.0\">\n<gpu dev=\"0\"/>\n"
                   "<gpu dev=\"0\" mlopart=\"1\"/>\n</pci>\n</cpu>\n</system>\n",
                   5, "duplicate GPU bus id");
  TOPO_PARSE_FAILS("<system>\n<cpu>\n"
                   "<pci busid=\"0000:07:00.0\"><gpu dev=\"1\"/></pci>\n"
                   "<pci busid=\"0000:08:00.0\"><gpu dev=\"1\"/></pci>\n"
                   "</cpu>\n</system>\n",
                   4, "two GPUs have dev 1 (lines 3 and 4)");
  TOPO_PARSE_FAILS("<system>\n<cpu>\n<pci busid=\"0000:07:00.0\">\n<gpu dev=\"zero\"/>\n"
                   "</pci>\n</cpu>\n</system>\n",
                   4, "dev must be a whole number >= 0, not 'zero'");
  TOPO_PARSE_FAILS("<system>\n<cpu>\n<pci busid=\"0000:07:00.0\">\n<gpu dev=\"-1\"/>\n"
                   "</pci>\n</cpu>\n</system>\n",
                   4, "not '-1'");
  TOPO_PARSE_FAILS(
      "<system>\n<cpu>\n<pci busid=\"0000:07:00.0\">\n<gpu dev=\"0\">\n"
      "<nvlink target=\"0000:08:00.0\" count=\"-2\"/>\n</gpu>\n</pci>\n</cpu>\n</system>\n",
      5, "count must be a whole number from 0 to 1024, not '-2'");
  TOPO_PARSE_FAILS(
      "<system>\n<cpu>\n<pci busid=\"0000:07:00.0\">\n<gpu dev=\"0\">\n\n"
      "<nvlink target=\"0000:08:00.0\" count=\"two\"/>\n</gpu>\n</pci>\n</cpu>\n</system>\n",
      6, "not 'two'");
  TOPO_PARSE_FAILS(
      "<system>\n<cpu>\n<pci busid=\"0000:07:00.0\">\n<gpu dev=\"0\">\n"
      "<nvlink target=\"0000:08:00.0\" count=\"\"/>\n</gpu>\n</pci>\n</cpu>\n</system>\n",
      5, "not ''");
  TOPO_PARSE_FAILS("<system>\n<cpu>\n<pci busid=\"0000:07:00.0\">\n<gpu dev=\"0\">\n"
                   "<nvlink target=\"0000:08:00.0\" count=\"1\" tclass=\"nvswitch\"/>\n</gpu>\n"
                   "</pci>\n</cpu>\n</system>\n",
                   5, "tclass must be a hex PCI class, not 'nvswitch'");
  /* An XML error inside a topology is reported the same way. */
  TOPO_PARSE_FAILS("<system>\n<cpu>\n<pci busid=\"0000:07:00.0\">\n<gpu dev=\"0\">\n</pci>\n", 5,
                   "mismatched closing tag: </pci> closes <gpu> opened at line 4");

  /* More than SC_MAX_LOCAL_RANKS GPUs: the error names the first one too many. */
  size_t cap = 64 * 1024;
  char *xml = malloc(cap);
  TEST_ASSERT(xml != NULL);
  size_t n = (size_t)snprintf(xml, cap, "<system>\n<cpu>\n");
  for (int i = 0; i <= SC_MAX_LOCAL_RANKS; i++)
    n += (size_t)snprintf(xml + n, cap - n,
                          "<pci busid=\"0000:%02x:00.0\"><gpu dev=\"%d\"/></pci>\n", i + 1, i);
  snprintf(xml + n, cap - n, "</cpu>\n</system>\n");
  TOPO_PARSE_FAILS(xml, SC_MAX_LOCAL_RANKS + 3, "more than 64 GPUs");
  /* Exactly SC_MAX_LOCAL_RANKS is fine. */
  char *last = strstr(xml, "<pci busid=\"0000:41:00.0\"");
  TEST_ASSERT(last != NULL);
  snprintf(last, cap - (size_t)(last - xml), "</cpu>\n</system>\n");
  sc_topo_t *t = topo_test_parse(xml);
  TEST_ASSERT(t->ngpus == SC_MAX_LOCAL_RANKS && t->dev[63] == 63);
  sc_topo_free(t);
  free(xml);

  /* Argument errors. */
  TEST_EXPECT_RESULT(sc_topo_parse_xml("<system/>", 9, "x", NULL), SYMCOMM_ERR_INVALID_ARGUMENT);
}

static void test_load_file_errors(void) {
  sc_topo_t *t = (sc_topo_t *)(uintptr_t)0x1;
  TEST_EXPECT_RESULT(sc_topo_load_file("/nonexistent/topo.xml", &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "cannot open topology file /nonexistent/topo.xml"),
              "%s", sc_error_last());
  TEST_EXPECT_RESULT(sc_topo_load_file("/", &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "/: not a regular file"), "%s", sc_error_last());
  TEST_EXPECT_RESULT(sc_topo_load_file(NULL, &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_EXPECT_RESULT(sc_topo_load_file("", &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(t == (sc_topo_t *)(uintptr_t)0x1, "output untouched on failure");

  /* A malformed file: the sentence starts with the path and the line. */
  char path[] = "/tmp/sc_test_topo_XXXXXX";
  int fd = mkstemp(path);
  TEST_ASSERT(fd >= 0);
  const char *bad = "<system>\n  <cpu numaid=\"0\">\n  </cpu\n</system>\n";
  TEST_ASSERT(write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad));
  close(fd);
  TEST_EXPECT_RESULT(sc_topo_load_file(path, &t), SYMCOMM_ERR_INVALID_ARGUMENT);
  char expected[128];
  snprintf(expected, sizeof(expected), "%s:3: closing tag </cpu> is not terminated", path);
  TEST_ASSERT(test_contains(sc_error_last(), expected), "%s", sc_error_last());
  unlink(path);
}

int main(void) {
  test_switch_links();
  test_direct_links();
  test_ignored_links();
  test_order();
  test_pci_paths();
  test_bcm_switch_folding();
  test_bare_gpu_pci();
  test_tolerated();
  test_errors();
  test_load_file_errors();
  printf("test_topo_nccl: OK\n");
  return 0;
}
