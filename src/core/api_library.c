/* Library-wide entry points: version, result names, error sentences, parameters. */
#include <stdlib.h>

#include "core/comm.h"
#include "util/param.h"

symcomm_result_t symcomm_get_version(int *version) {
  sc_error_clear();
  if (version == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "symcomm_get_version: version is NULL");
  *version = SYMCOMM_VERSION;
  return SYMCOMM_OK;
}

const char *symcomm_result_string(symcomm_result_t result) { return sc_result_name(result); }

const char *symcomm_last_error(symcomm_comm_t comm) {
  if (comm == NULL)
    return sc_error_last();
  if (comm->magic != SC_COMM_MAGIC)
    return "not a communicator (a stray pointer, or one already destroyed)";
  return comm->last_error;
}

int symcomm_param_count(void) { return SC_PARAM_COUNT; }

symcomm_result_t symcomm_param_info(int index, const char **name, const char **type,
                                    const char **default_value, const char **value,
                                    const char **doc) {
  sc_error_clear();
  const sc_param_def_t *def = sc_param_def((sc_param_id_t)index);
  if (def == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV,
                    "symcomm_param_info: index %d is not in [0, %d)", index, SC_PARAM_COUNT);
  if (name != NULL)
    *name = def->name;
  if (type != NULL)
    *type = sc_param_type_name(def->type);
  if (default_value != NULL)
    *default_value = def->default_value;
  if (value != NULL)
    *value = getenv(def->name);
  if (doc != NULL)
    *doc = def->doc;
  return SYMCOMM_OK;
}
