#include "topo/host_id.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/hash.h"
#include "util/log.h"
#include "util/param.h"

sc_result_t sc_host_identity_get(sc_host_identity_t *out) {
  sc_host_identity_t id;
  memset(&id, 0, sizeof(id));
  if (gethostname(id.hostname, sizeof(id.hostname) - 1) != 0)
    snprintf(id.hostname, sizeof(id.hostname), "unknown");

  /* Two machines may share a hostname (containers, clones); the boot id tells
   * them apart, and is the same for every process of one running kernel. */
  char boot_id[64] = "";
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f != NULL) {
    if (fgets(boot_id, sizeof(boot_id), f) == NULL)
      boot_id[0] = '\0';
    fclose(f);
  }
  uint64_t h = sc_hash64(id.hostname, strlen(id.hostname), SC_HASH_SEED);
  h = sc_hash64(boot_id, strlen(boot_id), h);

  long long sim = -1;
  bool set = false;
  SC_CHECK(sc_param_int(SC_PARAM_HOSTID, &sim, &set));
  if (set) {
    if (sim < 0 || sim >= SC_MAX_SIM_HOSTS)
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO,
                      "SYMCOMM_HOSTID=%lld: a simulated host number is 0..%d", sim,
                      SC_MAX_SIM_HOSTS - 1);
    h = sc_hash64("sim", 3, h);
    h = sc_hash64(&sim, sizeof(sim), h);
  }
  id.sim_host = (int)sim;
  id.hash = h;
  *out = id;
  return SYMCOMM_OK;
}
