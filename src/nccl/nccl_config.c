/* ncclConfig_t as a caller built it: NCCL_CONFIG_INITIALIZER fills size,
 * magic and version from the caller's nccl.h, and fields are only ever
 * appended, so a field is read only when the caller's size covers it. A
 * config from a newer header is accepted the same way (its extra fields are
 * tuning symcomm has no use for). */
#include <stddef.h>

#include "shim.h"

#define SHIM_CONFIG_MAGIC 0xcafebeefu
/* ncclConfig_t first appeared in NCCL 2.14. */
#define SHIM_CONFIG_OLDEST NCCL_VERSION(2, 14, 0)

/* symcomm's most blocks for a collective (config.max_blocks); a larger
 * maxCTAs allows every one of them. */
#define SHIM_MAX_CTAS 128

#define SHIM_HAS(config, field) \
  ((config)->size >= offsetof(ncclConfig_t, field) + sizeof((config)->field))

int shim_max_blocks(int max_ctas) { return max_ctas < SHIM_MAX_CTAS ? max_ctas : SHIM_MAX_CTAS; }

ncclResult_t shim_config_read(const ncclConfig_t *config, const char *call, shim_config_t *out) {
  shim_config_t c = {.blocking = true, .name = NULL};
  if (config != NULL) {
    if (config->magic != SHIM_CONFIG_MAGIC)
      return shim_fail(ncclInvalidArgument,
                       "%s: the config's magic is 0x%x, not NCCL's; start it from "
                       "NCCL_CONFIG_INITIALIZER",
                       call, config->magic);
    if (config->version < SHIM_CONFIG_OLDEST)
      return shim_fail(ncclInvalidArgument,
                       "%s: the config's version %u is older than the first ncclConfig_t (%d)",
                       call, config->version, SHIM_CONFIG_OLDEST);
    if (!SHIM_HAS(config, blocking))
      return shim_fail(ncclInvalidArgument,
                       "%s: the config's size %zu is too small for an ncclConfig_t", call,
                       config->size);
    if (config->blocking != NCCL_CONFIG_UNDEF_INT) {
      if (config->blocking != 0 && config->blocking != 1)
        return shim_fail(ncclInvalidArgument, "%s: config.blocking is %d, not 0 or 1", call,
                         config->blocking);
      c.blocking = config->blocking == 1;
    }
    if (SHIM_HAS(config, commName))
      c.name = config->commName;
    /* maxCTAs caps the blocks (SMs) of a collective, as symcomm's
     * max_blocks does; minCTAs is a floor NCCL may exceed and symcomm, which
     * picks blocks by size, does not keep: ignored. */
    if (SHIM_HAS(config, maxCTAs) && config->maxCTAs != NCCL_CONFIG_UNDEF_INT) {
      if (config->maxCTAs < 1)
        return shim_fail(ncclInvalidArgument, "%s: config.maxCTAs is %d, not at least 1", call,
                         config->maxCTAs);
      c.max_ctas = config->maxCTAs;
    }
  }
  *out = c;
  return ncclSuccess;
}
