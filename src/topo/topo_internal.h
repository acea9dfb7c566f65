/* What the files of src/topo/ share with one another and with their unit
 * tests, but not with the layers above (they use topo.h). */
#ifndef SC_TOPO_TOPO_INTERNAL_H
#define SC_TOPO_TOPO_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "topo/topo.h"
#include "topo/xml.h"

/* sc_busid_parse without the error report, for callers that word the error
 * themselves (with a file and line). */
bool sc_busid_scan(const char *text, int64_t *busid);

/* Numbers in attribute values. Decimal: optional '-', digits only, within
 * [min, max]. Hex: optional "0x", then 1 to 16 hex digits. */
bool sc_xml_value_int(const char *text, long min, long max, long *value);
bool sc_xml_value_hex(const char *text, uint64_t *value);

/* A GPU found in a topology file. */
typedef struct sc_topo_xml_gpu {
  const sc_xml_node_t *pci; /* the <pci> element whose busid is the GPU's */
  const sc_xml_node_t *gpu; /* its <gpu> child; NULL for a GPU-class <pci> the file left bare */
  int64_t busid;
  int dev; /* the "dev" attribute, -1 when absent */
} sc_topo_xml_gpu_t;

/* NVLinks counted per GPU of a topology before they become its matrix. */
typedef struct sc_nvlink_tally {
  int direct[SC_MAX_LOCAL_RANKS][SC_MAX_LOCAL_RANKS]; /* [from][to], as listed by `from` */
  int to_switch[SC_MAX_LOCAL_RANKS];                  /* links of a GPU to any NVSwitch */
} sc_nvlink_tally_t;

/* topo->link / nvlinks / nvswitch from a tally over topo's GPUs: a pair's
 * direct links (the larger of the two GPUs' counts) plus, when both reach
 * NVSwitches, the smaller of their switch link counts (as nvidia-smi shows
 * NV18 for H100s on NVSwitches). */
void sc_topo_apply_nvlinks(const sc_nvlink_tally_t *tally, sc_topo_t *topo);

/* Fills topo->link / nvlinks for every pair joined by NVLink, from the
 * <nvlink> children of gpus[i].gpu (gpus[i] is topo GPU i). `name` starts the
 * error sentences. */
sc_result_t sc_topo_xml_nvlinks(const char *name, const sc_topo_xml_gpu_t *gpus, sc_topo_t *topo);

/* Where a GPU's <pci> sits: its ancestors, root first, the <pci> last, and
 * which of them are sub-switches folded into their parent switch. */
#define SC_TOPO_PCI_CHAIN_MAX SC_XML_MAX_DEPTH
typedef struct sc_topo_pci_chain {
  const sc_xml_node_t *node[SC_TOPO_PCI_CHAIN_MAX];
  bool folded[SC_TOPO_PCI_CHAIN_MAX];
  int length;
} sc_topo_pci_chain_t;

void sc_topo_pci_chain(const sc_xml_node_t *pci, sc_topo_pci_chain_t *chain);

/* The PCI path type (PIX, PXB, PHB or SYS) between two GPUs, from where their
 * <pci> elements sit in the tree. */
symcomm_link_t sc_topo_pci_path(const sc_topo_pci_chain_t *a, const sc_topo_pci_chain_t *b);

#endif
