/* Which host this process runs on. Real hosts are told apart by hostname and
 * boot id; SYMCOMM_HOSTID splits one machine into simulated hosts (seed 003). */
#ifndef SC_TOPO_HOST_ID_H
#define SC_TOPO_HOST_ID_H

#include <stdint.h>

#include "util/error.h"

#define SC_MAX_SIM_HOSTS 256 /* a simulated host number must fit a PCI domain's high byte */

typedef struct sc_host_identity {
  char hostname[64];
  uint64_t hash;  /* equal on the same (simulated) host, different elsewhere */
  int sim_host;   /* SYMCOMM_HOSTID, or -1 on a real host */
} sc_host_identity_t;

sc_result_t sc_host_identity_get(sc_host_identity_t *id);

#endif
