#include "bootstrap/root.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

#define SC_UNIQUE_ID_MAGIC 0x44494353u /* "SCID" */
#define SC_UNIQUE_ID_VERSION 2        /* 2: carries the secret, not a session id */

/* The layout inside symcomm_unique_id_t. */
typedef struct sc_unique_id_layout {
  uint32_t magic;
  uint16_t version;
  uint16_t addr_len;
  sc_secret_t secret;
  union {
    struct sockaddr sa;
    struct sockaddr_in in;
    struct sockaddr_in6 in6;
  } addr;
} sc_unique_id_layout_t;

_Static_assert(sizeof(sc_unique_id_layout_t) <= SYMCOMM_UNIQUE_ID_BYTES,
               "a unique id must hold a root address and a secret");

uint64_t sc_root_session(const sc_secret_t *secret) {
  return sc_secret_derive64(secret, "session", 0, 0, 0) | 1;
}

void sc_root_set_secret(sc_root_addr_t *root, const sc_secret_t *secret) {
  root->secret = *secret;
  root->session = sc_root_session(secret);
}

void sc_root_encode(const sc_root_addr_t *root, symcomm_unique_id_t *id) {
  sc_unique_id_layout_t layout;
  memset(&layout, 0, sizeof(layout));
  layout.magic = SC_UNIQUE_ID_MAGIC;
  layout.version = SC_UNIQUE_ID_VERSION;
  layout.addr_len = (uint16_t)root->addr.len;
  layout.secret = root->secret;
  memcpy(&layout.addr, &root->addr.storage, root->addr.len);
  memset(id, 0, sizeof(*id));
  memcpy(id->internal, &layout, sizeof(layout));
}

sc_result_t sc_root_decode(const symcomm_unique_id_t *id, sc_root_addr_t *root) {
  sc_unique_id_layout_t layout;
  memcpy(&layout, id->internal, sizeof(layout));
  sa_family_t family = layout.addr.sa.sa_family;
  bool sane_len = (family == AF_INET && layout.addr_len == sizeof(struct sockaddr_in)) ||
                  (family == AF_INET6 && layout.addr_len == sizeof(struct sockaddr_in6));
  static const sc_secret_t none;
  if (layout.magic != SC_UNIQUE_ID_MAGIC || layout.version != SC_UNIQUE_ID_VERSION || !sane_len ||
      sc_secret_equal(&layout.secret, &none))
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_BOOT,
                    "the unique id was not made by symcomm_get_unique_id of this version (or was "
                    "damaged in transit)");
  memset(root, 0, sizeof(*root));
  memcpy(&root->addr.storage, &layout.addr, layout.addr_len);
  root->addr.len = layout.addr_len;
  sc_root_set_secret(root, &layout.secret);
  return SYMCOMM_OK;
}

sc_result_t sc_root_start(const sc_sockaddr_t *where, const sc_sockaddr_t *near,
                          const sc_secret_t *secret, int64_t idle_timeout_ms, sc_root_addr_t *root,
                          sc_store_server_t **server) {
  sc_sockaddr_t bind_addr, bound;
  char ifname[64] = "";
  if (where != NULL) {
    sc_sockaddr_any(where, &bind_addr);
  } else if (near != NULL) {
    bind_addr = *near;
    sc_sockaddr_set_port(&bind_addr, 0);
  } else {
    SC_CHECK(sc_socket_pick_address(&bind_addr, ifname, sizeof(ifname)));
    sc_sockaddr_set_port(&bind_addr, 0);
  }
  int fd = -1;
  SC_CHECK(sc_socket_listen(&bind_addr, &fd, &bound));
  sc_store_server_config_t config = {.only_session = sc_root_session(secret),
                                     .idle_timeout_ms = idle_timeout_ms};
  sc_result_t res = sc_store_server_start(fd, &config, server);
  if (res != SYMCOMM_OK) {
    close(fd);
    return res;
  }
  memset(root, 0, sizeof(*root));
  /* Peers connect to the address they were told of; a wildcard bind is
   * reached through the address that named it. */
  root->addr = where != NULL ? *where : bound;
  sc_sockaddr_set_port(&root->addr, sc_sockaddr_port(&bound));
  sc_root_set_secret(root, secret);
  char text[SC_SOCKADDR_TEXT];
  sc_sockaddr_format(&root->addr, text, sizeof(text));
  SC_INFO(SC_BOOT, "new root at %s%s%s for session %016llx", text, ifname[0] ? " on " : "", ifname,
          (unsigned long long)root->session);
  return SYMCOMM_OK;
}
