#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/param.h"

static const struct {
  const char *name;
  int mask;
} sc_subsys_names[] = {
    {"INIT", SC_INIT}, {"BOOT", SC_BOOT}, {"TOPO", SC_TOPO}, {"ENV", SC_ENV},   {"NET", SC_NET},
    {"P2P", SC_P2P},   {"WIN", SC_WIN},   {"COLL", SC_COLL}, {"TOOL", SC_TOOL}, {"DEV", SC_DEV},
    {"ALL", SC_SUBSYS_ALL},
};

static pthread_once_t sc_log_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t sc_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static sc_log_level_t sc_log_level = SC_LOG_WARN;
static int sc_log_mask = SC_SUBSYS_ALL;
static FILE *sc_log_stream; /* NULL = stderr (looked up at each line, so tests may swap it) */
static atomic_int sc_log_rank = -1;
static char sc_log_hostname[64] = "?";

const char *sc_log_subsys_name(int subsys) {
  for (size_t i = 0; i < sizeof(sc_subsys_names) / sizeof(sc_subsys_names[0]); i++)
    if (sc_subsys_names[i].mask == subsys)
      return sc_subsys_names[i].name;
  return "MISC";
}

static int sc_log_parse_mask(const char *spec) {
  bool exclude = spec[0] == '^';
  if (exclude)
    spec++;
  int mask = 0;
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", spec);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
    bool known = false;
    for (size_t i = 0; i < sizeof(sc_subsys_names) / sizeof(sc_subsys_names[0]); i++) {
      if (strcasecmp(tok, sc_subsys_names[i].name) == 0) {
        mask |= sc_subsys_names[i].mask;
        known = true;
      }
    }
    if (!known)
      fprintf(stderr, "symcomm: SYMCOMM_DEBUG_SUBSYS: unknown subsystem '%s' ignored\n", tok);
  }
  return exclude ? (SC_SUBSYS_ALL & ~mask) : mask;
}

/* The rank for %r in SYMCOMM_DEBUG_FILE, taken from the launcher before init
 * has run (the file is opened at the first line logged). */
static const char *sc_log_rank_hint(void) {
  static const sc_param_id_t ids[] = {SC_PARAM_RANK, SC_PARAM_TORCH_RANK, SC_PARAM_OMPI_RANK,
                                      SC_PARAM_SLURM_PROCID};
  for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
    if (sc_param_is_set(ids[i]))
      return sc_param_string(ids[i]);
  return "x";
}

static void sc_log_open_file(const char *pattern) {
  char path[512];
  size_t n = 0;
  for (const char *p = pattern; *p != '\0' && n + 1 < sizeof(path); p++) {
    int w = 0;
    if (p[0] == '%' && p[1] == 'h') {
      w = snprintf(path + n, sizeof(path) - n, "%s", sc_log_hostname);
      p++;
    } else if (p[0] == '%' && p[1] == 'p') {
      w = snprintf(path + n, sizeof(path) - n, "%d", (int)getpid());
      p++;
    } else if (p[0] == '%' && p[1] == 'r') {
      w = snprintf(path + n, sizeof(path) - n, "%s", sc_log_rank_hint());
      p++;
    } else {
      path[n] = *p;
      w = 1;
    }
    if (w < 0)
      break;
    n += (size_t)w;
    if (n >= sizeof(path))
      n = sizeof(path) - 1;
  }
  path[n] = '\0';
  /* Opening a FIFO without a reader would block, and init with it: fail
   * instead (ENXIO). Once open, writes may block as usual. */
  FILE *f = NULL;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_CLOEXEC, 0666);
  int err = errno;
  if (fd >= 0) {
    int flags = fcntl(fd, F_GETFL);
    if (flags == -1 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1 || (f = fdopen(fd, "a")) == NULL) {
      err = errno;
      close(fd);
    }
  }
  if (f == NULL) {
    fprintf(stderr, "symcomm: cannot open SYMCOMM_DEBUG_FILE '%s' (%s); logging to stderr\n", path,
            err == ENXIO ? "a FIFO that nobody reads" : strerror(err));
    return;
  }
  setvbuf(f, NULL, _IOLBF, 0);
  sc_log_stream = f;
}

static void sc_log_init(void) {
  gethostname(sc_log_hostname, sizeof(sc_log_hostname) - 1);
  sc_log_hostname[sizeof(sc_log_hostname) - 1] = '\0';
  char *dot = strchr(sc_log_hostname, '.');
  if (dot != NULL)
    *dot = '\0';

  const char *level = sc_param_string(SC_PARAM_DEBUG);
  if (strcasecmp(level, "NONE") == 0)
    sc_log_level = SC_LOG_NONE;
  else if (strcasecmp(level, "WARN") == 0)
    sc_log_level = SC_LOG_WARN;
  else if (strcasecmp(level, "INFO") == 0)
    sc_log_level = SC_LOG_INFO;
  else if (strcasecmp(level, "TRACE") == 0)
    sc_log_level = SC_LOG_TRACE;
  else
    fprintf(stderr, "symcomm: SYMCOMM_DEBUG='%s' is not NONE, WARN, INFO or TRACE; using WARN\n",
            level);

  sc_log_mask = sc_log_parse_mask(sc_param_string(SC_PARAM_DEBUG_SUBSYS));

  const char *file = sc_param_string(SC_PARAM_DEBUG_FILE);
  if (file != NULL && sc_log_level != SC_LOG_NONE)
    sc_log_open_file(file);
}

bool sc_log_enabled(sc_log_level_t level, int subsys) {
  pthread_once(&sc_log_once, sc_log_init);
  return level <= sc_log_level && (subsys & sc_log_mask) != 0;
}

void sc_log_set_rank(int rank) { atomic_store(&sc_log_rank, rank); }

void sc_log(sc_log_level_t level, int subsys, const char *file, int line, const char *fmt, ...) {
  if (!sc_log_enabled(level, subsys))
    return;
  static const char *level_names[] = {"NONE", "WARN", "INFO", "TRACE"};
  char text[1536];
  int n = 0;
  int rank = atomic_load(&sc_log_rank);
  char rank_text[16];
  if (rank >= 0)
    snprintf(rank_text, sizeof(rank_text), "%d", rank);
  else
    snprintf(rank_text, sizeof(rank_text), "-");
  n = snprintf(text, sizeof(text), "%s:%d:%d [%s] SYMCOMM %s %s ", sc_log_hostname, (int)getpid(),
               (int)syscall(SYS_gettid), rank_text, level_names[level], sc_log_subsys_name(subsys));
  if (n < 0 || (size_t)n >= sizeof(text))
    n = 0;
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
  va_end(ap);
  if (m > 0)
    n += m;
  if ((size_t)n >= sizeof(text) - 1)
    n = (int)sizeof(text) - 2;
  if (level != SC_LOG_INFO) {
    const char *base = strrchr(file, '/');
    int w = snprintf(text + n, sizeof(text) - (size_t)n, " [%s:%d]", base ? base + 1 : file, line);
    if (w > 0)
      n += w;
    if ((size_t)n >= sizeof(text) - 1)
      n = (int)sizeof(text) - 2;
  }
  text[n++] = '\n';
  text[n] = '\0';
  pthread_mutex_lock(&sc_log_mutex);
  FILE *out = sc_log_stream != NULL ? sc_log_stream : stderr;
  fputs(text, out);
  fflush(out);
  pthread_mutex_unlock(&sc_log_mutex);
}
