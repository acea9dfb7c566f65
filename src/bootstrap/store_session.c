#include "bootstrap/store_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/log.h"

enum sc_rank_state { RANK_NEVER = 0, RANK_JOINED, RANK_LEFT, RANK_LOST };

typedef struct sc_store_kv {
  char *key;
  void *value;
  size_t len;
  struct sc_store_kv *next;
} sc_store_kv_t;

struct sc_store_gather {
  char *key;
  int op;   /* SC_STORE_OP_GATHER or SC_STORE_OP_BCAST */
  int root; /* BCAST */
  size_t len;
  void **data;
  bool *given;
  int given_count;
  int answered;
  sc_store_blob_t *result; /* built once, sent to every rank */
  struct sc_store_gather *next;
};

struct sc_store_session {
  uint64_t id;
  int nranks;
  int joined;
  uint8_t *state;
  sc_store_conn_t **conn;
  char (*first_peer)[SC_SOCKADDR_TEXT];
  sc_result_t failed;
  char failed_text[SC_STORE_MAX_TEXT];
  bool formed; /* an all-gather of every rank has completed */
  /* For watches: the rank the failure names, why, and its own sentence. */
  int failed_rank;
  sc_store_cause_t failed_cause;
  char failed_detail[SC_STORE_MAX_TEXT];
  sc_store_conn_t **watch; /* [nranks] each rank's watch connection, if any */
  sc_store_kv_t *kv;
  size_t kv_bytes; /* keys and values in kv, at most SC_STORE_MAX_SESSION_KV */
  sc_store_gather_t *gathers;
  struct sc_store_session *next;
};

/* ------------------------------------------------------------ replies */

void sc_store_conn_reply(sc_store_conn_t *conn, sc_result_t status, int64_t arg,
                         const void *value, size_t value_len, const char *text) {
  size_t text_len = text != NULL ? strnlen(text, SC_STORE_MAX_TEXT) : 0;
  sc_store_blob_t *blob = sc_store_blob_new(sizeof(sc_store_reply_t) + text_len + value_len);
  if (blob == NULL || !sc_store_output_push(&conn->out, blob)) {
    SC_WARN(SC_BOOT, "root: out of memory replying to %s; closing it", conn->peer);
    conn->closing = true;
    sc_store_blob_unref(blob);
    return;
  }
  sc_store_reply_t reply = {.magic = SC_STORE_MAGIC,
                            .status = (uint16_t)status,
                            .value_len = (uint32_t)value_len,
                            .text_len = (uint32_t)text_len,
                            .arg = arg};
  memcpy(blob->data, &reply, sizeof(reply));
  if (text_len > 0)
    memcpy(blob->data + sizeof(reply), text, text_len);
  if (value_len > 0)
    memcpy(blob->data + sizeof(reply) + text_len, value, value_len);
  sc_store_blob_unref(blob); /* the queue holds it now */
}

/* A successful reply whose value is a block shared with other connections. */
static void sc_store_conn_reply_shared(sc_store_conn_t *conn, sc_store_blob_t *value) {
  sc_store_blob_t *head = sc_store_blob_new(sizeof(sc_store_reply_t));
  if (head == NULL || !sc_store_output_push(&conn->out, head) ||
      !sc_store_output_push(&conn->out, value)) {
    SC_WARN(SC_BOOT, "root: out of memory replying to %s; closing it", conn->peer);
    conn->closing = true;
    sc_store_blob_unref(head);
    return;
  }
  sc_store_reply_t reply = {.magic = SC_STORE_MAGIC,
                            .status = SYMCOMM_OK,
                            .value_len = (uint32_t)value->len};
  memcpy(head->data, &reply, sizeof(reply));
  sc_store_blob_unref(head);
}

/* ------------------------------------------------------------ lookups */

sc_store_session_t *sc_store_session_find(sc_store_session_t *sessions, uint64_t id) {
  for (sc_store_session_t *s = sessions; s != NULL; s = s->next)
    if (s->id == id)
      return s;
  return NULL;
}

static sc_store_kv_t *sc_store_kv_find(sc_store_session_t *s, const char *key) {
  for (sc_store_kv_t *kv = s->kv; kv != NULL; kv = kv->next)
    if (strcmp(kv->key, key) == 0)
      return kv;
  return NULL;
}

static sc_store_gather_t *sc_store_gather_find(sc_store_session_t *s, const char *key) {
  for (sc_store_gather_t *g = s->gathers; g != NULL; g = g->next)
    if (strcmp(g->key, key) == 0)
      return g;
  return NULL;
}

static void sc_store_gather_free(sc_store_session_t *s, sc_store_gather_t *g) {
  for (sc_store_gather_t **p = &s->gathers; *p != NULL; p = &(*p)->next)
    if (*p == g) {
      *p = g->next;
      break;
    }
  for (int r = 0; r < s->nranks; r++)
    free(g->data[r]);
  sc_store_blob_unref(g->result);
  free(g->data);
  free(g->given);
  free(g->key);
  free(g);
}

static void sc_store_unpark(sc_store_conn_t *conn) {
  conn->parked = false;
  conn->active_at = sc_now_ms();
  conn->gather = NULL;
  free(conn->key);
  conn->key = NULL;
}

/* "3, 5, 9" for the ranks of s whose flag is clear, at most a line's worth. */
static void sc_store_list_ranks(const sc_store_session_t *s, const bool *have, int want_state,
                                char *buf, size_t len) {
  size_t n = 0;
  int listed = 0;
  buf[0] = '\0';
  for (int r = 0; r < s->nranks && n + 16 < len; r++) {
    bool missing = have != NULL ? !have[r] : s->state[r] == want_state;
    if (!missing)
      continue;
    if (listed == 16) {
      n += (size_t)snprintf(buf + n, len - n, ", ...");
      break;
    }
    n += (size_t)snprintf(buf + n, len - n, "%s%d", listed ? ", " : "", r);
    listed++;
  }
}

/* ------------------------------------------------------------ answering */

/* The value every rank of a finished gather or broadcast receives. */
static sc_store_blob_t *sc_store_gather_result(sc_store_session_t *s, sc_store_gather_t *g) {
  if (g->result != NULL)
    return g->result;
  size_t total = g->op == SC_STORE_OP_GATHER ? g->len * (size_t)s->nranks : g->len;
  sc_store_blob_t *blob = sc_store_blob_new(total);
  if (blob == NULL)
    return NULL;
  if (g->op == SC_STORE_OP_GATHER) {
    for (int r = 0; r < s->nranks; r++)
      if (g->len > 0)
        memcpy(blob->data + (size_t)r * g->len, g->data[r], g->len);
  } else if (g->len > 0) {
    memcpy(blob->data, g->data[g->root], g->len);
  }
  g->result = blob;
  return blob;
}

/* Replies to a parked conn if its request can be answered now; true if so. */
static bool sc_store_try_answer(sc_store_conn_t *conn) {
  sc_store_session_t *s = conn->session;
  if (s->failed != SYMCOMM_OK) {
    sc_store_conn_reply(conn, s->failed, SC_STORE_ARG_SESSION_FAILED, NULL, 0, s->failed_text);
    sc_store_unpark(conn);
    return true;
  }
  const sc_store_request_t *req = &conn->request;
  if (req->op == SC_STORE_OP_GET || req->op == SC_STORE_OP_WAIT) {
    sc_store_kv_t *kv = sc_store_kv_find(s, conn->key);
    if (kv == NULL)
      return false;
    if (req->op == SC_STORE_OP_GET)
      sc_store_conn_reply(conn, SYMCOMM_OK, 0, kv->value, kv->len, NULL);
    else
      sc_store_conn_reply(conn, SYMCOMM_OK, 0, NULL, 0, NULL);
    sc_store_unpark(conn);
    return true;
  }

  sc_store_gather_t *g = conn->gather;
  bool ready = g->op == SC_STORE_OP_GATHER ? g->given_count == s->nranks : g->given[g->root];
  if (!ready) {
    /* A rank that has left can never give its part. */
    for (int r = 0; r < s->nranks; r++) {
      if (g->given[r] || (g->op == SC_STORE_OP_BCAST && r != g->root))
        continue;
      if (s->state[r] == RANK_LEFT || s->state[r] == RANK_LOST) {
        char text[SC_STORE_MAX_TEXT];
        snprintf(text, sizeof(text), "rank %d destroyed its communicator before taking part in '%s'",
                 r, g->key);
        sc_store_conn_reply(conn, SYMCOMM_ERR_REMOTE, 0, NULL, 0, text);
        sc_store_unpark(conn);
        return true;
      }
    }
    return false;
  }
  if (g->op == SC_STORE_OP_GATHER)
    s->formed = true;
  sc_store_blob_t *result = sc_store_gather_result(s, g);
  if (result == NULL)
    sc_store_conn_reply(conn, SYMCOMM_ERR_OUT_OF_MEMORY, 0, NULL, 0,
                        "the root ran out of memory assembling a gather");
  else
    sc_store_conn_reply_shared(conn, result);
  sc_store_unpark(conn);
  if (++g->answered == s->nranks)
    sc_store_gather_free(s, g);
  return true;
}

static void sc_store_wake(sc_store_session_t *s) {
  for (int r = 0; r < s->nranks; r++) {
    sc_store_conn_t *c = s->conn[r];
    if (c != NULL && c->parked)
      sc_store_try_answer(c);
  }
}

/* Tells a watch that `rank` left the session on purpose; it stays open. */
static void sc_store_watch_tell_left(sc_store_conn_t *w, int rank) {
  sc_store_conn_reply(w, SYMCOMM_OK, sc_store_watch_arg(rank, SC_STORE_CAUSE_LEFT), NULL, 0, NULL);
}

/* Tells a watch how its session failed; the watch then closes. */
static void sc_store_watch_tell(const sc_store_session_t *s, sc_store_conn_t *w) {
  sc_store_conn_reply(w, s->failed, sc_store_watch_arg(s->failed_rank, s->failed_cause), NULL, 0,
                      s->failed_detail);
  w->closing = true;
}

/* Fails the session: `why` for its requests, and for its watches the rank it
 * names, the cause and that rank's own sentence (`detail`). */
static void sc_store_session_fail_as(sc_store_session_t *s, sc_result_t result, int rank,
                                     sc_store_cause_t cause, const char *detail, const char *why) {
  if (s->failed != SYMCOMM_OK)
    return;
  /* Warn only when the failure reaches a rank that is waiting: a session whose
   * ranks are idle (typically at exit) just ends. */
  bool someone_waits = false;
  for (int r = 0; r < s->nranks && !someone_waits; r++)
    someone_waits = s->conn[r] != NULL && s->conn[r]->parked;
  sc_log(someone_waits ? SC_LOG_WARN : SC_LOG_INFO, SC_BOOT, __FILE__, __LINE__,
         "root: session %016llx failed: %s", (unsigned long long)s->id, why);
  s->failed = result;
  snprintf(s->failed_text, sizeof(s->failed_text), "%s", why);
  s->failed_rank = rank;
  s->failed_cause = cause;
  snprintf(s->failed_detail, sizeof(s->failed_detail), "%s", detail);
  sc_store_wake(s);
  for (int r = 0; r < s->nranks; r++)
    if (s->watch[r] != NULL)
      sc_store_watch_tell(s, s->watch[r]);
}

void sc_store_session_fail(sc_store_session_t *s, sc_result_t result, const char *why) {
  sc_store_session_fail_as(s, result, -1, SC_STORE_CAUSE_OTHER, why, why);
}

void sc_store_session_fail_by(sc_store_session_t *s, sc_result_t result, int rank,
                              sc_store_cause_t cause, const char *detail) {
  char why[SC_STORE_MAX_TEXT];
  if (rank >= 0)
    snprintf(why, sizeof(why), "rank %d: %s", rank, detail);
  else
    snprintf(why, sizeof(why), "%s", detail);
  sc_store_session_fail_as(s, result, rank, cause, detail, why);
}

void sc_store_session_fail_all(sc_store_session_t *sessions, sc_result_t result, const char *why) {
  for (sc_store_session_t *s = sessions; s != NULL; s = s->next)
    sc_store_session_fail(s, result, why);
}

void sc_store_session_fail_all_exiting(sc_store_session_t *sessions, const char *why) {
  for (sc_store_session_t *s = sessions; s != NULL; s = s->next)
    sc_store_session_fail_as(s, SYMCOMM_ERR_REMOTE, -1, SC_STORE_CAUSE_LOST, why, why);
}

/* ------------------------------------------------------------ admission */

static sc_store_session_t *sc_store_session_new(uint64_t id, int nranks) {
  sc_store_session_t *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return NULL;
  s->id = id;
  s->nranks = nranks;
  s->state = calloc((size_t)nranks, sizeof(*s->state));
  s->conn = calloc((size_t)nranks, sizeof(*s->conn));
  s->first_peer = calloc((size_t)nranks, sizeof(*s->first_peer));
  s->watch = calloc((size_t)nranks, sizeof(*s->watch));
  if (s->state == NULL || s->conn == NULL || s->first_peer == NULL || s->watch == NULL) {
    free(s->state);
    free(s->conn);
    free(s->first_peer);
    free(s->watch);
    free(s);
    return NULL;
  }
  return s;
}

static void sc_store_session_free(sc_store_session_t *s) {
  while (s->gathers != NULL)
    sc_store_gather_free(s, s->gathers);
  for (sc_store_kv_t *kv = s->kv, *next; kv != NULL; kv = next) {
    next = kv->next;
    free(kv->key);
    free(kv->value);
    free(kv);
  }
  free(s->state);
  free(s->conn);
  free(s->first_peer);
  free(s->watch);
  free(s);
}

static bool sc_store_session_idle(const sc_store_session_t *s) {
  for (int r = 0; r < s->nranks; r++)
    if (s->conn[r] != NULL || s->watch[r] != NULL)
      return false;
  return true;
}

/* Makes room for one more session by dropping the oldest idle one. */
static bool sc_store_session_make_room(sc_store_session_t **sessions) {
  int count = 0;
  sc_store_session_t **oldest = NULL;
  for (sc_store_session_t **p = sessions; *p != NULL; p = &(*p)->next) {
    count++;
    if (sc_store_session_idle(*p))
      oldest = p; /* new sessions go first: the last idle one is the oldest */
  }
  if (count < SC_STORE_MAX_SESSIONS)
    return true;
  if (oldest == NULL)
    return false;
  sc_store_session_t *s = *oldest;
  *oldest = s->next;
  sc_store_session_free(s);
  return true;
}

static void sc_store_refuse(sc_store_conn_t *conn, sc_result_t status, const char *text) {
  SC_WARN(SC_BOOT, "root: refusing %s: %s", conn->peer, text);
  sc_store_conn_reply(conn, status, 0, NULL, 0, text);
  conn->closing = true;
}

void sc_store_session_admit(sc_store_session_t **sessions, sc_store_conn_t *conn, uint64_t id,
                            int rank, int nranks) {
  char text[SC_STORE_MAX_TEXT];
  if (nranks < 1 || nranks > SC_STORE_MAX_RANKS || rank < 0 || rank >= nranks) {
    snprintf(text, sizeof(text), "rank %d of %d is not a valid rank (at most %d ranks)", rank,
             nranks, SC_STORE_MAX_RANKS);
    sc_store_refuse(conn, SYMCOMM_ERR_INVALID_ARGUMENT, text);
    return;
  }
  sc_store_session_t *s = sc_store_session_find(*sessions, id);
  if (s == NULL) {
    if (!sc_store_session_make_room(sessions)) {
      sc_store_refuse(conn, SYMCOMM_ERR_INVALID_USAGE,
                      "the root already serves its maximum number of jobs");
      return;
    }
    s = sc_store_session_new(id, nranks);
    if (s == NULL) {
      sc_store_refuse(conn, SYMCOMM_ERR_OUT_OF_MEMORY, "the root ran out of memory");
      return;
    }
    s->next = *sessions;
    *sessions = s;
  }
  if (s->failed != SYMCOMM_OK) {
    sc_store_refuse(conn, s->failed, s->failed_text);
    return;
  }
  if (nranks != s->nranks) {
    snprintf(text, sizeof(text),
             "rank %d (%s) says the job has %d ranks, but ranks before it said %d", rank,
             conn->peer, nranks, s->nranks);
    sc_store_refuse(conn, SYMCOMM_ERR_INVALID_USAGE, text);
    sc_store_session_fail(s, SYMCOMM_ERR_INVALID_USAGE, text);
    return;
  }
  if (s->state[rank] != RANK_NEVER) {
    snprintf(text, sizeof(text), "rank %d joined twice (first from %s, again from %s)", rank,
             s->first_peer[rank], conn->peer);
    sc_store_refuse(conn, SYMCOMM_ERR_INVALID_USAGE, text);
    sc_store_session_fail(s, SYMCOMM_ERR_INVALID_USAGE, text);
    return;
  }
  s->state[rank] = RANK_JOINED;
  s->conn[rank] = conn;
  snprintf(s->first_peer[rank], sizeof(s->first_peer[rank]), "%s", conn->peer);
  s->joined++;
  conn->session = s;
  conn->rank = rank;
  conn->ready = true;
  SC_TRACE(SC_BOOT, "root: rank %d of %d joined session %016llx from %s (%d joined)", rank, nranks,
           (unsigned long long)id, conn->peer, s->joined);
  sc_store_conn_reply(conn, SYMCOMM_OK, 0, NULL, 0, NULL);
}

void sc_store_session_watch(sc_store_session_t *sessions, sc_store_conn_t *conn, uint64_t id,
                            int rank, int nranks) {
  char text[SC_STORE_MAX_TEXT];
  sc_store_session_t *s = sc_store_session_find(sessions, id);
  const char *wrong = NULL;
  if (s == NULL)
    wrong = "of a job this root does not serve";
  else if (nranks != s->nranks || rank < 0 || rank >= s->nranks)
    wrong = "that is not a rank of the job";
  else if (s->state[rank] == RANK_NEVER)
    wrong = "that has not joined";
  else if (s->watch[rank] != NULL)
    wrong = "that has a watch already";
  if (wrong != NULL) {
    snprintf(text, sizeof(text), "a watch for rank %d of %d %s", rank, nranks, wrong);
    sc_store_refuse(conn, SYMCOMM_ERR_INVALID_USAGE, text);
    return;
  }
  s->watch[rank] = conn;
  conn->session = s;
  conn->rank = rank;
  conn->ready = true;
  conn->watch = true;
  sc_store_conn_reply(conn, SYMCOMM_OK, 0, NULL, 0, NULL);
  if (s->failed != SYMCOMM_OK) {
    sc_store_watch_tell(s, conn);
    return;
  }
  for (int r = 0; r < s->nranks; r++)
    if (s->state[r] == RANK_LEFT)
      sc_store_watch_tell_left(conn, r);
}

/* ------------------------------------------------------------ requests */

/* Stores a copy of value under key: OK, OUT_OF_MEMORY, or INVALID_USAGE
 * when the session's keys and values would pass SC_STORE_MAX_SESSION_KV (a
 * client storing without end must not grow the root's process). */
static sc_result_t sc_store_put(sc_store_session_t *s, const char *key, const void *value,
                                size_t len) {
  sc_store_kv_t *kv = sc_store_kv_find(s, key);
  size_t key_bytes = strlen(key) + 1;
  size_t after = s->kv_bytes - (kv != NULL ? kv->len : 0) + (kv == NULL ? key_bytes : 0) + len;
  if (after > SC_STORE_MAX_SESSION_KV)
    return SYMCOMM_ERR_INVALID_USAGE;
  void *copy = len > 0 ? malloc(len) : NULL;
  if (len > 0 && copy == NULL)
    return SYMCOMM_ERR_OUT_OF_MEMORY;
  if (kv == NULL) {
    kv = calloc(1, sizeof(*kv));
    if (kv == NULL || (kv->key = strdup(key)) == NULL) {
      free(kv);
      free(copy);
      return SYMCOMM_ERR_OUT_OF_MEMORY;
    }
    kv->next = s->kv;
    s->kv = kv;
  }
  if (len > 0)
    memcpy(copy, value, len);
  free(kv->value);
  kv->value = copy;
  kv->len = len;
  s->kv_bytes = after;
  sc_store_wake(s);
  return SYMCOMM_OK;
}

/* Replies to a SET or ADD whose store failed. */
static void sc_store_put_failed(sc_store_conn_t *conn, sc_result_t status, const char *key,
                                size_t len) {
  char text[SC_STORE_MAX_TEXT];
  if (status == SYMCOMM_ERR_OUT_OF_MEMORY)
    snprintf(text, sizeof(text), "the root ran out of memory");
  else
    snprintf(text, sizeof(text),
             "storing %zu bytes under '%.200s' would pass the root's limit of %u bytes of keys "
             "and values per session",
             len, key, SC_STORE_MAX_SESSION_KV);
  sc_store_conn_reply(conn, status, 0, NULL, 0, text);
}

static void sc_store_handle_add(sc_store_conn_t *conn, const char *key, int64_t delta) {
  sc_store_session_t *s = conn->session;
  sc_store_kv_t *kv = sc_store_kv_find(s, key);
  char text[SC_STORE_MAX_TEXT];
  int64_t value = 0;
  if (kv != NULL) {
    if (kv->len != sizeof(int64_t)) {
      snprintf(text, sizeof(text), "key '%s' holds %zu bytes, not a counter", key, kv->len);
      sc_store_conn_reply(conn, SYMCOMM_ERR_INVALID_USAGE, 0, NULL, 0, text);
      return;
    }
    memcpy(&value, kv->value, sizeof(value));
  }
  if (__builtin_add_overflow(value, delta, &value)) {
    snprintf(text, sizeof(text), "adding %lld to counter '%s' overflows", (long long)delta, key);
    sc_store_conn_reply(conn, SYMCOMM_ERR_INVALID_ARGUMENT, 0, NULL, 0, text);
    return;
  }
  /* Stored as 8 bytes, so that GET of a counter works like any other key. */
  sc_result_t stored = sc_store_put(s, key, &value, sizeof(value));
  if (stored != SYMCOMM_OK)
    sc_store_put_failed(conn, stored, key, sizeof(value));
  else
    sc_store_conn_reply(conn, SYMCOMM_OK, value, NULL, 0, NULL);
}

/* Fails the session over a mistake in a gather and tells the caller too. */
static void sc_store_gather_mistake(sc_store_conn_t *conn, const char *text) {
  sc_store_session_fail(conn->session, SYMCOMM_ERR_INVALID_USAGE, text);
  sc_store_conn_reply(conn, SYMCOMM_ERR_INVALID_USAGE, 0, NULL, 0, text);
}

static sc_store_gather_t *sc_store_gather_new(sc_store_session_t *s, const char *key, int op,
                                              int root) {
  sc_store_gather_t *g = calloc(1, sizeof(*g));
  if (g == NULL)
    return NULL;
  g->data = calloc((size_t)s->nranks, sizeof(void *));
  g->given = calloc((size_t)s->nranks, sizeof(bool));
  g->key = strdup(key);
  if (g->data == NULL || g->given == NULL || g->key == NULL) {
    free(g->data);
    free(g->given);
    free(g->key);
    free(g);
    return NULL;
  }
  g->op = op;
  g->root = root;
  g->len = (size_t)-1;
  g->next = s->gathers;
  s->gathers = g;
  return g;
}

/* Records conn's part of a gather or broadcast and parks conn on it. */
static void sc_store_handle_collective(sc_store_conn_t *conn, const char *key, const void *value,
                                       size_t len) {
  sc_store_session_t *s = conn->session;
  const sc_store_request_t *req = &conn->request;
  char text[SC_STORE_MAX_TEXT];
  if (req->op == SC_STORE_OP_BCAST && (req->arg < 0 || req->arg >= s->nranks)) {
    snprintf(text, sizeof(text), "broadcast '%s' names root %lld of %d ranks", key,
             (long long)req->arg, s->nranks);
    sc_store_conn_reply(conn, SYMCOMM_ERR_INVALID_ARGUMENT, 0, NULL, 0, text);
    return;
  }
  sc_store_gather_t *g = sc_store_gather_find(s, key);
  if (g == NULL && (g = sc_store_gather_new(s, key, req->op, (int)req->arg)) == NULL) {
    sc_store_conn_reply(conn, SYMCOMM_ERR_OUT_OF_MEMORY, 0, NULL, 0, "the root ran out of memory");
    return;
  }
  if (g->op != req->op || (g->op == SC_STORE_OP_BCAST && g->root != req->arg)) {
    snprintf(text, sizeof(text), "ranks disagree on '%s': rank %d calls a different operation or root",
             key, conn->rank);
    sc_store_gather_mistake(conn, text);
    return;
  }
  if (g->given[conn->rank]) {
    snprintf(text, sizeof(text), "rank %d took part in '%s' twice", conn->rank, key);
    sc_store_gather_mistake(conn, text);
    return;
  }
  bool gives = g->op == SC_STORE_OP_GATHER || conn->rank == g->root;
  if (gives) {
    if (g->len != (size_t)-1 && g->len != len) {
      snprintf(text, sizeof(text), "ranks disagree on '%s': rank %d gives %zu bytes, others %zu",
               key, conn->rank, len, g->len);
      sc_store_gather_mistake(conn, text);
      return;
    }
    size_t total = g->op == SC_STORE_OP_GATHER ? len * (size_t)s->nranks : len;
    if (total > SC_STORE_MAX_VALUE) {
      snprintf(text, sizeof(text), "'%s' would send every rank %zu bytes, more than the root's %u",
               key, total, SC_STORE_MAX_VALUE);
      sc_store_gather_mistake(conn, text);
      return;
    }
    if (len > 0) {
      g->data[conn->rank] = malloc(len);
      if (g->data[conn->rank] == NULL) {
        sc_store_conn_reply(conn, SYMCOMM_ERR_OUT_OF_MEMORY, 0, NULL, 0, "the root ran out of memory");
        return;
      }
      memcpy(g->data[conn->rank], value, len);
    }
    g->len = len;
  }
  g->given[conn->rank] = true;
  g->given_count++;

  conn->parked = true;
  conn->gather = g;
  conn->key = strdup(key);
  conn->deadline = sc_deadline_after(req->timeout_ms);
  sc_store_wake(s); /* answers conn too, if it completed the gather */
}

/* A rank says on its watch that it failed or aborted: the session fails,
 * naming it. Its watch stays, to hear that like the others. */
static void sc_store_watch_request(sc_store_conn_t *conn, const char *value) {
  const sc_store_request_t *req = &conn->request;
  sc_store_cause_t cause = (sc_store_cause_t)req->arg;
  if (req->op != SC_STORE_OP_FAIL ||
      (cause != SC_STORE_CAUSE_FAILED && cause != SC_STORE_CAUSE_ABORTED)) {
    char text[96];
    snprintf(text, sizeof(text), "request %u (arg %lld) on a watch", req->op, (long long)req->arg);
    sc_store_refuse(conn, SYMCOMM_ERR_INVALID_ARGUMENT, text);
    return;
  }
  char detail[SC_STORE_MAX_TEXT], why[SC_STORE_MAX_TEXT];
  snprintf(detail, sizeof(detail), "%.*s", (int)(req->value_len < 900 ? req->value_len : 900), value);
  if (cause == SC_STORE_CAUSE_ABORTED)
    snprintf(why, sizeof(why), "rank %d aborted the communicator", conn->rank);
  else
    snprintf(why, sizeof(why), "rank %d failed: %s", conn->rank, detail);
  sc_store_session_fail_as(conn->session, SYMCOMM_ERR_REMOTE, conn->rank, cause, detail, why);
}

void sc_store_session_handle(sc_store_conn_t *conn) {
  sc_store_session_t *s = conn->session;
  const sc_store_request_t *req = &conn->request;
  char key[SC_STORE_MAX_KEY + 1];
  memcpy(key, conn->payload, req->key_len);
  key[req->key_len] = '\0';
  const char *value = conn->payload + req->key_len;

  if (conn->watch) {
    sc_store_watch_request(conn, value);
    return;
  }
  if (s->failed != SYMCOMM_OK) {
    sc_store_conn_reply(conn, s->failed, SC_STORE_ARG_SESSION_FAILED, NULL, 0, s->failed_text);
    return;
  }
  switch (req->op) {
  case SC_STORE_OP_SET: {
    sc_result_t stored = sc_store_put(s, key, value, req->value_len);
    if (stored != SYMCOMM_OK)
      sc_store_put_failed(conn, stored, key, req->value_len);
    else
      sc_store_conn_reply(conn, SYMCOMM_OK, 0, NULL, 0, NULL);
    return;
  }
  case SC_STORE_OP_ADD:
    sc_store_handle_add(conn, key, req->arg);
    return;
  case SC_STORE_OP_GET:
  case SC_STORE_OP_WAIT:
    conn->key = strdup(key);
    if (conn->key == NULL) {
      sc_store_conn_reply(conn, SYMCOMM_ERR_OUT_OF_MEMORY, 0, NULL, 0, "the root ran out of memory");
      return;
    }
    conn->parked = true;
    conn->deadline = sc_deadline_after(req->timeout_ms);
    sc_store_try_answer(conn);
    return;
  case SC_STORE_OP_GATHER:
  case SC_STORE_OP_BCAST:
    sc_store_handle_collective(conn, key, value, req->value_len);
    return;
  case SC_STORE_OP_FAIL: {
    char why[SC_STORE_MAX_TEXT];
    snprintf(why, sizeof(why), "%.*s", (int)(req->value_len < 900 ? req->value_len : 900), value);
    sc_store_session_detach(conn, SC_STORE_FAILED, why);
    conn->closing = true;
    return;
  }
  default: {
    char text[96];
    snprintf(text, sizeof(text), "unknown request %u", req->op);
    sc_store_refuse(conn, SYMCOMM_ERR_INVALID_ARGUMENT, text);
  }
  }
}

/* ------------------------------------------------------------ departures */

void sc_store_session_detach(sc_store_conn_t *conn, sc_store_departure_t how, const char *why) {
  if (!conn->ready || conn->session == NULL)
    return;
  sc_store_session_t *s = conn->session;
  if (conn->watch) { /* a watch that closes changes nothing */
    if (s->watch[conn->rank] == conn)
      s->watch[conn->rank] = NULL;
    conn->ready = false;
    conn->session = NULL;
    return;
  }
  if (conn->parked)
    sc_store_unpark(conn);
  if (s->conn[conn->rank] == conn) {
    s->conn[conn->rank] = NULL;
    s->state[conn->rank] = how == SC_STORE_LEFT ? RANK_LEFT : RANK_LOST;
  }
  conn->ready = false;
  conn->session = NULL;
  char text[SC_STORE_MAX_TEXT];
  switch (how) {
  case SC_STORE_LEFT:
    SC_TRACE(SC_BOOT, "root: rank %d left session %016llx", conn->rank, (unsigned long long)s->id);
    sc_store_wake(s);
    /* Device waits for it end on this news; a failed session said more. */
    for (int r = 0; r < s->nranks && s->failed == SYMCOMM_OK; r++)
      if (s->watch[r] != NULL && r != conn->rank)
        sc_store_watch_tell_left(s->watch[r], conn->rank);
    return;
  case SC_STORE_FAILED:
    snprintf(text, sizeof(text), "rank %d failed: %s", conn->rank, why);
    sc_store_session_fail_as(s, SYMCOMM_ERR_REMOTE, conn->rank, SC_STORE_CAUSE_FAILED, why, text);
    return;
  case SC_STORE_LOST:
    snprintf(text, sizeof(text),
             "rank %d (%s) lost its connection to the root without leaving: it aborted, or its "
             "process exited or was killed",
             conn->rank, conn->peer);
    sc_store_session_fail_as(s, SYMCOMM_ERR_REMOTE, conn->rank, SC_STORE_CAUSE_LOST, text, text);
    return;
  case SC_STORE_REJECTED: {
    char detail[SC_STORE_MAX_TEXT];
    snprintf(text, sizeof(text), "the root closed rank %d's connection (%s): %s", conn->rank,
             conn->peer, why);
    snprintf(detail, sizeof(detail), "the root closed its connection (%s): %s", conn->peer, why);
    sc_store_session_fail_as(s, SYMCOMM_ERR_REMOTE, conn->rank, SC_STORE_CAUSE_FAILED, detail, text);
    return;
  }
  }
}

/* ------------------------------------------------------------ time */

static void sc_store_explain_timeout(const sc_store_conn_t *conn, char *text, size_t len) {
  const sc_store_session_t *s = conn->session;
  double seconds = (double)conn->request.timeout_ms / 1000.0;
  char missing[160], never[160];
  sc_store_list_ranks(s, NULL, RANK_NEVER, never, sizeof(never));
  const sc_store_gather_t *g = conn->gather;
  int n;
  if (g != NULL && g->op == SC_STORE_OP_GATHER) {
    sc_store_list_ranks(s, g->given, 0, missing, sizeof(missing));
    n = snprintf(text, len, "timed out after %.1f s in '%s': %d of %d ranks arrived, missing %s",
                 seconds, conn->key, g->given_count, s->nranks, missing);
  } else if (g != NULL) {
    n = snprintf(text, len, "timed out after %.1f s in '%s' waiting for rank %d, the root of the broadcast",
                 seconds, conn->key, g->root);
  } else {
    n = snprintf(text, len, "timed out after %.1f s waiting for key '%s'", seconds, conn->key);
  }
  if (never[0] != '\0' && n > 0 && (size_t)n < len)
    snprintf(text + n, len - (size_t)n, " (never connected to the root: rank %s)", never);
}

/* True when rank r has given its part to a gather or broadcast still held. */
static bool sc_store_rank_gave(const sc_store_session_t *s, int r) {
  for (const sc_store_gather_t *g = s->gathers; g != NULL; g = g->next)
    if (g->given[r])
      return true;
  return false;
}

/* Whether conn holds a rank's place in a session that has not formed yet
 * while waiting for nothing (see SC_STORE_FORMING_IDLE_MS). */
static bool sc_store_idle_in_forming(const sc_store_session_t *s, const sc_store_conn_t *c) {
  return !s->formed && s->failed == SYMCOMM_OK && !c->parked && !c->closing &&
         !sc_store_rank_gave(s, c->rank);
}

/* The connection leaves as if its rank had never come: the session goes on
 * and the rank may join again. */
static void sc_store_unjoin(sc_store_session_t *s, sc_store_conn_t *c, int64_t idle_ms) {
  int r = c->rank;
  SC_WARN(SC_BOOT,
          "root: dropping %s, which joined session %016llx as rank %d and then sent nothing for "
          "%.1f s before the session's first all-gather; rank %d may join again",
          c->peer, (unsigned long long)s->id, r, (double)idle_ms / 1000.0, r);
  s->state[r] = RANK_NEVER;
  s->conn[r] = NULL;
  s->first_peer[r][0] = '\0';
  s->joined--;
  c->ready = false;
  c->session = NULL;
  c->closing = true;
  sc_store_output_clear(&c->out);
  /* Its watch goes too, or the real rank's watch would be refused. */
  sc_store_conn_t *w = s->watch[r];
  if (w != NULL) {
    s->watch[r] = NULL;
    w->ready = false;
    w->session = NULL;
    w->closing = true;
    sc_store_output_clear(&w->out);
  }
}

int64_t sc_store_session_expire(sc_store_session_t *sessions, int64_t now, int64_t forming_idle_ms) {
  int64_t next = SC_DEADLINE_NEVER;
  for (sc_store_session_t *s = sessions; s != NULL; s = s->next) {
    for (int r = 0; r < s->nranks; r++) {
      sc_store_conn_t *c = s->conn[r];
      if (c != NULL && sc_store_idle_in_forming(s, c)) {
        int64_t idle_end = c->active_at + forming_idle_ms;
        if (now >= idle_end)
          sc_store_unjoin(s, c, forming_idle_ms);
        else if (idle_end < next)
          next = idle_end;
        continue;
      }
      if (c == NULL || !c->parked)
        continue;
      if (c->deadline > now) {
        if (c->deadline < next)
          next = c->deadline;
        continue;
      }
      char text[SC_STORE_MAX_TEXT];
      sc_store_explain_timeout(c, text, sizeof(text));
      if (c->gather != NULL) {
        /* A collective that timed out cannot complete: the job is over, and
         * every rank hears the same explanation at once. */
        sc_store_session_fail(s, SYMCOMM_ERR_TIMEOUT, text);
      } else {
        SC_INFO(SC_BOOT, "root: rank %d: %s", r, text);
        sc_store_conn_reply(c, SYMCOMM_ERR_TIMEOUT, 0, NULL, 0, text);
        sc_store_unpark(c);
      }
    }
  }
  return next;
}

bool sc_store_session_all_joined(const sc_store_session_t *sessions) {
  for (const sc_store_session_t *s = sessions; s != NULL; s = s->next)
    if (s->joined < s->nranks)
      return false;
  return true;
}

void sc_store_session_collect(sc_store_session_t **sessions, bool all) {
  for (sc_store_session_t **p = sessions; *p != NULL;) {
    sc_store_session_t *s = *p;
    bool ended_cleanly = s->joined == s->nranks && s->failed == SYMCOMM_OK;
    if (all || (ended_cleanly && sc_store_session_idle(s))) {
      *p = s->next;
      sc_store_session_free(s);
    } else {
      p = &s->next;
    }
  }
}
