#include "util/param.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "util/log.h"

static const sc_param_def_t sc_param_table[SC_PARAM_COUNT] = {
#define SC_PARAM(id, name, type, def, doc) [SC_PARAM_##id] = {name, SC_PARAM_TYPE_##type, def, doc},
#include "util/param_table.h"
#undef SC_PARAM
};

const sc_param_def_t *sc_param_def(sc_param_id_t id) {
  if ((int)id < 0 || id >= SC_PARAM_COUNT)
    return NULL;
  return &sc_param_table[id];
}

const char *sc_param_type_name(sc_param_type_t type) {
  switch (type) {
  case SC_PARAM_TYPE_STRING: return "string";
  case SC_PARAM_TYPE_INT: return "int";
  case SC_PARAM_TYPE_SECONDS: return "seconds";
  }
  return "?";
}

bool sc_param_is_set(sc_param_id_t id) {
  const char *v = getenv(sc_param_table[id].name);
  return v != NULL && v[0] != '\0';
}

bool sc_param_is_empty(sc_param_id_t id) {
  const char *v = getenv(sc_param_table[id].name);
  return v != NULL && v[0] == '\0';
}

const char *sc_param_string(sc_param_id_t id) {
  const char *v = getenv(sc_param_table[id].name);
  if (v != NULL && v[0] != '\0')
    return v;
  return sc_param_table[id].default_value;
}

sc_result_t sc_param_int(sc_param_id_t id, long long *value, bool *is_set) {
  const char *text = sc_param_string(id);
  if (is_set != NULL)
    *is_set = sc_param_is_set(id);
  if (text == NULL)
    return SYMCOMM_OK;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0')
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV, "%s='%s' is not an integer",
                    sc_param_table[id].name, text);
  *value = v;
  return SYMCOMM_OK;
}

sc_result_t sc_param_int_or(sc_param_id_t id, long long fallback, long long *value, bool *is_set) {
  bool set = false;
  SC_CHECK(sc_param_int(id, value, &set));
  if (!set)
    *value = fallback;
  if (is_set != NULL)
    *is_set = set;
  return SYMCOMM_OK;
}

sc_result_t sc_param_milliseconds(sc_param_id_t id, int64_t *ms) {
  const char *text = sc_param_string(id);
  if (text == NULL)
    return SYMCOMM_OK;
  char *end = NULL;
  errno = 0;
  double seconds = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(seconds >= 0) || seconds > 1e9)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV,
                    "%s='%s' is not a number of seconds between 0 and 1e9",
                    sc_param_table[id].name, text);
  *ms = (int64_t)llround(seconds * 1000.0);
  return SYMCOMM_OK;
}
