#include "bootstrap/bootstrap.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "util/log.h"

sc_result_t sc_bootstrap_connect(sc_bootstrap_t *b, const sc_root_addr_t *root, int rank,
                                 int nranks, int64_t timeout_ms, int abort_fd) {
  memset(b, 0, sizeof(*b));
  return sc_store_client_connect(&b->client, &root->addr, root->session, rank, nranks, timeout_ms,
                                 abort_fd);
}

static void sc_bootstrap_key(sc_bootstrap_t *b, const char *step, char *key, size_t len) {
  snprintf(key, len, "%s#%llu", step, (unsigned long long)b->seq++);
}

sc_result_t sc_bootstrap_allgather(sc_bootstrap_t *b, const char *step, const void *mine,
                                   size_t len, void *all) {
  char key[128];
  sc_bootstrap_key(b, step, key, sizeof(key));
  return sc_store_gather(&b->client, key, mine, len, all);
}

sc_result_t sc_bootstrap_bcast(sc_bootstrap_t *b, const char *step, int root, void *buf,
                               size_t len) {
  char key[128];
  sc_bootstrap_key(b, step, key, sizeof(key));
  return sc_store_bcast(&b->client, key, root, buf, len);
}

sc_result_t sc_bootstrap_barrier(sc_bootstrap_t *b, const char *step) {
  char key[128];
  sc_bootstrap_key(b, step, key, sizeof(key));
  return sc_store_gather(&b->client, key, NULL, 0, NULL);
}

sc_result_t sc_bootstrap_local_address(const sc_bootstrap_t *b, sc_sockaddr_t *addr) {
  memset(addr, 0, sizeof(*addr));
  addr->len = sizeof(addr->storage);
  if (getsockname(b->client.fd, (struct sockaddr *)&addr->storage, &addr->len) != 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_BOOT, "getsockname on the root connection failed");
  return SYMCOMM_OK;
}

void sc_bootstrap_shutdown(sc_bootstrap_t *b) {
  if (b->client.fd >= 0)
    shutdown(b->client.fd, SHUT_RDWR);
}

void sc_bootstrap_close(sc_bootstrap_t *b) { sc_store_client_close(&b->client); }

void sc_bootstrap_fail(sc_bootstrap_t *b, const char *why) { sc_store_client_fail(&b->client, why); }

void sc_bootstrap_set_abort_fd(sc_bootstrap_t *b, int abort_fd) { b->client.abort_fd = abort_fd; }
