#include "topo/local_topo.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "topo/nvml_api.h"
#include "util/log.h"
#include "util/param.h"

/* "dir/base.xml" and host 1 -> "dir/base_node1.xml" (seed 003's naming). */
static void sc_topo_node_path(const char *base, int sim_host, char *path, size_t len) {
  const char *slash = strrchr(base, '/');
  const char *dot = strrchr(base, '.');
  size_t stem = (dot != NULL && (slash == NULL || dot > slash)) ? (size_t)(dot - base) : strlen(base);
  snprintf(path, len, "%.*s_node%d%s", (int)stem, base, sim_host, base + stem);
}

/* The real host's GPUs from NVML, when there is a driver and enough GPUs for
 * the ranks; else false, with the reason in `why`. */
static bool sc_topo_local_nvml(int min_gpus, sc_topo_t **out, char *why, size_t why_len) {
  /* Simulated GPUs on a GPU host keep the simulated host's numbering. */
  if (strcmp(sc_param_string(SC_PARAM_BACKEND), "host") == 0)
    return sc_topo_why(why, why_len, "SYMCOMM_BACKEND=host");
  sc_topo_t *topo;
  if (!sc_topo_nvml_read(&topo, why, why_len))
    return false;
  if (topo->ngpus < min_gpus) {
    sc_topo_why(why, why_len, "NVML shows %d GPUs, fewer than the %d this host's ranks use",
                topo->ngpus, min_gpus);
    sc_topo_free(topo);
    return false;
  }
  *out = topo;
  return true;
}

sc_result_t sc_topo_load_local(int sim_host, int min_gpus, sc_topo_t **out) {
  const char *file = sc_param_string(SC_PARAM_TOPO_FILE);
  sc_topo_t *topo = NULL;
  if (file != NULL) {
    char path[1024];
    snprintf(path, sizeof(path), "%s", file);
    if (sim_host >= 0) {
      char node_path[1024];
      sc_topo_node_path(file, sim_host, node_path, sizeof(node_path));
      if (access(node_path, R_OK) == 0)
        snprintf(path, sizeof(path), "%s", node_path);
    }
    SC_CHECK(sc_topo_load_file(path, &topo));
    SC_INFO(SC_TOPO, "host topology from %s: %d GPUs", path, topo->ngpus);
  } else if (sim_host >= 0) {
    SC_CHECK(sc_topo_builtin_switch(min_gpus, 0, &topo));
    SC_INFO(SC_TOPO, "simulated host %d without SYMCOMM_TOPO_FILE: %d GPUs on one NVSwitch",
            sim_host, min_gpus);
  } else {
    char why[512];
    if (sc_topo_local_nvml(min_gpus, &topo, why, sizeof(why))) {
      SC_INFO(SC_TOPO, "host topology from NVML: %d GPUs", topo->ngpus);
    } else {
      SC_CHECK(sc_topo_builtin_switch(min_gpus, 0, &topo));
      SC_INFO(SC_TOPO, "no SYMCOMM_TOPO_FILE and no topology from NVML (%s): simulated host of %d "
              "GPUs on one NVSwitch", why, min_gpus);
    }
  }
  if (sim_host >= 0)
    sc_topo_set_host_domain(topo, sim_host);
  *out = topo;
  return SYMCOMM_OK;
}
