/* A rank's connection to a root: the hello, then blocking requests, each
 * bounded by the client's timeout and interrupted by its abort fd. Errors the
 * root explains (a missing rank, a timeout, a disagreement) come back with the
 * root's sentence. */
#ifndef SC_BOOTSTRAP_STORE_CLIENT_H
#define SC_BOOTSTRAP_STORE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/socket.h"

typedef struct sc_store_client {
  int fd;
  int abort_fd;       /* readable = give up (-1: none) */
  int64_t timeout_ms; /* each request's bound */
  int rank, nranks;
  uint64_t session;
  bool broken; /* a request was cut short: the stream is out of step */
  bool session_failed; /* the root answered that the session failed */
  char root_text[SC_SOCKADDR_TEXT + 8];
} sc_store_client_t;

/* Connects (retrying until the timeout) and says hello as `rank` of `nranks`;
 * a connection the root drops without an answer is retried too. */
sc_result_t sc_store_client_connect(sc_store_client_t *client, const sc_sockaddr_t *root,
                                    uint64_t session, int rank, int nranks, int64_t timeout_ms,
                                    int abort_fd);
/* Opens `rank`'s watch on the session (store_proto.h), which must have
 * joined: *fd is the connection, with the root's OK read; what comes next
 * is the session's failure (store_watch.h reads it). */
sc_result_t sc_store_client_watch(const sc_sockaddr_t *root, uint64_t session, int rank,
                                  int nranks, int64_t timeout_ms, int abort_fd, int *fd);
/* Says goodbye (so the root knows this rank left on purpose) and closes. */
void sc_store_client_close(sc_store_client_t *client);
/* Tells the root this rank failed and why (every rank of the session then
 * fails with that sentence) and closes. */
void sc_store_client_fail(sc_store_client_t *client, const char *why);

sc_result_t sc_store_set(sc_store_client_t *client, const char *key, const void *value, size_t len);
/* Waits until key is set; *value is malloc'ed (free it), NULL when empty. */
sc_result_t sc_store_get(sc_store_client_t *client, const char *key, void **value, size_t *len);
sc_result_t sc_store_wait(sc_store_client_t *client, const char *key);
sc_result_t sc_store_add(sc_store_client_t *client, const char *key, int64_t delta, int64_t *result);
/* Every rank gives len bytes; all receives nranks * len bytes in rank order. */
sc_result_t sc_store_gather(sc_store_client_t *client, const char *key, const void *mine,
                            size_t len, void *all);
/* Rank root's len bytes of buf reach buf on every rank. */
sc_result_t sc_store_bcast(sc_store_client_t *client, const char *key, int root, void *buf,
                           size_t len);

#endif
