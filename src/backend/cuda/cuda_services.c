/* Errors and logging in libsymcomm_cuda.so go to libsymcomm.so's own (the
 * caller's thread's sentence, one log), through the services it lends at
 * load time: these definitions stand in for src/util/error.c and log.c,
 * which this object does not contain. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"

static sc_backend_services_t sc_services;

void sc_cuda_services_set(const sc_backend_services_t *services);
void sc_cuda_services_set(const sc_backend_services_t *services) { sc_services = *services; }

static sc_result_t sc_forward_raise(sc_result_t result, int subsys, const char *file, int line,
                                    const char *suffix, const char *fmt, va_list ap) {
  char text[1024];
  int n = vsnprintf(text, sizeof(text), fmt, ap);
  if (n >= 0 && suffix != NULL && (size_t)n < sizeof(text))
    snprintf(text + n, sizeof(text) - (size_t)n, "%s", suffix);
  if (sc_services.raise == NULL)
    return result;
  return sc_services.raise(result, subsys, file, line, "%s", text);
}

sc_result_t sc_error_raise(sc_result_t result, int subsys, const char *file, int line,
                           const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sc_forward_raise(result, subsys, file, line, NULL, fmt, ap);
  va_end(ap);
  return result;
}

sc_result_t sc_error_raise_errno(sc_result_t result, int subsys, const char *file, int line,
                                 const char *fmt, ...) {
  int saved = errno;
  char suffix[160];
  snprintf(suffix, sizeof(suffix), ": %s", strerror(saved));
  va_list ap;
  va_start(ap, fmt);
  sc_forward_raise(result, subsys, file, line, suffix, fmt, ap);
  va_end(ap);
  errno = saved;
  return result;
}

sc_result_t sc_error_pass(sc_result_t result, const char *text) {
  return sc_services.pass != NULL ? sc_services.pass(result, text) : result;
}

bool sc_log_enabled(sc_log_level_t level, int subsys) {
  return sc_services.log_enabled != NULL && sc_services.log_enabled(level, subsys);
}

void sc_log(sc_log_level_t level, int subsys, const char *file, int line, const char *fmt, ...) {
  if (!sc_log_enabled(level, subsys))
    return;
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  sc_services.log(level, subsys, file, line, "%s", text);
}
