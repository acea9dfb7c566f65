/* --tag-output: each rank writes its stdout and stderr into pipes; symcomm-run
 * reassembles whole lines and writes each with one write(), prefixed "[rank] ", so
 * lines of different ranks never mix. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include "launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A line longer than this is written in pieces (each ends with a newline) so that a
 * rank that never writes a newline cannot make symcomm-run grow without bound. */
#define LINE_MAX_BYTES (64 * 1024)
#define READ_CHUNK 65536
/* 1 MiB: also the largest pipe buffer a rank can have unless it raises the limit. */
#define PUMP_MAX_READS 16

/* Set once a destination is gone (EPIPE): its output is dropped from then on, and the
 * ranks keep running, as they would writing to /dev/null. */
static bool dest_broken[3];

static void write_all(int fd, const char *data, size_t len) {
  if (dest_broken[fd])
    return;
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n > 0) {
      data += n;
      len -= (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN) {
      /* Our stdout may be a non-blocking descriptor shared with someone else. */
      struct pollfd pfd = {.fd = fd, .events = POLLOUT};
      if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
        break;
      continue;
    }
    break;
  }
  if (len > 0)
    dest_broken[fd] = true;
}

/* One finished line (without its newline) as "[rank] line\n", in a single write. */
static void emit_line(int dest_fd, int rank, const char *line, size_t len) {
  char prefix[24];
  int plen = snprintf(prefix, sizeof(prefix), "[%d] ", rank);
  size_t total = (size_t)plen + len + 1;
  char small[4096];
  char *out = total <= sizeof(small) ? small : malloc(total);
  if (out == NULL) { /* no memory: still keep the line whole, in three writes */
    write_all(dest_fd, prefix, (size_t)plen);
    write_all(dest_fd, line, len);
    write_all(dest_fd, "\n", 1);
    return;
  }
  memcpy(out, prefix, (size_t)plen);
  memcpy(out + plen, line, len);
  out[total - 1] = '\n';
  write_all(dest_fd, out, total);
  if (out != small)
    free(out);
}

int output_stream_open(output_stream_t *stream, int dest_fd, int *child_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return -1;
  /* Only our end is non-blocking: the rank's writes must block when the pipe is full. */
  int flags = fcntl(fds[0], F_GETFL);
  if (flags < 0 || fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) != 0) {
    int saved = errno;
    close(fds[0]);
    close(fds[1]);
    errno = saved;
    return -1;
  }
  stream->fd = fds[0];
  stream->dest_fd = dest_fd;
  stream->buf = NULL;
  stream->len = 0;
  stream->cap = 0;
  stream->wrapped = false;
  *child_fd = fds[1];
  return 0;
}

static void flush_partial(output_stream_t *stream, int rank) {
  if (stream->len > 0)
    emit_line(stream->dest_fd, rank, stream->buf, stream->len);
  stream->len = 0;
}

/* Adds bytes of an unfinished line to the pending one. Past LINE_MAX_BYTES, or if
 * memory runs out, the pending bytes are written as a line of their own. */
static void append_partial(output_stream_t *stream, int rank, const char *data, size_t len) {
  while (len > 0) {
    size_t room = LINE_MAX_BYTES - stream->len;
    size_t take = len < room ? len : room;
    if (stream->len + take > stream->cap) {
      size_t cap = stream->cap != 0 ? stream->cap : 256;
      while (cap < stream->len + take)
        cap *= 2;
      char *grown = realloc(stream->buf, cap);
      if (grown == NULL) {
        flush_partial(stream, rank);
        emit_line(stream->dest_fd, rank, data, take);
        stream->wrapped = true;
        data += take;
        len -= take;
        continue;
      }
      stream->buf = grown;
      stream->cap = cap;
    }
    memcpy(stream->buf + stream->len, data, take);
    stream->len += take;
    data += take;
    len -= take;
    if (stream->len == LINE_MAX_BYTES) {
      flush_partial(stream, rank);
      stream->wrapped = true;
    }
  }
}

/* Takes bytes read from a rank, writing out every line they finish. */
static void consume(output_stream_t *stream, int rank, const char *data, size_t len) {
  while (len > 0) {
    const char *nl = memchr(data, '\n', len);
    if (nl == NULL) {
      append_partial(stream, rank, data, len);
      return;
    }
    size_t piece = (size_t)(nl - data);
    if (stream->len == 0 && !stream->wrapped) {
      emit_line(stream->dest_fd, rank, data, piece); /* a whole line: no copy */
    } else {
      /* (a newline right after a wrapped piece ends it; it is not an empty line) */
      append_partial(stream, rank, data, piece);
      flush_partial(stream, rank);
    }
    stream->wrapped = false;
    data += piece + 1;
    len -= piece + 1;
  }
}

bool output_stream_pump(output_stream_t *stream, int rank) {
  static char chunk[READ_CHUNK];
  /* Bounded, so that one busy rank cannot starve the others or the signals. */
  for (int reads = 0; stream->fd >= 0 && reads < PUMP_MAX_READS; reads++) {
    ssize_t n = read(stream->fd, chunk, sizeof(chunk));
    if (n > 0) {
      consume(stream, rank, chunk, (size_t)n);
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return true;
    if (n < 0)
      fprintf(stderr, LAUNCHER_NAME ": reading the output of rank %d: %s\n", rank,
              strerror(errno));
    output_stream_close(stream, rank); /* EOF or error */
  }
  return stream->fd >= 0;
}

void output_stream_close(output_stream_t *stream, int rank) {
  if (stream->fd >= 0) {
    close(stream->fd);
    stream->fd = -1;
  }
  flush_partial(stream, rank);
  free(stream->buf);
  stream->buf = NULL;
  stream->len = 0;
  stream->cap = 0;
}
