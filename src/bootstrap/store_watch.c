#include "bootstrap/store_watch.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void sc_store_watch_init(sc_store_watch_t *w, int fd) {
  memset(w, 0, sizeof(*w));
  w->fd = fd;
}

int sc_store_watch_read(sc_store_watch_t *w, sc_store_watch_news_t *news) {
  sc_store_reply_t reply;
  for (;;) {
    size_t want = sizeof(reply);
    if (w->got >= sizeof(reply)) {
      memcpy(&reply, w->buf, sizeof(reply));
      bool left = sc_store_watch_cause(reply.arg) == SC_STORE_CAUSE_LEFT;
      if (reply.magic != SC_STORE_MAGIC || (reply.status == SYMCOMM_OK) != left ||
          reply.value_len != 0 || reply.text_len > SC_STORE_MAX_TEXT)
        return -1; /* not what a root says on a watch */
      want += reply.text_len;
      if (w->got == want)
        break;
    }
    ssize_t n = recv(w->fd, w->buf + w->got, want - w->got, MSG_DONTWAIT);
    if (n > 0) {
      w->got += (size_t)n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
      return 0;
    return -1; /* closed, or broken */
  }
  news->rank = sc_store_watch_rank(reply.arg);
  news->cause = sc_store_watch_cause(reply.arg);
  news->result = (sc_result_t)reply.status;
  if (news->cause == SC_STORE_CAUSE_LEFT)
    news->result = SYMCOMM_OK;
  else if (news->result > SYMCOMM_ERR_INTERNAL || news->result == SYMCOMM_IN_PROGRESS)
    news->result = SYMCOMM_ERR_REMOTE;
  memcpy(news->text, w->buf + sizeof(reply), reply.text_len);
  news->text[reply.text_len] = '\0';
  w->got = 0; /* read */
  return 1;
}

bool sc_store_watch_tell(sc_store_watch_t *w, sc_store_cause_t cause, const char *why) {
  if (w->fd < 0)
    return false;
  size_t len = why != NULL ? strnlen(why, SC_STORE_MAX_TEXT - 1) : 0;
  unsigned char msg[sizeof(sc_store_request_t) + SC_STORE_MAX_TEXT];
  sc_store_request_t req = {.magic = SC_STORE_MAGIC, .op = SC_STORE_OP_FAIL,
                            .value_len = (uint32_t)len, .arg = cause};
  memcpy(msg, &req, sizeof(req));
  if (len > 0)
    memcpy(msg + sizeof(req), why, len);
  /* Small, and the first thing this rank ever sends on its watch: the
   * socket's buffer takes it whole. */
  ssize_t n = send(w->fd, msg, sizeof(req) + len, MSG_NOSIGNAL | MSG_DONTWAIT);
  return n == (ssize_t)(sizeof(req) + len);
}

void sc_store_watch_close(sc_store_watch_t *w) {
  if (w->fd >= 0)
    close(w->fd);
  w->fd = -1;
}
