/* NVLink counts between the GPUs of a topology file, from the <nvlink>
 * children of each <gpu>:
 *   <nvlink target="0000:c3:00.0" count="2" tclass="0x068000"/>
 * tclass is the PCI class of the far end, as NCCL writes it: 0x068000 an
 * NVSwitch, 0x068001 a CPU (POWER9), 0x03xxxx a GPU. */
#include <stdlib.h>

#include "topo/topo_internal.h"
#include "util/log.h"

#define SC_PCI_CLASS_NVSWITCH 0x068000u
#define SC_PCI_CLASS_NVLINK_CPU 0x068001u
#define SC_PCI_CLASS_IS_DISPLAY(c) (((c) >> 16) == 0x03u) /* GPUs are 0x0300xx / 0x0302xx */
/* No GPU has more links than this; anything larger is a broken file. */
#define SC_NVLINK_MAX_COUNT 1024

static sc_result_t sc_nvlink_fail(const char *name, int line, const char *what, const char *value) {
  return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "%s:%d: %s '%s'", name, line, what, value);
}

/* Adds one <nvlink> of GPU `from` to the tally. */
static sc_result_t sc_nvlink_add(const char *name, const sc_xml_node_t *link, int from,
                                 const sc_topo_t *topo, sc_nvlink_tally_t *tally) {
  long count = 1; /* hand-written files often list one element per link */
  const char *text = sc_xml_attr(link, "count");
  if (text != NULL && !sc_xml_value_int(text, 0, SC_NVLINK_MAX_COUNT, &count))
    return sc_nvlink_fail(name, link->line,
                          "<nvlink> count must be a whole number from 0 to 1024, not", text);
  uint64_t tclass = 0;
  bool has_class = false;
  text = sc_xml_attr(link, "tclass");
  if (text != NULL) {
    if (!sc_xml_value_hex(text, &tclass))
      return sc_nvlink_fail(name, link->line, "<nvlink> tclass must be a hex PCI class, not", text);
    has_class = true;
  }
  if (has_class && tclass == SC_PCI_CLASS_NVSWITCH) {
    tally->to_switch[from] += (int)count;
    return SYMCOMM_OK;
  }
  if (has_class && tclass == SC_PCI_CLASS_NVLINK_CPU) /* a path to the CPU, not to a GPU */
    return SYMCOMM_OK;
  const char *target = sc_xml_attr(link, "target");
  int64_t busid;
  bool parsed = sc_busid_scan(target, &busid);
  int to = parsed ? sc_topo_find(topo, busid) : -1;
  if (to == from) {
    /* Some cloud images describe a GPU's NVLink bridge as a link to itself. */
    SC_INFO(SC_TOPO, "%s:%d: <nvlink> from GPU %s to itself ignored", name, link->line, target);
  } else if (to >= 0) {
    tally->direct[from][to] += (int)count;
  } else if (has_class && SC_PCI_CLASS_IS_DISPLAY(tclass)) {
    /* A GPU the file does not list (NCCL drops GPUs nobody uses), so no
     * link of ours; treating it as a switch would invent links. */
    SC_INFO(SC_TOPO, "%s:%d: <nvlink> to GPU %s, which is not in the file, ignored", name,
            link->line, target == NULL ? "(no target)" : target);
  } else {
    tally->to_switch[from] += (int)count;
  }
  return SYMCOMM_OK;
}

static int sc_min_int(int a, int b) { return a < b ? a : b; }
static int sc_max_int(int a, int b) { return a > b ? a : b; }

sc_result_t sc_topo_xml_nvlinks(const char *name, const sc_topo_xml_gpu_t *gpus, sc_topo_t *topo) {
  sc_nvlink_tally_t *tally = calloc(1, sizeof(*tally));
  if (tally == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_TOPO, "%s: no memory for NVLink counts", name);
  sc_result_t result = SYMCOMM_OK;
  for (int g = 0; g < topo->ngpus; g++) {
    if (gpus[g].gpu == NULL)
      continue;
    for (const sc_xml_node_t *c = gpus[g].gpu->first_child; c != NULL; c = c->next_sibling)
      if (sc_xml_is(c, "nvlink"))
        SC_CHECK_GOTO(sc_nvlink_add(name, c, g, topo, tally), result, out);
  }
  sc_topo_apply_nvlinks(tally, topo);
out:
  free(tally);
  return result;
}

void sc_topo_apply_nvlinks(const sc_nvlink_tally_t *tally, sc_topo_t *topo) {
  for (int a = 0; a < topo->ngpus; a++) {
    topo->nvswitch[a] = (uint8_t)sc_min_int(tally->to_switch[a], UINT8_MAX);
    for (int b = 0; b < topo->ngpus; b++) {
      if (a == b)
        continue;
      /* A pair may be listed by both GPUs (NCCL's dumps, NVML) or by one only
       * (hand-written files): the larger count is the pair's. */
      int links = sc_max_int(tally->direct[a][b], tally->direct[b][a]);
      /* Through NVSwitches, a pair gets what the less connected GPU has. */
      if (tally->to_switch[a] > 0 && tally->to_switch[b] > 0)
        links += sc_min_int(tally->to_switch[a], tally->to_switch[b]);
      if (links > 0) {
        topo->link[a][b] = SYMCOMM_LINK_NVLINK;
        topo->nvlinks[a][b] = (uint8_t)sc_min_int(links, UINT8_MAX);
      }
    }
  }
}
