#include "topo/local_topo.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/param.h"

/* "dir/base.xml" and host 1 -> "dir/base_node1.xml" (seed 003's naming). */
static void sc_topo_node_path(const char *base, int sim_host, char *path, size_t len) {
  const char *slash = strrchr(base, '/');
  const char *dot = strrchr(base, '.');
  size_t stem = (dot != NULL && (slash == NULL || dot > slash)) ? (size_t)(dot - base) : strlen(base);
  snprintf(path, len, "%.*s_node%d%s", (int)stem, base, sim_host, base + stem);
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
  } else {
    SC_CHECK(sc_topo_builtin_switch(min_gpus, 0, &topo));
    SC_INFO(SC_TOPO, "no SYMCOMM_TOPO_FILE: simulated host of %d GPUs on one NVSwitch", min_gpus);
  }
  if (sim_host >= 0)
    sc_topo_set_host_domain(topo, sim_host);
  *out = topo;
  return SYMCOMM_OK;
}
