/* The GPUs of one host and the best path between each pair: read from an
 * NCCL-format topology XML, built in for simulated hosts, or assembled from what
 * the ranks of a communicator report. This struct is what the public
 * symcomm_topo_t points to. */
#ifndef SC_TOPO_TOPO_H
#define SC_TOPO_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "util/rank_limit.h"

struct symcomm_topo {
  int ngpus;
  int64_t busid[SC_MAX_LOCAL_RANKS]; /* numeric PCI bus id, see sc_busid_parse */
  int dev[SC_MAX_LOCAL_RANKS];       /* CUDA device index ("dev" in the XML, else the GPU's position) */
  int rank[SC_MAX_LOCAL_RANKS];      /* rank of a communicator using the GPU, -1 if none/unknown */
  uint8_t link[SC_MAX_LOCAL_RANKS][SC_MAX_LOCAL_RANKS];    /* symcomm_link_t; SELF on the diagonal */
  uint8_t nvlinks[SC_MAX_LOCAL_RANKS][SC_MAX_LOCAL_RANKS]; /* NVLink count when link == NVLINK */
  /* NVLinks from each GPU to NVSwitches (0: none, or not known): already counted
   * in nvlinks; kept so that a written file says "through a switch" again. */
  uint8_t nvswitch[SC_MAX_LOCAL_RANKS];
  char source[256];                                    /* file path, "builtin" or "communicator" */
};
typedef struct symcomm_topo sc_topo_t;

/* ---- PCI bus ids. Text "dddd:bb:dd.f" (domain, bus, device, function, hex);
 * the number is the hex digits read as one value, as NCCL does, so
 * "0000:07:00.0" -> 0x7000 and "0100:01:00.0" -> 0x10001000 (domain << 20 |
 * bus << 12 | device << 4 | function). Case-insensitive; the domain may have 1
 * to 8 digits (nvidia-smi prints 8) and a missing one ("07:00.0") means 0. */
sc_result_t sc_busid_parse(const char *text, int64_t *busid);
void sc_busid_format(int64_t busid, char *buf, size_t len); /* always "dddd:bb:dd.f", lower case */
int sc_busid_domain(int64_t busid);
int64_t sc_busid_with_domain(int64_t busid, int domain);

/* ---- loading. Reads an NCCL topology XML (<system> with <cpu>, nested <pci>,
 * <gpu>, <nvlink>, <nic>...; unknown elements and attributes are ignored).
 * A GPU is a <gpu> inside a <pci busid>, or a GPU-class <pci> (0x03xxxx, NVIDIA
 * or no vendor) with no <gpu> inside, as cloud images ship them.
 * GPUs are ordered by their "dev" attribute when every GPU has one, else by
 * document order. Links: NVLink count to a GPU target (<nvlink target=busid of
 * a GPU>) adds to that pair (listed by both GPUs or by one, the larger count
 * counts); <nvlink> to an NVSwitch (tclass 0x068000, or a target that is not a
 * GPU of the file) counts as switch links, and two GPUs that both reach
 * switches get min(switch links a, switch links b) more. Ignored: links of
 * tclass 0x068001 (to a POWER9 CPU), GPU-class targets not in the file, a GPU's
 * link to itself. Pairs without NVLink get the PCI path type from the tree:
 * PIX, PXB, PHB, SYS (Broadcom PEX sub-switches fold into their parent, as in
 * NCCL). Files are limited to 16 MiB, 64 levels of nesting, 64 GPUs.
 * Errors: INVALID_ARGUMENT with "<path>:<line>: <what is wrong>". */
sc_result_t sc_topo_load_file(const char *path, sc_topo_t **topo);
sc_result_t sc_topo_parse_xml(const char *text, size_t len, const char *name, sc_topo_t **topo);

/* ---- writing. The topology as an NCCL-format XML that sc_topo_load_file
 * reads back to the same GPUs (bus ids, dev), link matrix and NVSwitch links:
 * one <cpu> per group of GPUs that are not SYS to each other, PCIe switches
 * made up to give PIX / PXB / PHB pairs their path (their bus ids are in
 * domain ffff), <nvlink> to the GPU for direct links, to NCCL's switch target
 * (tclass 0x068000) for switch links. Pairs joined by NVLink have no PCIe path
 * in sc_topo_t, so theirs is not written. */
sc_result_t sc_topo_write_xml(const sc_topo_t *topo, FILE *out);
sc_result_t sc_topo_write_file(const sc_topo_t *topo, const char *path);

/* A simulated host with no topology file: ngpus GPUs on one NVSwitch (NV1
 * between every pair), bus ids "dddd:bb:00.0" with domain `domain` (0..0xffff) and bus
 * 1..ngpus. */
sc_result_t sc_topo_builtin_switch(int ngpus, int domain, sc_topo_t **topo);

/* 1 <= ngpus <= SC_MAX_LOCAL_RANKS; links SELF/SYS, ranks -1, dev = index. */
sc_result_t sc_topo_alloc(int ngpus, const char *source, sc_topo_t **topo);
void sc_topo_free(sc_topo_t *topo);

/* Index of the GPU with this bus id, -1 if absent. */
int sc_topo_find(const sc_topo_t *topo, int64_t busid);
/* Index of the GPU with this device number, -1 if absent. */
int sc_topo_find_dev(const sc_topo_t *topo, int dev);

/* Moves every bus id to PCI domain (host_number << 8 | old domain & 0xff) — how
 * a simulated host number (0..255) is encoded into the bus ids of its devices
 * (seed 003). Applying it twice with the same host changes nothing. */
void sc_topo_set_host_domain(sc_topo_t *topo, int host_number);

/* ---- classification (seed 002), over all GPUs of `topo`:
 * FULLY_CONNECTED: NVLink between every pair (a single GPU counts as fully
 * connected); HYBRID_CUBE_MESH: 8 GPUs, each with NVLink to exactly 4 others,
 * forming two fully connected quads joined by a perfect matching; PARTIAL: some
 * NVLink; NONE: no NVLink. */
symcomm_topo_class_t sc_topo_classify(const sc_topo_t *topo);

/* nvidia-smi's cell text for a link: "X", "NV4", "PIX", "PXB", "PHB", "SYS", "NET". */
void sc_topo_link_text(const sc_topo_t *topo, int a, int b, char *buf, size_t len);

#endif
