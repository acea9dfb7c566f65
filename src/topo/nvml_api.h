/* The part of NVML that topology detection uses, declared here because
 * symcomm never includes nvml.h nor links libnvidia-ml: the library is opened
 * with dlopen at run time (nvml_load.c), so one build runs with or without a
 * GPU driver.
 *
 * Types, constants and prototypes match nvml.h of NVML API version 12 (CUDA
 * 12.x drivers, R525 and later); the functions used exist since R450 except
 * nvmlDeviceGetNvLinkRemoteDeviceType (R470), which may be missing. They are
 * reached through a table, so that the code that turns NVML's answers into
 * links (topo_nvml.c) runs against a fake table in the unit tests. */
#ifndef SC_TOPO_NVML_API_H
#define SC_TOPO_NVML_API_H

#include <stdbool.h>
#include <stddef.h>

#include "topo/topo.h"

typedef int sc_nvml_return_t; /* nvmlReturn_t */
#define SC_NVML_SUCCESS 0
#define SC_NVML_ERROR_INVALID_ARGUMENT 2 /* e.g. a link index beyond the GPU's links */
#define SC_NVML_ERROR_NOT_SUPPORTED 3    /* e.g. NVLink queries on a PCIe-only GPU */

typedef struct sc_nvml_device_st *sc_nvml_device_t; /* nvmlDevice_t */

/* nvmlPciInfo_t. busId is "00000000:1B:00.0" (8-digit domain, upper case);
 * busIdLegacy the same with a 4-digit domain. */
typedef struct sc_nvml_pci_info {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
} sc_nvml_pci_info_t;

/* NVML_NVLINK_MAX_LINKS (18 since Hopper; older GPUs answer INVALID_ARGUMENT
 * or NOT_SUPPORTED for the links they lack). */
#define SC_NVML_NVLINK_MAX_LINKS 18

#define SC_NVML_FEATURE_ENABLED 1 /* nvmlEnableState_t */

/* nvmlIntNvLinkDeviceType_t: what the far end of a link is. */
#define SC_NVML_NVLINK_DEVICE_TYPE_GPU 0x00
#define SC_NVML_NVLINK_DEVICE_TYPE_IBMNPU 0x01 /* a POWER9 CPU */
#define SC_NVML_NVLINK_DEVICE_TYPE_SWITCH 0x02
#define SC_NVML_NVLINK_DEVICE_TYPE_UNKNOWN 0xff

/* nvmlGpuTopologyLevel_t: the closest common ancestor of two GPUs. */
#define SC_NVML_TOPOLOGY_INTERNAL 0    /* one board */
#define SC_NVML_TOPOLOGY_SINGLE 10     /* one PCIe switch */
#define SC_NVML_TOPOLOGY_MULTIPLE 20   /* several switches, no host bridge */
#define SC_NVML_TOPOLOGY_HOSTBRIDGE 30 /* one host bridge */
#define SC_NVML_TOPOLOGY_NODE 40       /* host bridges of one NUMA node */
#define SC_NVML_TOPOLOGY_SYSTEM 50     /* across NUMA nodes */

/* One entry per NVML function, named after it. remote_device_type and
 * common_ancestor may be NULL (an old driver): links then go by bus id, and
 * PCIe paths are SYS. Enums are passed as int, their size in NVML's ABI. */
typedef struct sc_nvml_fns {
  sc_nvml_return_t (*init)(void);                                /* nvmlInit_v2 */
  sc_nvml_return_t (*shutdown)(void);                            /* nvmlShutdown */
  const char *(*error_string)(sc_nvml_return_t result);          /* nvmlErrorString */
  sc_nvml_return_t (*device_count)(unsigned int *count);         /* nvmlDeviceGetCount_v2 */
  sc_nvml_return_t (*device_by_index)(unsigned int index,
                                      sc_nvml_device_t *device); /* nvmlDeviceGetHandleByIndex_v2 */
  sc_nvml_return_t (*pci_info)(sc_nvml_device_t device,
                               sc_nvml_pci_info_t *pci);         /* nvmlDeviceGetPciInfo_v3 */
  sc_nvml_return_t (*nvlink_state)(sc_nvml_device_t device, unsigned int link,
                                   int *active); /* nvmlDeviceGetNvLinkState */
  sc_nvml_return_t (*nvlink_remote_pci)(sc_nvml_device_t device, unsigned int link,
                                        sc_nvml_pci_info_t *pci); /* nvmlDeviceGetNvLinkRemotePciInfo_v2 */
  sc_nvml_return_t (*nvlink_remote_type)(sc_nvml_device_t device, unsigned int link,
                                         int *type); /* nvmlDeviceGetNvLinkRemoteDeviceType */
  sc_nvml_return_t (*common_ancestor)(sc_nvml_device_t a, sc_nvml_device_t b,
                                      int *level); /* nvmlDeviceGetTopologyCommonAncestor */
} sc_nvml_fns_t;

/* The GPUs NVML lists (all of the host's, in NVML's order, which is PCI bus
 * order), their NVLinks and PCIe paths; dev is the NVML index. nvml must be
 * initialized. On failure, false and `why` says what NVML answered. */
bool sc_topo_from_nvml(const sc_nvml_fns_t *nvml, sc_topo_t **topo, char *why, size_t why_len);

/* The GPUs a CUDA process sees, from the host's: `visible` is
 * CUDA_VISIBLE_DEVICES (NULL: all, in order), indices into `host`; GPU k of
 * the result is CUDA device k. As in CUDA, an entry that is not an index of
 * `host` ends the list. UUIDs (GPU-..., MIG-...) are not matched: false with
 * `why`, as for a repeated index or an empty list. */
bool sc_topo_select_visible(const sc_topo_t *host, const char *visible, sc_topo_t **topo,
                            char *why, size_t why_len);

/* Writes the sentence into why (when given) and returns false. */
bool sc_topo_why(char *why, size_t why_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* libnvidia-ml opened and its functions found. */
typedef struct sc_nvml_lib {
  void *handle;
  sc_nvml_fns_t fns;
} sc_nvml_lib_t;

/* dlopen(soname) and dlsym of every function of the table, then nvmlInit_v2.
 * False with `why` (no library, a function missing, init refused). */
bool sc_nvml_open(const char *soname, sc_nvml_lib_t *lib, char *why, size_t why_len);
/* nvmlShutdown and dlclose. */
void sc_nvml_close(sc_nvml_lib_t *lib);

/* This host's topology as CUDA numbers its devices, from libnvidia-ml.so.1:
 * sc_nvml_open, sc_topo_from_nvml, sc_topo_select_visible(CUDA_VISIBLE_DEVICES),
 * sc_nvml_close. False with `why` when NVML is absent or fails. */
bool sc_topo_nvml_read(sc_topo_t **topo, char *why, size_t why_len);

#endif
