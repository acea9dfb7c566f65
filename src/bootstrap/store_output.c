#include "bootstrap/store_output.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>

sc_store_blob_t *sc_store_blob_new(size_t len) {
  sc_store_blob_t *blob = malloc(sizeof(*blob) + len);
  if (blob == NULL)
    return NULL;
  blob->refs = 1;
  blob->len = len;
  return blob;
}

sc_store_blob_t *sc_store_blob_ref(sc_store_blob_t *blob) {
  blob->refs++;
  return blob;
}

void sc_store_blob_unref(sc_store_blob_t *blob) {
  if (blob != NULL && --blob->refs == 0)
    free(blob);
}

bool sc_store_output_push(sc_store_output_t *out, sc_store_blob_t *blob) {
  sc_store_segment_t *seg = calloc(1, sizeof(*seg));
  if (seg == NULL)
    return false;
  seg->blob = sc_store_blob_ref(blob);
  if (out->tail != NULL)
    out->tail->next = seg;
  else
    out->head = seg;
  out->tail = seg;
  return true;
}

bool sc_store_output_pending(const sc_store_output_t *out) { return out->head != NULL; }

static void sc_store_output_pop(sc_store_output_t *out) {
  sc_store_segment_t *seg = out->head;
  out->head = seg->next;
  if (out->head == NULL)
    out->tail = NULL;
  sc_store_blob_unref(seg->blob);
  free(seg);
}

int sc_store_output_send(sc_store_output_t *out, int fd) {
  while (out->head != NULL) {
    struct iovec iov[16];
    int n = 0;
    for (sc_store_segment_t *s = out->head; s != NULL && n < 16; s = s->next, n++) {
      iov[n].iov_base = s->blob->data + s->sent;
      iov[n].iov_len = s->blob->len - s->sent;
    }
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n};
    ssize_t sent = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return 0;
      if (errno == EINTR)
        continue;
      return -1;
    }
    size_t left = (size_t)sent;
    while (out->head != NULL && left > 0) {
      sc_store_segment_t *s = out->head;
      size_t rest = s->blob->len - s->sent;
      if (left < rest) {
        s->sent += left;
        left = 0;
      } else {
        left -= rest;
        sc_store_output_pop(out);
      }
    }
    while (out->head != NULL && out->head->sent == out->head->blob->len)
      sc_store_output_pop(out); /* empty blocks */
  }
  return 1;
}

void sc_store_output_clear(sc_store_output_t *out) {
  while (out->head != NULL)
    sc_store_output_pop(out);
}
