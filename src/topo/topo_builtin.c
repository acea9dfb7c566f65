/* Allocation and lookup of sc_topo_t, and the built-in topology of a simulated
 * host (one NVSwitch joining every GPU). */
#include <stdio.h>
#include <stdlib.h>

#include "topo/topo.h"
#include "util/log.h"

sc_result_t sc_topo_alloc(int ngpus, const char *source, sc_topo_t **topo) {
  if (topo == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "sc_topo_alloc: topo is NULL");
  if (ngpus < 1 || ngpus > SC_MAX_LOCAL_RANKS)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "a topology has 1 to %d GPUs, not %d",
                    SC_MAX_LOCAL_RANKS, ngpus);
  sc_topo_t *t = calloc(1, sizeof(*t));
  if (t == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_TOPO, "no memory for a topology of %d GPUs",
                    ngpus);
  t->ngpus = ngpus;
  for (int i = 0; i < ngpus; i++) {
    t->dev[i] = i;
    t->rank[i] = -1;
    for (int j = 0; j < ngpus; j++)
      t->link[i][j] = (uint8_t)(i == j ? SYMCOMM_LINK_SELF : SYMCOMM_LINK_SYS);
  }
  snprintf(t->source, sizeof(t->source), "%s", source == NULL ? "" : source);
  *topo = t;
  return SYMCOMM_OK;
}

void sc_topo_free(sc_topo_t *topo) { free(topo); }

int sc_topo_find(const sc_topo_t *topo, int64_t busid) {
  if (topo == NULL)
    return -1;
  for (int i = 0; i < topo->ngpus; i++)
    if (topo->busid[i] == busid)
      return i;
  return -1;
}

int sc_topo_find_dev(const sc_topo_t *topo, int dev) {
  if (topo == NULL)
    return -1;
  for (int i = 0; i < topo->ngpus; i++)
    if (topo->dev[i] == dev)
      return i;
  return -1;
}

sc_result_t sc_topo_builtin_switch(int ngpus, int domain, sc_topo_t **topo) {
  if (topo == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "sc_topo_builtin_switch: topo is NULL");
  if (domain < 0 || domain > 0xffff)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "PCI domain %d is outside 0..0xffff",
                    domain);
  sc_topo_t *t;
  SC_CHECK(sc_topo_alloc(ngpus, "builtin", &t));
  for (int i = 0; i < ngpus; i++) {
    /* "dddd:bb:00.0" with bus i + 1, as seed 003's fake devices number them. */
    t->busid[i] = sc_busid_with_domain((int64_t)(i + 1) << 12, domain);
    t->nvswitch[i] = 1;
    for (int j = 0; j < ngpus; j++) {
      if (i == j)
        continue;
      t->link[i][j] = SYMCOMM_LINK_NVLINK;
      t->nvlinks[i][j] = 1;
    }
  }
  *topo = t;
  return SYMCOMM_OK;
}

void sc_topo_set_host_domain(sc_topo_t *topo, int host_number) {
  if (topo == NULL)
    return;
  /* The host goes above the low byte of the domain, so that host 1 turns
   * "0000:07:00.0" into "0100:07:00.0" and real domains 0..255 stay distinct. */
  int host_bits = (host_number & 0xffff) << 8;
  for (int i = 0; i < topo->ngpus; i++) {
    int old = sc_busid_domain(topo->busid[i]);
    topo->busid[i] = sc_busid_with_domain(topo->busid[i], host_bits | (old & 0xff));
  }
}
