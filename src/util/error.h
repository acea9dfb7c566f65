/* Result codes, the per-thread error sentence, and the CHECK macros.
 *
 * Convention: the site that detects a failure calls SC_RAISE, which records the
 * sentence for symcomm_last_error() and warns once; every caller above it only
 * propagates the code with SC_CHECK / SC_CHECK_GOTO. */
#ifndef SC_UTIL_ERROR_H
#define SC_UTIL_ERROR_H

#include "symcomm.h"
#include "util/log.h" /* the subsystems SC_RAISE names */

typedef symcomm_result_t sc_result_t;

const char *sc_result_name(sc_result_t result);

/* Records the sentence of a failure detected here, logs it as a warning of
 * `subsys` (see log.h) and returns `result`. */
sc_result_t sc_error_raise(sc_result_t result, int subsys, const char *file, int line,
                           const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Like sc_error_raise, with ": <strerror(errno)>" appended. */
sc_result_t sc_error_raise_errno(sc_result_t result, int subsys, const char *file, int line,
                                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define SC_RAISE(result, subsys, ...) sc_error_raise((result), (subsys), __FILE__, __LINE__, __VA_ARGS__)
#define SC_RAISE_ERRNO(result, subsys, ...) \
  sc_error_raise_errno((result), (subsys), __FILE__, __LINE__, __VA_ARGS__)

/* Makes `text` this thread's sentence without a new warning: for passing on
 * a failure that was detected (and logged) elsewhere, e.g. in a stream. */
sc_result_t sc_error_pass(sc_result_t result, const char *text);

/* Adds a hint to this thread's last sentence (no new warning): for a caller
 * that knows what the failure probably means. */
void sc_error_append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The last sentence recorded by this thread ("" if none), and its reset. */
const char *sc_error_last(void);
void sc_error_clear(void);

#define SC_CHECK(call)                        \
  do {                                        \
    sc_result_t sc_check_result_ = (call);    \
    if (sc_check_result_ != SYMCOMM_OK)       \
      return sc_check_result_;                \
  } while (0)

#define SC_CHECK_GOTO(call, result_var, label) \
  do {                                         \
    (result_var) = (call);                     \
    if ((result_var) != SYMCOMM_OK)            \
      goto label;                              \
  } while (0)

#endif
