#include "util/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/log.h"

#define SC_ERROR_TEXT_BYTES 1024

static __thread char sc_error_text[SC_ERROR_TEXT_BYTES];

const char *sc_result_name(sc_result_t result) {
  switch (result) {
  case SYMCOMM_OK: return "SYMCOMM_OK";
  case SYMCOMM_IN_PROGRESS: return "SYMCOMM_IN_PROGRESS";
  case SYMCOMM_ERR_INVALID_ARGUMENT: return "SYMCOMM_ERR_INVALID_ARGUMENT";
  case SYMCOMM_ERR_INVALID_USAGE: return "SYMCOMM_ERR_INVALID_USAGE";
  case SYMCOMM_ERR_SYSTEM: return "SYMCOMM_ERR_SYSTEM";
  case SYMCOMM_ERR_DEVICE: return "SYMCOMM_ERR_DEVICE";
  case SYMCOMM_ERR_REMOTE: return "SYMCOMM_ERR_REMOTE";
  case SYMCOMM_ERR_TIMEOUT: return "SYMCOMM_ERR_TIMEOUT";
  case SYMCOMM_ERR_ABORTED: return "SYMCOMM_ERR_ABORTED";
  case SYMCOMM_ERR_OUT_OF_MEMORY: return "SYMCOMM_ERR_OUT_OF_MEMORY";
  case SYMCOMM_ERR_UNSUPPORTED: return "SYMCOMM_ERR_UNSUPPORTED";
  case SYMCOMM_ERR_INTERNAL: return "SYMCOMM_ERR_INTERNAL";
  }
  return "SYMCOMM_ERR_UNKNOWN_RESULT";
}

static sc_result_t sc_error_record(sc_result_t result, int subsys, const char *file, int line,
                                   const char *suffix, const char *fmt, va_list ap) {
  int n = vsnprintf(sc_error_text, sizeof(sc_error_text), fmt, ap);
  if (n >= 0 && suffix != NULL && (size_t)n < sizeof(sc_error_text))
    snprintf(sc_error_text + n, sizeof(sc_error_text) - (size_t)n, "%s", suffix);
  sc_log(SC_LOG_WARN, subsys, file, line, "%s (%s)", sc_error_text, sc_result_name(result));
  return result;
}

sc_result_t sc_error_raise(sc_result_t result, int subsys, const char *file, int line,
                           const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sc_error_record(result, subsys, file, line, NULL, fmt, ap);
  va_end(ap);
  return result;
}

sc_result_t sc_error_raise_errno(sc_result_t result, int subsys, const char *file, int line,
                                 const char *fmt, ...) {
  char suffix[160];
  int saved = errno;
  snprintf(suffix, sizeof(suffix), ": %s", strerror(saved));
  va_list ap;
  va_start(ap, fmt);
  sc_error_record(result, subsys, file, line, suffix, fmt, ap);
  va_end(ap);
  errno = saved;
  return result;
}

sc_result_t sc_error_pass(sc_result_t result, const char *text) {
  snprintf(sc_error_text, sizeof(sc_error_text), "%s", text);
  return result;
}

void sc_error_append(const char *fmt, ...) {
  size_t n = strnlen(sc_error_text, sizeof(sc_error_text));
  if (n + 1 >= sizeof(sc_error_text))
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sc_error_text + n, sizeof(sc_error_text) - n, fmt, ap);
  va_end(ap);
}

const char *sc_error_last(void) { return sc_error_text; }

void sc_error_clear(void) { sc_error_text[0] = '\0'; }
