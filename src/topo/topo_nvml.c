/* NVML's answers into a topology: the host's GPUs by bus id, each active
 * NVLink counted towards the GPU or the NVSwitch at its far end, and the PCIe
 * path (NVML's common ancestor) for pairs without NVLink. Only the function
 * table is called, never NVML itself (see nvml_api.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/nvml_api.h"
#include "topo/topo_internal.h"
#include "util/log.h"

typedef struct sc_nvml_scan {
  const sc_nvml_fns_t *nvml;
  sc_nvml_device_t device[SC_MAX_LOCAL_RANKS];
  sc_nvlink_tally_t tally;
  bool path_unknown_logged;
} sc_nvml_scan_t;

bool sc_topo_why(char *why, size_t why_len, const char *fmt, ...) {
  if (why != NULL && why_len > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
  }
  return false;
}

static const char *sc_nvml_text(const sc_nvml_fns_t *nvml, sc_nvml_return_t result) {
  const char *text = nvml->error_string != NULL ? nvml->error_string(result) : NULL;
  return text != NULL ? text : "unknown NVML error";
}

/* NVML fills fixed arrays that need not end in a NUL. */
static bool sc_nvml_busid(const sc_nvml_pci_info_t *pci, int64_t *busid) {
  char text[sizeof(pci->busId) + 1];
  snprintf(text, sizeof(text), "%.*s", (int)sizeof(pci->busId), pci->busId);
  if (sc_busid_scan(text, busid))
    return true;
  snprintf(text, sizeof(text), "%.*s", (int)sizeof(pci->busIdLegacy), pci->busIdLegacy);
  return sc_busid_scan(text, busid);
}

/* Counts one active link of GPU g by where it leads. */
static void sc_nvml_count_link(sc_nvml_scan_t *s, const sc_topo_t *topo, int g, unsigned link) {
  const sc_nvml_fns_t *nvml = s->nvml;
  char mine[32];
  sc_busid_format(topo->busid[g], mine, sizeof(mine));
  sc_nvml_pci_info_t pci;
  memset(&pci, 0, sizeof(pci));
  sc_nvml_return_t r = nvml->nvlink_remote_pci(s->device[g], link, &pci);
  if (r != SC_NVML_SUCCESS) {
    SC_INFO(SC_TOPO, "NVML: GPU %s NVLink %u is active but its far end is unknown (%s): not counted",
            mine, link, sc_nvml_text(nvml, r));
    return;
  }
  int type = SC_NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
  if (nvml->nvlink_remote_type == NULL ||
      nvml->nvlink_remote_type(s->device[g], link, &type) != SC_NVML_SUCCESS)
    type = SC_NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
  if (type == SC_NVML_NVLINK_DEVICE_TYPE_SWITCH) {
    /* Which switch does not matter: every GPU on the switches reaches every other. */
    s->tally.to_switch[g]++;
    return;
  }
  if (type == SC_NVML_NVLINK_DEVICE_TYPE_IBMNPU) /* a path to a POWER9 CPU, not to a GPU */
    return;
  int64_t remote;
  int peer = sc_nvml_busid(&pci, &remote) ? sc_topo_find(topo, remote) : -1;
  if (peer == g) {
    SC_INFO(SC_TOPO, "NVML: GPU %s NVLink %u leads to itself: not counted", mine, link);
  } else if (peer >= 0) {
    s->tally.direct[g][peer]++;
  } else if (type == SC_NVML_NVLINK_DEVICE_TYPE_GPU) {
    SC_INFO(SC_TOPO, "NVML: GPU %s NVLink %u leads to GPU %.32s, which NVML does not list: "
            "not counted", mine, link, pci.busId);
  } else {
    /* An old driver cannot say what is there; what is not one of the GPUs is
     * a switch (NCCL reads such links the same way). */
    s->tally.to_switch[g]++;
  }
}

static symcomm_link_t sc_nvml_pci_path(sc_nvml_scan_t *s, int a, int b) {
  const sc_nvml_fns_t *nvml = s->nvml;
  int level = -1;
  sc_nvml_return_t r = SC_NVML_ERROR_NOT_SUPPORTED;
  if (nvml->common_ancestor != NULL)
    r = nvml->common_ancestor(s->device[a], s->device[b], &level);
  if (r != SC_NVML_SUCCESS) {
    if (!s->path_unknown_logged)
      SC_INFO(SC_TOPO, "NVML: no PCIe path between GPUs (%s): SYS assumed for pairs without NVLink",
              nvml->common_ancestor == NULL ? "nvmlDeviceGetTopologyCommonAncestor is missing"
                                            : sc_nvml_text(nvml, r));
    s->path_unknown_logged = true;
    return SYMCOMM_LINK_SYS;
  }
  if (level <= SC_NVML_TOPOLOGY_SINGLE) /* INTERNAL: two GPUs of one board */
    return SYMCOMM_LINK_PIX;
  if (level <= SC_NVML_TOPOLOGY_MULTIPLE)
    return SYMCOMM_LINK_PXB;
  /* nvidia-smi's NODE (host bridges of one NUMA node) is NCCL's PHB too. */
  if (level <= SC_NVML_TOPOLOGY_NODE)
    return SYMCOMM_LINK_PHB;
  return SYMCOMM_LINK_SYS;
}

/* The GPUs, by NVML index, with their bus ids. */
static bool sc_nvml_list_gpus(sc_nvml_scan_t *s, sc_topo_t *topo, char *why, size_t why_len) {
  const sc_nvml_fns_t *nvml = s->nvml;
  for (int i = 0; i < topo->ngpus; i++) {
    sc_nvml_return_t r = nvml->device_by_index((unsigned)i, &s->device[i]);
    if (r != SC_NVML_SUCCESS)
      return sc_topo_why(why, why_len, "nvmlDeviceGetHandleByIndex_v2(%d): %s", i,
                         sc_nvml_text(nvml, r));
    sc_nvml_pci_info_t pci;
    memset(&pci, 0, sizeof(pci));
    if ((r = nvml->pci_info(s->device[i], &pci)) != SC_NVML_SUCCESS)
      return sc_topo_why(why, why_len, "nvmlDeviceGetPciInfo_v3 of GPU %d: %s", i,
                         sc_nvml_text(nvml, r));
    int64_t busid;
    if (!sc_nvml_busid(&pci, &busid))
      return sc_topo_why(why, why_len, "GPU %d: NVML's bus id '%.32s' is not dddd:bb:dd.f", i,
                         pci.busId);
    int twin = sc_topo_find(topo, busid);
    if (twin >= 0 && twin < i) {
      char text[32];
      sc_busid_format(busid, text, sizeof(text));
      return sc_topo_why(why, why_len, "NVML lists bus id %s for GPUs %d and %d", text, twin, i);
    }
    topo->busid[i] = busid;
  }
  return true;
}

bool sc_topo_from_nvml(const sc_nvml_fns_t *nvml, sc_topo_t **out, char *why, size_t why_len) {
  unsigned count = 0;
  sc_nvml_return_t r = nvml->device_count(&count);
  if (r != SC_NVML_SUCCESS)
    return sc_topo_why(why, why_len, "nvmlDeviceGetCount_v2: %s", sc_nvml_text(nvml, r));
  if (count == 0)
    return sc_topo_why(why, why_len, "NVML lists no GPU");
  if (count > SC_MAX_LOCAL_RANKS)
    return sc_topo_why(why, why_len, "NVML lists %u GPUs, more than the %d of a host symcomm knows",
                       count, SC_MAX_LOCAL_RANKS);
  sc_nvml_scan_t *s = calloc(1, sizeof(*s));
  sc_topo_t *topo = NULL;
  if (s == NULL || sc_topo_alloc((int)count, "nvml", &topo) != SYMCOMM_OK) {
    free(s);
    return sc_topo_why(why, why_len, "no memory for a topology of %u GPUs", count);
  }
  s->nvml = nvml;
  /* Until the bus ids are read, none may match a GPU not yet listed. */
  for (int i = 0; i < topo->ngpus; i++)
    topo->busid[i] = -1;
  bool ok = sc_nvml_list_gpus(s, topo, why, why_len);
  for (int g = 0; ok && g < topo->ngpus; g++) {
    for (unsigned link = 0; link < SC_NVML_NVLINK_MAX_LINKS; link++) {
      /* A GPU without NVLink, or with fewer links, refuses the query. */
      int active = 0;
      if (nvml->nvlink_state(s->device[g], link, &active) == SC_NVML_SUCCESS &&
          active == SC_NVML_FEATURE_ENABLED)
        sc_nvml_count_link(s, topo, g, link);
    }
  }
  if (ok) {
    sc_topo_apply_nvlinks(&s->tally, topo);
    for (int a = 0; a < topo->ngpus; a++)
      for (int b = 0; b < topo->ngpus; b++)
        if (a != b && topo->link[a][b] != SYMCOMM_LINK_NVLINK)
          topo->link[a][b] = (uint8_t)sc_nvml_pci_path(s, a, b);
  }
  free(s);
  if (!ok) {
    sc_topo_free(topo);
    return false;
  }
  *out = topo;
  return true;
}

/* Reads one decimal index of CUDA_VISIBLE_DEVICES; false for anything else. */
static bool sc_visible_index(const char *text, size_t len, long *index) {
  if (len == 0 || len > 9)
    return false;
  long v = 0;
  for (size_t i = 0; i < len; i++) {
    if (!isdigit((unsigned char)text[i]))
      return false;
    v = v * 10 + (text[i] - '0');
  }
  *index = v;
  return true;
}

bool sc_topo_select_visible(const sc_topo_t *host, const char *visible, sc_topo_t **out,
                            char *why, size_t why_len) {
  int pick[SC_MAX_LOCAL_RANKS];
  int n = 0;
  if (visible == NULL) {
    for (; n < host->ngpus; n++)
      pick[n] = n;
  }
  for (const char *p = visible; p != NULL && *p != '\0';) {
    size_t len = strcspn(p, ",");
    if (strncmp(p, "GPU-", 4) == 0 || strncmp(p, "MIG-", 4) == 0)
      return sc_topo_why(why, why_len,
                         "CUDA_VISIBLE_DEVICES=%s: '%.*s' is a UUID, which is not matched to "
                         "NVML's GPUs here", visible, (int)len, p);
    long index;
    if (!sc_visible_index(p, len, &index) || index >= host->ngpus) {
      /* CUDA ignores an invalid entry and every one after it. */
      SC_INFO(SC_TOPO, "CUDA_VISIBLE_DEVICES=%s: '%.*s' is not one of NVML's %d GPUs; it and "
              "the rest are ignored, as CUDA does", visible, (int)len, p, host->ngpus);
      break;
    }
    for (int k = 0; k < n; k++)
      if (pick[k] == (int)index)
        return sc_topo_why(why, why_len, "CUDA_VISIBLE_DEVICES=%s names GPU %ld twice", visible,
                           index);
    pick[n++] = (int)index;
    p += len;
    p += *p == ',';
  }
  if (n == 0)
    return sc_topo_why(why, why_len, "CUDA_VISIBLE_DEVICES=%s leaves no GPU visible", visible);
  sc_topo_t *topo;
  if (sc_topo_alloc(n, host->source, &topo) != SYMCOMM_OK)
    return sc_topo_why(why, why_len, "no memory for a topology of %d GPUs", n);
  for (int a = 0; a < n; a++) {
    topo->busid[a] = host->busid[pick[a]];
    topo->nvswitch[a] = host->nvswitch[pick[a]];
    for (int b = 0; b < n; b++) {
      topo->link[a][b] = host->link[pick[a]][pick[b]];
      topo->nvlinks[a][b] = host->nvlinks[pick[a]][pick[b]];
    }
  }
  *out = topo;
  return true;
}
