#include "bootstrap/store_client.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/store_proto.h"
#include "util/clock.h"
#include "util/log.h"

/* The root answers a held request with TIMEOUT at the request's timeout; the
 * client waits this much longer before deciding the root itself is gone. */
#define SC_STORE_CLIENT_GRACE_MS 3000
/* Between attempts to join when the root dropped the connection unanswered. */
#define SC_STORE_CLIENT_HELLO_RETRY_MS 100

static int64_t sc_store_client_deadline(const sc_store_client_t *c) {
  if (c->timeout_ms < 0)
    return SC_DEADLINE_NEVER;
  return sc_deadline_after(c->timeout_ms + SC_STORE_CLIENT_GRACE_MS);
}

/* Reads a reply header and its text; on a failure reported by the root, raises
 * it with the root's sentence. The value, if any, is left in the socket. */
static sc_result_t sc_store_read_reply(sc_store_client_t *c, int64_t deadline,
                                       sc_store_reply_t *reply, const char *what,
                                       bool *explained) {
  *explained = false;
  SC_CHECK(sc_socket_recv_all(c->fd, reply, sizeof(*reply), deadline, c->abort_fd, c->root_text));
  if (reply->magic != SC_STORE_MAGIC || reply->text_len > SC_STORE_MAX_TEXT ||
      reply->value_len > SC_STORE_MAX_VALUE)
    return SC_RAISE(SYMCOMM_ERR_REMOTE, SC_BOOT, "%s sent a malformed reply to %s", c->root_text,
                    what);
  if (reply->status == SYMCOMM_OK) {
    if (reply->text_len > 0)
      return SC_RAISE(SYMCOMM_ERR_REMOTE, SC_BOOT, "%s sent a text with a success", c->root_text);
    return SYMCOMM_OK;
  }
  char text[SC_STORE_MAX_TEXT + 1] = "";
  if (reply->value_len > 0)
    return SC_RAISE(SYMCOMM_ERR_REMOTE, SC_BOOT, "%s sent a value with a failure", c->root_text);
  SC_CHECK(sc_socket_recv_all(c->fd, text, reply->text_len, deadline, c->abort_fd, c->root_text));
  text[reply->text_len] = '\0';
  *explained = true;
  if (reply->arg == SC_STORE_ARG_SESSION_FAILED)
    c->session_failed = true;
  sc_result_t status = (sc_result_t)reply->status;
  if (status > SYMCOMM_ERR_INTERNAL || status == SYMCOMM_IN_PROGRESS)
    status = SYMCOMM_ERR_REMOTE;
  /* A sentence about this very rank (its own failure echoed) names it once. */
  char me[32];
  int me_len = snprintf(me, sizeof(me), "rank %d", c->rank);
  if (strncmp(text, me, (size_t)me_len) == 0 && (text[me_len] == ' ' || text[me_len] == ':'))
    return SC_RAISE(status, SC_BOOT, "%s", text);
  /* The root's sentences name the step already when it matters. */
  if (strstr(text, "'") != NULL)
    return SC_RAISE(status, SC_BOOT, "rank %d: %s", c->rank, text);
  return SC_RAISE(status, SC_BOOT, "rank %d, %s: %s", c->rank, what, text);
}

/* One attempt to join (op HELLO) or watch (op WATCH): a connection and the
 * answer to the hello. *explained: the root answered (a refusal with its
 * reasons). */
static sc_result_t sc_store_client_hello(sc_store_client_t *c, const sc_sockaddr_t *root,
                                         sc_store_op_t op, int64_t deadline, bool *explained) {
  *explained = false;
  SC_CHECK(sc_socket_connect(root, deadline, c->abort_fd, &c->fd));
  sc_store_hello_t hello = {.magic = SC_STORE_MAGIC,
                            .version = SC_STORE_VERSION,
                            .op = (uint16_t)op,
                            .session = c->session,
                            .rank = c->rank,
                            .nranks = c->nranks};
  sc_result_t res;
  SC_CHECK_GOTO(
      sc_socket_send_all(c->fd, &hello, sizeof(hello), deadline, c->abort_fd, c->root_text), res,
      fail);
  sc_store_reply_t reply;
  SC_CHECK_GOTO(sc_store_read_reply(c, deadline, &reply,
                                    op == SC_STORE_OP_WATCH ? "watching the job" : "joining the job",
                                    explained),
                res, fail);
  return SYMCOMM_OK;
fail:
  close(c->fd);
  c->fd = -1;
  return res;
}

/* Connects and says a hello with `op` (HELLO, or WATCH for a watch). */
static sc_result_t sc_store_client_open(sc_store_client_t *c, const sc_sockaddr_t *root,
                                        uint64_t session, int rank, int nranks, int64_t timeout_ms,
                                        int abort_fd, sc_store_op_t op) {
  memset(c, 0, sizeof(*c));
  c->fd = -1;
  c->abort_fd = abort_fd;
  c->timeout_ms = timeout_ms;
  c->rank = rank;
  c->nranks = nranks;
  c->session = session;
  char addr[SC_SOCKADDR_TEXT];
  sc_sockaddr_format(root, addr, sizeof(addr));
  snprintf(c->root_text, sizeof(c->root_text), "root %s", addr);

  int64_t deadline = sc_deadline_after(timeout_ms);
  for (;;) {
    bool explained;
    sc_result_t res = sc_store_client_hello(c, root, op, deadline, &explained);
    if (res == SYMCOMM_OK)
      break;
    /* A root flooded by strangers drops connections that have not said
     * hello yet (store_server.h), possibly this one with its hello on the
     * way: say it again on a new connection. */
    bool dropped = !explained && (res == SYMCOMM_ERR_REMOTE || res == SYMCOMM_ERR_SYSTEM);
    if (!dropped || sc_now_ms() + SC_STORE_CLIENT_HELLO_RETRY_MS >= deadline)
      return res;
    SC_INFO(SC_BOOT, "rank %d: %s closed the connection before answering its hello; again",
            rank, c->root_text);
    struct pollfd p = {.fd = abort_fd, .events = POLLIN};
    if (poll(&p, abort_fd >= 0 ? 1 : 0, SC_STORE_CLIENT_HELLO_RETRY_MS) > 0)
      return SC_RAISE(SYMCOMM_ERR_ABORTED, SC_BOOT, "rank %d: aborted while joining at %s", rank,
                      c->root_text);
  }
  SC_TRACE(SC_BOOT, "rank %d of %d %s session %016llx at %s", rank, nranks,
           op == SC_STORE_OP_WATCH ? "watches" : "joined", (unsigned long long)session,
           c->root_text);
  return SYMCOMM_OK;
}

sc_result_t sc_store_client_connect(sc_store_client_t *c, const sc_sockaddr_t *root,
                                    uint64_t session, int rank, int nranks, int64_t timeout_ms,
                                    int abort_fd) {
  return sc_store_client_open(c, root, session, rank, nranks, timeout_ms, abort_fd,
                              SC_STORE_OP_HELLO);
}

sc_result_t sc_store_client_watch(const sc_sockaddr_t *root, uint64_t session, int rank,
                                  int nranks, int64_t timeout_ms, int abort_fd, int *fd) {
  sc_store_client_t c;
  SC_CHECK(sc_store_client_open(&c, root, session, rank, nranks, timeout_ms, abort_fd,
                                SC_STORE_OP_WATCH));
  *fd = c.fd;
  return SYMCOMM_OK;
}

/* Sends a last message that gets no reply (BYE or FAIL), then closes. Best
 * effort and brief: a root that is gone changes nothing here. */
static void sc_store_client_leave(sc_store_client_t *c, sc_store_op_t op, const char *why) {
  if (c->fd < 0)
    return;
  if (!c->broken) {
    size_t len = why != NULL ? strnlen(why, SC_STORE_MAX_TEXT - 1) : 0;
    char msg[sizeof(sc_store_request_t) + SC_STORE_MAX_TEXT];
    sc_store_request_t req = {.magic = SC_STORE_MAGIC, .op = (uint16_t)op,
                              .value_len = (uint32_t)len};
    memcpy(msg, &req, sizeof(req));
    if (len > 0)
      memcpy(msg + sizeof(req), why, len);
    ssize_t n = send(c->fd, msg, sizeof(req) + len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n != (ssize_t)(sizeof(req) + len))
      SC_TRACE(SC_BOOT, "rank %d: could not say goodbye to %s", c->rank, c->root_text);
  }
  close(c->fd);
  c->fd = -1;
}

void sc_store_client_close(sc_store_client_t *c) { sc_store_client_leave(c, SC_STORE_OP_BYE, NULL); }

void sc_store_client_fail(sc_store_client_t *c, const char *why) {
  sc_store_client_leave(c, SC_STORE_OP_FAIL, why);
}

/* One request and its reply. The reply's value goes to `into` (exactly
 * into_len bytes expected) or, with into == NULL, to a malloc'ed *out. */
static sc_result_t sc_store_call(sc_store_client_t *c, sc_store_op_t op, const char *key,
                                 const void *value, size_t len, int64_t arg, void *into,
                                 size_t into_len, void **out, size_t *out_len, int64_t *out_arg) {
  if (c->fd < 0 || c->broken)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_BOOT,
                    "rank %d: the connection to the %s is unusable after an earlier failure",
                    c->rank, c->root_text);
  size_t key_len = strlen(key);
  if (key_len == 0 || key_len > SC_STORE_MAX_KEY || len > SC_STORE_MAX_VALUE)
    return SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_BOOT, "store request '%s' of %zu bytes is too large",
                    key, len);
  char what[SC_STORE_MAX_KEY + 32];
  snprintf(what, sizeof(what), "'%s'", key);
  int64_t deadline = sc_store_client_deadline(c);
  sc_store_request_t req = {.magic = SC_STORE_MAGIC,
                            .op = (uint16_t)op,
                            .key_len = (uint32_t)key_len,
                            .value_len = (uint32_t)len,
                            .arg = arg,
                            .timeout_ms = c->timeout_ms < 0 ? INT64_MAX / 4 : c->timeout_ms};
  sc_result_t res;
  void *buf = NULL;
  SC_CHECK_GOTO(sc_socket_send_all(c->fd, &req, sizeof(req), deadline, c->abort_fd, c->root_text),
                res, broken);
  SC_CHECK_GOTO(sc_socket_send_all(c->fd, key, key_len, deadline, c->abort_fd, c->root_text), res,
                broken);
  if (len > 0)
    SC_CHECK_GOTO(sc_socket_send_all(c->fd, value, len, deadline, c->abort_fd, c->root_text), res,
                  broken);

  sc_store_reply_t reply;
  bool explained;
  res = sc_store_read_reply(c, deadline, &reply, what, &explained);
  if (res != SYMCOMM_OK) {
    /* A failure the root explained leaves the stream in step; others don't. */
    if (!explained)
      c->broken = true;
    return res;
  }
  if (into != NULL || out == NULL) {
    if (reply.value_len != into_len) {
      res = SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_BOOT, "%s answered %s with %u bytes, expected %zu",
                     c->root_text, what, reply.value_len, into_len);
      goto broken;
    }
    if (into_len > 0)
      SC_CHECK_GOTO(sc_socket_recv_all(c->fd, into, into_len, deadline, c->abort_fd, c->root_text),
                    res, broken);
  } else {
    if (reply.value_len > 0) {
      buf = malloc(reply.value_len);
      if (buf == NULL) {
        res = SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_BOOT, "no memory for %u bytes from the root",
                       reply.value_len);
        goto broken;
      }
      SC_CHECK_GOTO(
          sc_socket_recv_all(c->fd, buf, reply.value_len, deadline, c->abort_fd, c->root_text), res,
          broken);
    }
    *out = buf;
    *out_len = reply.value_len;
  }
  if (out_arg != NULL)
    *out_arg = reply.arg;
  return SYMCOMM_OK;
broken:
  free(buf);
  c->broken = true;
  return res;
}

sc_result_t sc_store_set(sc_store_client_t *c, const char *key, const void *value, size_t len) {
  return sc_store_call(c, SC_STORE_OP_SET, key, value, len, 0, NULL, 0, NULL, NULL, NULL);
}

sc_result_t sc_store_get(sc_store_client_t *c, const char *key, void **value, size_t *len) {
  return sc_store_call(c, SC_STORE_OP_GET, key, NULL, 0, 0, NULL, 0, value, len, NULL);
}

sc_result_t sc_store_wait(sc_store_client_t *c, const char *key) {
  return sc_store_call(c, SC_STORE_OP_WAIT, key, NULL, 0, 0, NULL, 0, NULL, NULL, NULL);
}

sc_result_t sc_store_add(sc_store_client_t *c, const char *key, int64_t delta, int64_t *result) {
  return sc_store_call(c, SC_STORE_OP_ADD, key, NULL, 0, delta, NULL, 0, NULL, NULL, result);
}

sc_result_t sc_store_gather(sc_store_client_t *c, const char *key, const void *mine, size_t len,
                            void *all) {
  return sc_store_call(c, SC_STORE_OP_GATHER, key, mine, len, 0, all, len * (size_t)c->nranks,
                       NULL, NULL, NULL);
}

sc_result_t sc_store_bcast(sc_store_client_t *c, const char *key, int root, void *buf,
                           size_t len) {
  bool is_root = c->rank == root;
  if (is_root) {
    /* The root's reply carries its own value back; read it into a scratch copy. */
    void *echo = NULL;
    size_t echo_len = 0;
    SC_CHECK(sc_store_call(c, SC_STORE_OP_BCAST, key, buf, len, root, NULL, 0, &echo, &echo_len,
                           NULL));
    free(echo);
    return SYMCOMM_OK;
  }
  return sc_store_call(c, SC_STORE_OP_BCAST, key, NULL, 0, root, buf, len, NULL, NULL, NULL);
}
