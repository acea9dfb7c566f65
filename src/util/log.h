/* Logging: SYMCOMM_DEBUG picks the level, SYMCOMM_DEBUG_SUBSYS the subsystems,
 * SYMCOMM_DEBUG_FILE the destination. Lines look like
 *   host:pid:tid [rank] SYMCOMM INFO BOOT message
 * Levels and subsystem masks are read once per process. */
#ifndef SC_UTIL_LOG_H
#define SC_UTIL_LOG_H

#include <stdbool.h>

typedef enum sc_log_level {
  SC_LOG_NONE = 0,
  SC_LOG_WARN = 1,
  SC_LOG_INFO = 2,
  SC_LOG_TRACE = 3
} sc_log_level_t;

/* Subsystems, as named in SYMCOMM_DEBUG_SUBSYS. */
enum {
  SC_INIT = 1 << 0, /* communicator creation, split, destroy */
  SC_BOOT = 1 << 1, /* root, store, bootstrap collectives */
  SC_TOPO = 1 << 2, /* hosts, devices, links */
  SC_ENV = 1 << 3,  /* parameters and launcher detection */
  SC_NET = 1 << 4,
  SC_P2P = 1 << 5,
  SC_WIN = 1 << 6,
  SC_COLL = 1 << 7,
  SC_TOOL = 1 << 8, /* the tools under tools/ */
  SC_DEV = 1 << 9,  /* backends: device memory, streams, programs */
  SC_SUBSYS_ALL = (1 << 10) - 1
};

const char *sc_log_subsys_name(int subsys);

bool sc_log_enabled(sc_log_level_t level, int subsys);
void sc_log(sc_log_level_t level, int subsys, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The rank shown in log lines of this process from now on. */
void sc_log_set_rank(int rank);

#define SC_WARN(subsys, ...) sc_log(SC_LOG_WARN, (subsys), __FILE__, __LINE__, __VA_ARGS__)
#define SC_INFO(subsys, ...)                                          \
  do {                                                                \
    if (sc_log_enabled(SC_LOG_INFO, (subsys)))                        \
      sc_log(SC_LOG_INFO, (subsys), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define SC_TRACE(subsys, ...)                                          \
  do {                                                                 \
    if (sc_log_enabled(SC_LOG_TRACE, (subsys)))                        \
      sc_log(SC_LOG_TRACE, (subsys), __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

#endif
