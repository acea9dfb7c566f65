#include "bootstrap/root.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "util/log.h"

#define SC_UNIQUE_ID_MAGIC 0x44494353u /* "SCID" */

/* The layout inside symcomm_unique_id_t. */
typedef struct sc_unique_id_layout {
  uint32_t magic;
  uint16_t version;
  uint16_t addr_len;
  uint64_t session;
  union {
    struct sockaddr sa;
    struct sockaddr_in in;
    struct sockaddr_in6 in6;
  } addr;
} sc_unique_id_layout_t;

_Static_assert(sizeof(sc_unique_id_layout_t) <= SYMCOMM_UNIQUE_ID_BYTES,
               "a unique id must hold a root address");

sc_result_t sc_root_random_session(uint64_t *session) {
  uint64_t value = 0;
  while (value == 0) {
    if (getrandom(&value, sizeof(value), 0) != (ssize_t)sizeof(value))
      return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_BOOT, "getrandom failed");
  }
  *session = value;
  return SYMCOMM_OK;
}

void sc_root_encode(const sc_root_addr_t *root, symcomm_unique_id_t *id) {
  sc_unique_id_layout_t layout;
  memset(&layout, 0, sizeof(layout));
  layout.magic = SC_UNIQUE_ID_MAGIC;
  layout.version = 1;
  layout.addr_len = (uint16_t)root->addr.len;
  layout.session = root->session;
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
  if (layout.magic != SC_UNIQUE_ID_MAGIC || layout.version != 1 || !sane_len ||
      layout.session == 0)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_BOOT,
                    "the unique id was not made by symcomm_get_unique_id (or was damaged in transit)");
  memset(root, 0, sizeof(*root));
  memcpy(&root->addr.storage, &layout.addr, layout.addr_len);
  root->addr.len = layout.addr_len;
  root->session = layout.session;
  return SYMCOMM_OK;
}

sc_result_t sc_root_start(const sc_sockaddr_t *where, const sc_sockaddr_t *near, uint64_t session,
                          int64_t idle_timeout_ms, sc_root_addr_t *root,
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
  sc_result_t res = sc_store_server_start(fd, session, false, idle_timeout_ms, server);
  if (res != SYMCOMM_OK) {
    close(fd);
    return res;
  }
  memset(root, 0, sizeof(*root));
  /* Peers connect to the address they were told of; a wildcard bind is
   * reached through the address that named it. */
  root->addr = where != NULL ? *where : bound;
  sc_sockaddr_set_port(&root->addr, sc_sockaddr_port(&bound));
  root->session = session;
  char text[SC_SOCKADDR_TEXT];
  sc_sockaddr_format(&root->addr, text, sizeof(text));
  SC_INFO(SC_BOOT, "new root at %s%s%s for session %016llx", text, ifname[0] ? " on " : "", ifname,
          (unsigned long long)session);
  return SYMCOMM_OK;
}
