/* The client side of a rank's watch on its root (store_proto.h), after
 * sc_store_client_watch opened it: reading the root's news of a failed
 * session without blocking, and telling the root that this rank failed or
 * aborted. Whoever polls the fd calls these; nothing here waits. */
#ifndef SC_BOOTSTRAP_STORE_WATCH_H
#define SC_BOOTSTRAP_STORE_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "bootstrap/store_proto.h"
#include "util/error.h"

typedef struct sc_store_watch {
  int fd; /* -1 once closed */
  unsigned char buf[sizeof(sc_store_reply_t) + SC_STORE_MAX_TEXT];
  size_t got;
} sc_store_watch_t;

/* How the session failed, or who left it, as the root tells its watches. */
typedef struct sc_store_watch_news {
  sc_result_t result;
  int rank; /* the rank it names; -1 none */
  sc_store_cause_t cause;
  char text[SC_STORE_MAX_TEXT + 1]; /* that rank's own sentence, or the root's */
} sc_store_watch_news_t;

void sc_store_watch_init(sc_store_watch_t *w, int fd);
/* Reads what has arrived: 0 = no news yet (poll again); 1 = *news is the
 * session's failure, or (cause SC_STORE_CAUSE_LEFT, result OK) a rank that
 * left, after which more news may follow; -1 = the connection ended without
 * news, or carried something else: the root is gone. */
int sc_store_watch_read(sc_store_watch_t *w, sc_store_watch_news_t *news);
/* Tells the root, without waiting, that this rank failed (SC_STORE_CAUSE_FAILED,
 * with its sentence) or aborted (SC_STORE_CAUSE_ABORTED); false if it could
 * not be sent at once. */
bool sc_store_watch_tell(sc_store_watch_t *w, sc_store_cause_t cause, const char *why);
void sc_store_watch_close(sc_store_watch_t *w);

#endif
