/* NCCL topology files (NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE) into sc_topo_t:
 *
 *   <system version="1">
 *     <cpu numaid="0" ...>                      a NUMA node and its host bridge
 *       <pci busid="0000:16:00.0" class="0x060400" ...>          a PCIe switch
 *         <pci busid="0000:18:00.0" class="0x030200" ...>        the GPU's device
 *           <gpu dev="0" sm="90" rank="0" gdr="1">
 *             <nvlink target="0000:07:00.0" count="5" tclass="0x068000"/>
 *
 * Only GPUs and the links between them are kept; NICs, nets, <c2c>,
 * <pcilink> and attributes nobody here reads are passed over. A GPU-class
 * <pci> without a <gpu> (cloud images ship such files and let NCCL fill in
 * the GPUs) still counts as a GPU, with no NVLink known. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topo/topo_internal.h"
#include "util/log.h"

#define SC_PCI_VENDOR_NVIDIA 0x10deu

typedef struct sc_gpu_scan {
  const char *name; /* of the file, for error sentences */
  sc_topo_xml_gpu_t gpus[SC_MAX_LOCAL_RANKS];
  int ngpus;
  sc_topo_pci_chain_t chains[SC_MAX_LOCAL_RANKS]; /* of gpus[i].pci, once ordered */
} sc_gpu_scan_t;

static sc_result_t sc_xml_topo_fail(const char *name, int line, const char *what) {
  return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "%s:%d: %s", name, line, what);
}

static int sc_gpu_line(const sc_topo_xml_gpu_t *g) {
  return g->gpu != NULL ? g->gpu->line : g->pci->line;
}

/* A <pci> of display class (0x03xxxx) from NVIDIA, or of unknown vendor,
 * with neither a <gpu> nor a further <pci> inside: a GPU the file names
 * without detail. Other display devices (a server's BMC VGA) say their own
 * vendor and are skipped. */
static bool sc_is_bare_gpu_pci(const sc_xml_node_t *pci) {
  uint64_t cls, vendor;
  if (!sc_xml_is(pci, "pci") || !sc_xml_value_hex(sc_xml_attr(pci, "class"), &cls) ||
      (cls >> 16) != 0x03)
    return false;
  const char *vendor_text = sc_xml_attr(pci, "vendor");
  if (vendor_text != NULL &&
      (!sc_xml_value_hex(vendor_text, &vendor) || vendor != SC_PCI_VENDOR_NVIDIA))
    return false;
  for (const sc_xml_node_t *c = pci->first_child; c != NULL; c = c->next_sibling)
    if (sc_xml_is(c, "gpu") || sc_xml_is(c, "pci"))
      return false;
  return true;
}

static sc_result_t sc_scan_add(sc_gpu_scan_t *s, const sc_xml_node_t *pci,
                               const sc_xml_node_t *gpu) {
  char what[256];
  int line = gpu != NULL ? gpu->line : pci->line;
  const char *text = sc_xml_attr(pci, "busid");
  int64_t busid;
  if (text == NULL)
    return sc_xml_topo_fail(s->name, line,
                            "<gpu> is inside a <pci> without a busid attribute: the bus id "
                            "names the GPU");
  if (!sc_busid_scan(text, &busid)) {
    snprintf(what, sizeof(what), "bad bus id '%s' in <pci busid>: expected dddd:bb:dd.f (hex)",
             text);
    return sc_xml_topo_fail(s->name, pci->line, what);
  }
  for (int i = 0; i < s->ngpus; i++) {
    if (s->gpus[i].busid == busid) {
      snprintf(what, sizeof(what),
               "duplicate GPU bus id %s: already given to the GPU at line %d (one <gpu> per "
               "<pci>, one <pci> per bus id)",
               text, sc_gpu_line(&s->gpus[i]));
      return sc_xml_topo_fail(s->name, line, what);
    }
  }
  if (s->ngpus == SC_MAX_LOCAL_RANKS) {
    snprintf(what, sizeof(what), "more than %d GPUs in one topology", SC_MAX_LOCAL_RANKS);
    return sc_xml_topo_fail(s->name, line, what);
  }
  long dev = -1;
  const char *dev_text = gpu == NULL ? NULL : sc_xml_attr(gpu, "dev");
  if (dev_text != NULL && !sc_xml_value_int(dev_text, 0, INT_MAX, &dev)) {
    snprintf(what, sizeof(what), "<gpu> dev must be a whole number >= 0, not '%s'", dev_text);
    return sc_xml_topo_fail(s->name, gpu->line, what);
  }
  s->gpus[s->ngpus++] = (sc_topo_xml_gpu_t){pci, gpu, busid, (int)dev};
  return SYMCOMM_OK;
}

/* Collects the GPUs under `node` in document order. The depth is bounded by
 * SC_XML_MAX_DEPTH, so recursion is safe. */
static sc_result_t sc_scan_tree(sc_gpu_scan_t *s, const sc_xml_node_t *node) {
  for (const sc_xml_node_t *c = node->first_child; c != NULL; c = c->next_sibling) {
    if (sc_xml_is(c, "gpu")) {
      if (!sc_xml_is(node, "pci")) {
        char what[160];
        snprintf(what, sizeof(what),
                 "<gpu> must be inside a <pci busid=\"...\"> element, not inside <%s>", node->name);
        return sc_xml_topo_fail(s->name, c->line, what);
      }
      SC_CHECK(sc_scan_add(s, node, c));
      continue; /* what is inside a <gpu> (nvlinks) is read later */
    }
    if (sc_is_bare_gpu_pci(c))
      SC_CHECK(sc_scan_add(s, c, NULL));
    SC_CHECK(sc_scan_tree(s, c));
  }
  return SYMCOMM_OK;
}

/* By dev when every GPU has one (then they must differ), else as listed. */
static sc_result_t sc_order_gpus(sc_gpu_scan_t *s, bool *by_dev) {
  *by_dev = true;
  for (int i = 0; i < s->ngpus; i++)
    *by_dev = *by_dev && s->gpus[i].dev >= 0;
  if (!*by_dev)
    return SYMCOMM_OK;
  for (int i = 1; i < s->ngpus; i++) {
    sc_topo_xml_gpu_t g = s->gpus[i];
    int j = i;
    for (; j > 0 && s->gpus[j - 1].dev > g.dev; j--)
      s->gpus[j] = s->gpus[j - 1];
    s->gpus[j] = g;
  }
  for (int i = 1; i < s->ngpus; i++) {
    if (s->gpus[i].dev == s->gpus[i - 1].dev) {
      const sc_topo_xml_gpu_t *a = &s->gpus[i - 1], *b = &s->gpus[i];
      char what[160];
      snprintf(what, sizeof(what), "two GPUs have dev %d (lines %d and %d)", b->dev, sc_gpu_line(a),
               sc_gpu_line(b));
      return sc_xml_topo_fail(
          s->name, sc_gpu_line(a) > sc_gpu_line(b) ? sc_gpu_line(a) : sc_gpu_line(b), what);
    }
  }
  return SYMCOMM_OK;
}

static sc_result_t sc_topo_from_tree(const char *name, const sc_xml_node_t *root, sc_gpu_scan_t *s,
                                     sc_topo_t **out) {
  char what[160];
  if (!sc_xml_is(root, "system")) {
    snprintf(what, sizeof(what), "the root element is <%s>; a topology file starts with <system>",
             root->name);
    return sc_xml_topo_fail(name, root->line, what);
  }
  SC_CHECK(sc_scan_tree(s, root));
  if (s->ngpus == 0)
    return sc_xml_topo_fail(name, root->line,
                            "no GPU in <system>: expected <gpu> elements inside <pci busid=...>");
  bool by_dev;
  SC_CHECK(sc_order_gpus(s, &by_dev));
  sc_topo_t *topo;
  SC_CHECK(sc_topo_alloc(s->ngpus, name, &topo));
  for (int i = 0; i < s->ngpus; i++) {
    topo->busid[i] = s->gpus[i].busid;
    topo->dev[i] = by_dev ? s->gpus[i].dev : i;
  }
  sc_result_t result = sc_topo_xml_nvlinks(name, s->gpus, topo);
  if (result != SYMCOMM_OK) {
    sc_topo_free(topo);
    return result;
  }
  for (int g = 0; g < topo->ngpus; g++)
    sc_topo_pci_chain(s->gpus[g].pci, &s->chains[g]);
  for (int a = 0; a < topo->ngpus; a++)
    for (int b = 0; b < topo->ngpus; b++)
      if (a != b && topo->link[a][b] != SYMCOMM_LINK_NVLINK)
        topo->link[a][b] = (uint8_t)sc_topo_pci_path(&s->chains[a], &s->chains[b]);
  *out = topo;
  return SYMCOMM_OK;
}

sc_result_t sc_topo_parse_xml(const char *text, size_t len, const char *name, sc_topo_t **topo) {
  if (name == NULL)
    name = "(topology text)";
  if (topo == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "%s: no output given", name);
  sc_xml_doc_t *doc;
  SC_CHECK(sc_xml_parse(text, len, name, &doc));
  sc_gpu_scan_t *scan = calloc(1, sizeof(*scan));
  sc_result_t result = SYMCOMM_OK;
  if (scan == NULL) {
    result = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_TOPO, "%s: no memory", name);
    goto free_doc;
  }
  scan->name = name;
  sc_topo_t *parsed = NULL;
  SC_CHECK_GOTO(sc_topo_from_tree(name, sc_xml_root(doc), scan, &parsed), result, free_scan);
  SC_INFO(SC_TOPO, "%s: %d GPUs", name, parsed->ngpus);
  *topo = parsed;
free_scan:
  free(scan);
free_doc:
  sc_xml_free(doc);
  return result;
}

/* Reads the whole file, refusing more than a topology file can be. */
static sc_result_t sc_read_file(const char *path, char **text, size_t *len) {
  /* Non-blocking, so that a FIFO with no writer is refused below instead of
   * holding the open; a regular file reads the same either way. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "cannot open topology file %s",
                          path);
  sc_result_t result = SYMCOMM_OK;
  char *buf = NULL;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    result = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_TOPO, "cannot stat topology file %s", path);
    goto out;
  }
  if (!S_ISREG(st.st_mode)) {
    result = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO,
                      "%s: not a regular file, so not a topology file", path);
    goto out;
  }
  if ((uint64_t)st.st_size > SC_XML_MAX_BYTES) {
    result = SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO,
                      "%s: %lld bytes, more than the %zu MiB a topology file may have", path,
                      (long long)st.st_size, SC_XML_MAX_BYTES >> 20);
    goto out;
  }
  size_t size = (size_t)st.st_size;
  buf = malloc(size + 1);
  if (buf == NULL) {
    result =
        SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_TOPO, "%s: no memory for %zu bytes", path, size);
    goto out;
  }
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      result = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_TOPO, "cannot read topology file %s", path);
      goto out;
    }
    if (n == 0) /* the file shrank while we read it: parse what is there */
      break;
    got += (size_t)n;
  }
  buf[got] = '\0';
  *text = buf;
  *len = got;
  buf = NULL;
out:
  free(buf);
  close(fd);
  return result;
}

sc_result_t sc_topo_load_file(const char *path, sc_topo_t **topo) {
  if (path == NULL || path[0] == '\0' || topo == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO,
                    "sc_topo_load_file: a path and an output are needed");
  char *text = NULL;
  size_t len = 0;
  SC_CHECK(sc_read_file(path, &text, &len));
  sc_result_t result = sc_topo_parse_xml(text, len, path, topo);
  free(text);
  return result;
}
