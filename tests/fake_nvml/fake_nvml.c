/* A stand-in for libnvidia-ml.so.1 on machines without a GPU driver: the
 * build puts it in $(BUILD)/tests/fake_nvml/, and a test that runs jobs with
 * that folder in LD_LIBRARY_PATH sees a host of FAKE_NVML_GPUS GPUs (default
 * 4), each with FAKE_NVML_SWITCH_LINKS links (default 18) to NVSwitches, as
 * an HGX H100 board shows them. Written from NVML's documented interface, so
 * that the library's dlopen, dlsym and the prototypes it declares are used as
 * on a GPU host. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlPciInfo_st {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define FAKE_MAX_GPUS 8
#define FAKE_MAX_LINKS 18

static int fake_initialized;
static const unsigned fake_bus[FAKE_MAX_GPUS] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

static int fake_env(const char *name, int def, int max) {
  const char *v = getenv(name);
  int n = v != NULL ? atoi(v) : def;
  return n < 0 ? 0 : n > max ? max : n;
}

static int fake_gpu(nvmlDevice_t d) {
  int g = (int)(uintptr_t)d - 1;
  return g >= 0 && g < fake_env("FAKE_NVML_GPUS", 4, FAKE_MAX_GPUS) ? g : -1;
}

static void fake_pci(unsigned bus, nvmlPciInfo_t *pci) {
  memset(pci, 0, sizeof(*pci));
  pci->bus = bus;
  snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", bus);
  snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", bus);
}

nvmlReturn_t nvmlInit_v2(void) {
  fake_initialized = 1;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlShutdown(void) {
  fake_initialized = 0;
  return NVML_SUCCESS;
}
const char *nvmlErrorString(nvmlReturn_t r) { return r == NVML_SUCCESS ? "Success" : "fake error"; }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
  if (!fake_initialized)
    return NVML_ERROR_UNINITIALIZED;
  *count = (unsigned)fake_env("FAKE_NVML_GPUS", 4, FAKE_MAX_GPUS);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
  if (!fake_initialized)
    return NVML_ERROR_UNINITIALIZED;
  nvmlDevice_t d = (nvmlDevice_t)(uintptr_t)(index + 1);
  if (fake_gpu(d) < 0)
    return NVML_ERROR_INVALID_ARGUMENT;
  *device = d;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
  int g = fake_gpu(device);
  if (g < 0)
    return NVML_ERROR_INVALID_ARGUMENT;
  fake_pci(fake_bus[g], pci);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, int *active) {
  if (fake_gpu(device) < 0 || link >= FAKE_MAX_LINKS)
    return NVML_ERROR_INVALID_ARGUMENT;
  *active = (int)link < fake_env("FAKE_NVML_SWITCH_LINKS", 18, FAKE_MAX_LINKS);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                 nvmlPciInfo_t *pci) {
  if (fake_gpu(device) < 0 || link >= FAKE_MAX_LINKS)
    return NVML_ERROR_INVALID_ARGUMENT;
  fake_pci(0xc1 + link % 4, pci); /* four NVSwitches */
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link, int *type) {
  if (fake_gpu(device) < 0 || link >= FAKE_MAX_LINKS)
    return NVML_ERROR_INVALID_ARGUMENT;
  *type = 2; /* NVML_NVLINK_DEVICE_TYPE_SWITCH */
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b, int *level) {
  if (fake_gpu(a) < 0 || fake_gpu(b) < 0)
    return NVML_ERROR_INVALID_ARGUMENT;
  *level = fake_gpu(a) / 4 == fake_gpu(b) / 4 ? 40 : 50; /* NODE within a CPU's four, else SYSTEM */
  return NVML_SUCCESS;
}
