/* Typed access to the environment parameters of param_table.h. Each call
 * reads the environment afresh, so callers read a parameter when they make
 * something (a unique id, a communicator) and keep the value: never on the
 * path of a data call, and never twice for one communicator. */
#ifndef SC_UTIL_PARAM_H
#define SC_UTIL_PARAM_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

typedef enum sc_param_type { SC_PARAM_TYPE_STRING, SC_PARAM_TYPE_INT, SC_PARAM_TYPE_SECONDS } sc_param_type_t;

typedef enum sc_param_id {
#define SC_PARAM(id, name, type, def, doc) SC_PARAM_##id,
#include "util/param_table.h"
#undef SC_PARAM
  SC_PARAM_COUNT
} sc_param_id_t;

typedef struct sc_param_def {
  const char *name;
  sc_param_type_t type;
  const char *default_value; /* NULL = unset */
  const char *doc;
} sc_param_def_t;

const sc_param_def_t *sc_param_def(sc_param_id_t id);
const char *sc_param_type_name(sc_param_type_t type);

/* True when the variable is set to a non-empty value. */
/* Set, but to the empty string (which every other reader takes as unset). */
bool sc_param_is_empty(sc_param_id_t id);
bool sc_param_is_set(sc_param_id_t id);
/* The variable's value if set and non-empty, else its default (maybe NULL). */
const char *sc_param_string(sc_param_id_t id);
/* Parses the value (or the default) as an integer; INVALID_ARGUMENT naming the
 * variable when it is not one. *value is untouched when neither is set. */
sc_result_t sc_param_int(sc_param_id_t id, long long *value, bool *is_set);
/* The same, with `fallback` (a caller's default, such as the backend's) when
 * the variable is not set; is_set may be NULL. */
sc_result_t sc_param_int_or(sc_param_id_t id, long long fallback, long long *value, bool *is_set);
/* Parses seconds (decimals allowed) into milliseconds; same rules as sc_param_int. */
sc_result_t sc_param_milliseconds(sc_param_id_t id, int64_t *ms);

#endif
