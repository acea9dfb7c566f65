/* The NCCL_* variables the shim honours, read through symcomm's parameter
 * table (symcomm_param_info: the table documents them, README.md lists them).
 * Each sets its SYMCOMM_* equivalent where the caller has not set that one,
 * once per process, before the first unique id or communicator reads them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shim.h"

static pthread_once_t shim_env_once = PTHREAD_ONCE_INIT;
static ncclResult_t shim_env_result = ncclSuccess;
static char shim_env_error[256];

/* The value of a variable of symcomm's table, NULL when unset. */
static const char *shim_env_value(const char *name) {
  for (int i = 0; i < symcomm_param_count(); i++) {
    const char *n = NULL, *v = NULL;
    if (symcomm_param_info(i, &n, NULL, NULL, &v, NULL) == SYMCOMM_OK && strcmp(n, name) == 0)
      return v != NULL && v[0] != '\0' ? v : NULL;
  }
  return NULL;
}

static void shim_env_set(const char *name, const char *value) {
  if (value != NULL)
    setenv(name, value, 0);
}

static const char *shim_env_debug(const char *v) {
  if (v == NULL)
    return NULL;
  if (strcasecmp(v, "VERSION") == 0 || strcasecmp(v, "WARN") == 0)
    return "WARN";
  if (strcasecmp(v, "INFO") == 0)
    return "INFO";
  if (strcasecmp(v, "TRACE") == 0)
    return "TRACE";
  return NULL; /* NCCL's other levels have no symcomm counterpart */
}

static void shim_env_read(void) {
  shim_env_set("SYMCOMM_DEBUG", shim_env_debug(shim_env_value("NCCL_DEBUG")));
  shim_env_set("SYMCOMM_SOCKET_IFNAME", shim_env_value("NCCL_SOCKET_IFNAME"));
  shim_env_set("SYMCOMM_ADDR", shim_env_value("NCCL_COMM_ID"));
  const char *host = shim_env_value("NCCL_HOSTID");
  if (host != NULL) {
    char *end = NULL;
    long h = strtol(host, &end, 10);
    if (end == host || *end != '\0' || h < 0 || h > 255) {
      shim_env_result = ncclInvalidArgument;
      snprintf(shim_env_error, sizeof(shim_env_error),
               "NCCL_HOSTID='%s': symcomm's libnccl.so.2 takes a simulated host number 0..255 there",
               host);
      return;
    }
    shim_env_set("SYMCOMM_HOSTID", host);
  }
}

ncclResult_t shim_env_apply(void) {
  pthread_once(&shim_env_once, shim_env_read);
  if (shim_env_result != ncclSuccess)
    return shim_fail(shim_env_result, "%s", shim_env_error);
  return ncclSuccess;
}
