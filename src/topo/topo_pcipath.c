/* The PCIe path between two GPUs of a topology file, named as NCCL and
 * `nvidia-smi topo -m` name it, from where their <pci> elements sit:
 *   <system> / <cpu> (a NUMA node, its host bridge) / <pci> (PCIe switches,
 *   nested) / <pci busid=GPU> / <gpu>
 * PIX: the path crosses one PCIe switch; PXB: several switches, not the CPU;
 * PHB: it goes up to the CPU's host bridge; SYS: it crosses between CPUs. */
#include <stdint.h>
#include <string.h>

#include "topo/topo_internal.h"

/* Broadcom PEX Gen4/Gen5 switches show up in sysfs as a switch with
 * sub-switches below it, yet move data across all ports at full speed. NCCL
 * merges each such sub-switch into its parent, and so do we, or GPUs that
 * NCCL and nvidia-smi call PIX would read as PXB. A switch is known by its
 * (vendor, device, subsystem vendor, subsystem device); the top one and the
 * sub-switches differ only in the subsystem device's top digit. */
#define SC_PCI_VENDOR_BROADCOM 0x1000u

static int sc_bcm_generation(const sc_xml_node_t *pci, bool sub_switch) {
  uint64_t vendor, device, sub_vendor, sub_device;
  if (!sc_xml_value_hex(sc_xml_attr(pci, "vendor"), &vendor) ||
      !sc_xml_value_hex(sc_xml_attr(pci, "device"), &device) ||
      !sc_xml_value_hex(sc_xml_attr(pci, "subsystem_vendor"), &sub_vendor) ||
      !sc_xml_value_hex(sc_xml_attr(pci, "subsystem_device"), &sub_device))
    return 0;
  if (vendor != SC_PCI_VENDOR_BROADCOM || sub_vendor != SC_PCI_VENDOR_BROADCOM)
    return 0;
  if (device == 0xc010 && (sub_device & 0xf000) == 0xa000)
    return 4;
  if (device == 0xc030 && (sub_device & 0xf000) == (sub_switch ? 0x1000u : 0x0000u))
    return 5;
  return 0;
}

void sc_topo_pci_chain(const sc_xml_node_t *pci, sc_topo_pci_chain_t *chain) {
  int n = 0;
  for (const sc_xml_node_t *x = pci; x != NULL; x = x->parent)
    n++;
  if (n > SC_TOPO_PCI_CHAIN_MAX) /* the XML reader bounds the depth; be safe anyway */
    n = SC_TOPO_PCI_CHAIN_MAX;
  chain->length = n;
  const sc_xml_node_t *x = pci;
  for (int i = n - 1; i >= 0; i--, x = x->parent)
    chain->node[i] = x;
  /* Top down, so that a sub-switch folds only into a switch that is not
   * itself folded: one level is merged, as in NCCL. */
  for (int i = 0; i < n; i++) {
    chain->folded[i] = false;
    if (i == 0 || chain->folded[i - 1] || !sc_xml_is(chain->node[i], "pci") ||
        !sc_xml_is(chain->node[i - 1], "pci"))
      continue;
    int gen = sc_bcm_generation(chain->node[i - 1], false);
    chain->folded[i] = gen != 0 && sc_bcm_generation(chain->node[i], true) == gen;
  }
}

static const sc_xml_node_t *sc_chain_cpu(const sc_topo_pci_chain_t *c) {
  for (int i = c->length - 1; i >= 0; i--)
    if (sc_xml_is(c->node[i], "cpu"))
      return c->node[i];
  return NULL;
}

/* Two <cpu> elements are one NUMA node when they carry the same numaid (some
 * files list a node twice, once for GPUs and once for NICs). */
static bool sc_same_cpu(const sc_xml_node_t *a, const sc_xml_node_t *b) {
  if (a == NULL || b == NULL)
    return false;
  if (a == b)
    return true;
  long na, nb;
  return sc_xml_value_int(sc_xml_attr(a, "numaid"), 0, INT32_MAX, &na) &&
         sc_xml_value_int(sc_xml_attr(b, "numaid"), 0, INT32_MAX, &nb) && na == nb;
}

/* Switches a chain crosses below position `common`, not counting its last
 * element (the GPU's own <pci>) nor folded sub-switches. */
static int sc_switches_below(const sc_topo_pci_chain_t *c, int common) {
  int n = 0;
  for (int i = common + 1; i < c->length - 1; i++)
    n += sc_xml_is(c->node[i], "pci") && !c->folded[i];
  return n;
}

symcomm_link_t sc_topo_pci_path(const sc_topo_pci_chain_t *a, const sc_topo_pci_chain_t *b) {
  int common = -1; /* the deepest element both chains share */
  while (common + 1 < a->length && common + 1 < b->length &&
         a->node[common + 1] == b->node[common + 1])
    common++;
  const sc_xml_node_t *lca = common >= 0 ? a->node[common] : NULL;
  if (sc_xml_is(lca, "cpu"))
    return SYMCOMM_LINK_PHB;
  if (!sc_xml_is(lca, "pci"))
    return sc_same_cpu(sc_chain_cpu(a), sc_chain_cpu(b)) ? SYMCOMM_LINK_PHB : SYMCOMM_LINK_SYS;
  /* The common switch is crossed too, unless it is one of the GPUs' own
   * elements; a folded one stands for its parent, which the path then
   * crosses instead. */
  int switches = sc_switches_below(a, common) + sc_switches_below(b, common);
  if (common != a->length - 1 && common != b->length - 1)
    switches++;
  return switches <= 1 ? SYMCOMM_LINK_PIX : SYMCOMM_LINK_PXB;
}
