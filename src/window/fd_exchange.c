#include "window/fd_exchange.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"

#define SC_FD_MAGIC 0x44464353u /* "SCFD" */
#define SC_FD_STRAY_MS 1000     /* an accepted connection's time to bring its message */
#define SC_FD_RETRY_MS 5        /* between connects to a peer whose backlog is full */
#define SC_FD_MAX_PENDING 32    /* accepted connections waited on at once */
#define SC_FD_WHY_BYTES 1024
#define SC_FD_REFUSED_GRACE_MS 2000 /* for a bundle from a peer whose socket refused ours */

/* A bundle's message. The token proves the sender knows the communicator's
 * secret: only a rank of it can make one, and each is good for one sender,
 * one receiver and one exchange. Processes are not told apart by pid, which
 * differs between PID namespaces (containers of one pod, --network=host). */
typedef struct sc_fd_header {
  uint32_t magic;
  int32_t rank;
  int32_t nfds;
  int32_t reserved;
  sc_secret_t token;
  uint64_t words[4];
} sc_fd_header_t;

struct sc_fd_link {
  int fd;         /* a socket to the peer until this rank's bundle went out, then -1 */
  bool connected; /* fd reached the peer's listener */
  bool sent;      /* this rank's bundle went out to the peer (or failed for good) */
  bool received;  /* the peer's bundle came in (or failed for good) */
  int64_t refused_at; /* when the peer's socket refused this rank's connection; 0 if not */
};

typedef struct sc_fd_pending {
  int fd;
  int64_t expires;
} sc_fd_pending_t;

/* What one readable accepted connection turned out to be. */
typedef enum sc_fd_take {
  SC_FD_TAKEN,   /* a peer's bundle */
  SC_FD_NOT_YET, /* nothing to read after all */
  SC_FD_STRAY,   /* not a peer's message: dropped, not an error of the exchange */
  SC_FD_FAILED   /* a peer's message whose descriptors did not come through */
} sc_fd_take_t;

/* The abstract socket of local rank l for exchange `seq` of a communicator,
 * named by its rank in the communicator (simulated hosts share one machine).
 * Names derive from the communicator's secret: unique to it on the host (jobs
 * at once never collide) and unguessable, so no other process can take one
 * first. Anyone on the host can list them (/proc/net/unix), but a name tells
 * nothing of the next one or of the secret. */
socklen_t sc_fd_exchange_address(const sc_comm_view_t *view, uint64_t seq, int local,
                                 struct sockaddr_un *addr) {
  memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  sc_secret_t name;
  sc_secret_derive(&view->secret, "fd socket", seq, (uint64_t)view->local_rank_to_rank[local], 0,
                   &name);
  char hex[SC_SECRET_HEX];
  sc_secret_hex(&name, hex);
  int n = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "symcomm-%s", hex);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The token rank `from` shows rank `to` in exchange `seq`. */
static void sc_fd_token(const sc_comm_view_t *view, uint64_t seq, int from, int to,
                        sc_secret_t *token) {
  sc_secret_derive(&view->secret, "fd token", seq, (uint64_t)from, (uint64_t)to, token);
}

sc_result_t sc_fd_exchange_open(sc_comm_view_t *view, sc_fd_exchange_t *x) {
  *x = (sc_fd_exchange_t){.view = view, .seq = view->exchanges++, .listener = -1};
  if (view->local_size == 1)
    return SYMCOMM_OK;
  sc_result_t res = SYMCOMM_OK;
  x->links = calloc((size_t)view->local_size, sizeof(*x->links));
  if (x->links == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_WIN, "no memory to pass memory handles");
  for (int l = 0; l < view->local_size; l++)
    x->links[l].fd = -1;
  x->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (x->listener < 0) {
    res = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN,
                         "cannot open a socket to receive memory handles");
    goto fail;
  }
  struct sockaddr_un addr;
  socklen_t len = sc_fd_exchange_address(view, x->seq, view->local_rank, &addr);
  /* Room for every peer and as many strays as are waited on at once. */
  if (bind(x->listener, (struct sockaddr *)&addr, len) != 0 ||
      listen(x->listener, view->local_size + SC_FD_MAX_PENDING) != 0) {
    res = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN, "cannot listen for memory handles at @%s",
                         addr.sun_path + 1);
    goto fail;
  }
  /* The sockets to the peers now, so that passing the handles later needs no
   * new descriptor of this rank. */
  for (int l = 0; l < view->local_size; l++) {
    if (l == view->local_rank)
      continue;
    x->links[l].fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (x->links[l].fd < 0) {
      res = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN,
                           "cannot open a socket to pass memory handles to rank %d",
                           view->local_rank_to_rank[l]);
      goto fail;
    }
  }
  return SYMCOMM_OK;
fail:
  sc_fd_exchange_close(x);
  return res;
}

void sc_fd_exchange_close(sc_fd_exchange_t *x) {
  if (x->listener >= 0)
    close(x->listener);
  x->listener = -1;
  if (x->links != NULL)
    for (int l = 0; l < x->view->local_size; l++)
      if (x->links[l].fd >= 0)
        close(x->links[l].fd);
  free(x->links);
  x->links = NULL;
}

/* The peer closed its listener: it stopped receiving after a failure of its
 * own (it closes it early for nothing else, and it cannot have finished
 * without this rank's bundle), which it reports in the caller's next
 * all-gather. Not a failure of this rank. */
static bool sc_fd_peer_gave_up(int err, int peer) {
  if (err != ECONNREFUSED && err != ECONNRESET && err != EPIPE)
    return false;
  SC_INFO(SC_WIN, "rank %d stopped taking memory handles (%s)", peer, strerror(err));
  return true;
}

/* One attempt to pass `mine` to local rank l: OK once it went out (or the
 * peer gave up), SYMCOMM_IN_PROGRESS while its backlog or buffer is full. */
static sc_result_t sc_fd_try_send(sc_fd_exchange_t *x, int l, const sc_fd_bundle_t *mine) {
  const sc_comm_view_t *view = x->view;
  struct sc_fd_link *link = &x->links[l];
  int peer = view->local_rank_to_rank[l];
  if (!link->connected) {
    struct sockaddr_un addr;
    socklen_t len = sc_fd_exchange_address(view, x->seq, l, &addr);
    if (connect(link->fd, (struct sockaddr *)&addr, len) != 0 && errno != EISCONN) {
      if (errno == EAGAIN || errno == EINTR)
        return SYMCOMM_IN_PROGRESS;
      if (sc_fd_peer_gave_up(errno, peer)) {
        link->refused_at = sc_now_ms();
        return SYMCOMM_OK;
      }
      return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN,
                            "cannot reach rank %d on this host to pass memory handles", peer);
    }
    link->connected = true;
    /* A rank's name can be taken by whoever binds it once its listener is
     * gone (the rank died or gave up): handles go only to a listener of
     * this job's user. */
    struct ucred cred;
    socklen_t cred_len = sizeof(cred);
    if (getsockopt(link->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0)
      return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN,
                            "cannot tell who listens for rank %d's memory handles", peer);
    if (cred.uid != geteuid())
      return SC_RAISE(SYMCOMM_ERR_SYSTEM, SC_WIN,
                      "the socket of rank %d on this host is held by a process of user %u (pid "
                      "%d), not of this job's user %u: memory handles are not passed to it",
                      peer, (unsigned)cred.uid, (int)cred.pid, (unsigned)geteuid());
  }
  sc_fd_header_t header = {.magic = SC_FD_MAGIC, .rank = view->rank, .nfds = mine->nfds};
  sc_fd_token(view, x->seq, view->rank, peer, &header.token);
  memcpy(header.words, mine->words, sizeof(header.words));
  struct iovec iov = {.iov_base = &header, .iov_len = sizeof(header)};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int) * SC_FD_EXCHANGE_MAX_FDS)];
  } control;
  memset(&control, 0, sizeof(control));
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (mine->nfds > 0) {
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)mine->nfds);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)mine->nfds);
    memcpy(CMSG_DATA(c), mine->fds, sizeof(int) * (size_t)mine->nfds);
  }
  ssize_t n = sendmsg(link->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n == (ssize_t)sizeof(header))
    return SYMCOMM_OK;
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return SYMCOMM_IN_PROGRESS;
  if (n < 0 && sc_fd_peer_gave_up(errno, peer)) {
    link->refused_at = sc_now_ms();
    return SYMCOMM_OK;
  }
  if (n < 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN, "passing memory handles to rank %d failed",
                          peer);
  return SC_RAISE(SYMCOMM_ERR_SYSTEM, SC_WIN,
                  "passing memory handles to rank %d failed: %zd of %zu bytes went out", peer, n,
                  sizeof(header));
}

/* Reads an accepted connection that poll() found readable, and checks who
 * sent what came. */
static sc_fd_take_t sc_fd_take(sc_fd_exchange_t *x, int fd, sc_fd_bundle_t *got,
                               sc_result_t *failure) {
  const sc_comm_view_t *view = x->view;
  sc_fd_header_t header = {.magic = 0};
  struct iovec iov = {.iov_base = &header, .iov_len = sizeof(header)};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int) * SC_FD_EXCHANGE_MAX_FDS)];
  } control;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                       .msg_controllen = sizeof(control.buf)};
  ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  if (n < 0)
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? SC_FD_NOT_YET : SC_FD_STRAY;
  /* The kernel filled the control part: take every descriptor that came, so
   * that none leaks whatever the message turns out to be. */
  int fds[SC_FD_EXCHANGE_MAX_FDS];
  int nfds = 0;
  bool truncated = (msg.msg_flags & MSG_CTRUNC) != 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
      continue;
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; i++) {
      int f;
      memcpy(&f, CMSG_DATA(c) + sizeof(int) * i, sizeof(int));
      if (nfds < SC_FD_EXCHANGE_MAX_FDS) {
        fds[nfds++] = f;
      } else {
        close(f);
        truncated = true;
      }
    }
  }
  int rank = header.rank;
  bool from_peer = n == (ssize_t)sizeof(header) && header.magic == SC_FD_MAGIC && rank >= 0 &&
                   rank < view->nranks && rank != view->rank && view->local_of[rank] >= 0 &&
                   !x->links[view->local_of[rank]].received;
  if (from_peer) {
    sc_secret_t expected;
    sc_fd_token(view, x->seq, rank, view->rank, &expected);
    from_peer = sc_secret_equal(&expected, &header.token);
  }
  if (!from_peer || truncated || header.nfds != nfds) {
    for (int i = 0; i < nfds; i++)
      close(fds[i]);
    if (!from_peer)
      return SC_FD_STRAY;
    x->links[view->local_of[rank]].received = true;
    *failure = SC_RAISE(SYMCOMM_ERR_SYSTEM, SC_WIN,
                        "rank %d passed %d memory handles and %d arrived%s", rank, header.nfds,
                        nfds,
                        truncated ? " (this process may be out of file descriptors)" : "");
    return SC_FD_FAILED;
  }
  int l = view->local_of[rank];
  x->links[l].received = true;
  got[l].nfds = nfds;
  memcpy(got[l].fds, fds, sizeof(int) * (size_t)nfds);
  memcpy(got[l].words, header.words, sizeof(got[l].words));
  return SC_FD_TAKEN;
}

/* The sentence of an exchange that ran out of time, naming a missing rank. */
static sc_result_t sc_fd_timeout(const sc_fd_exchange_t *x, const char *step, int to_send,
                                 int to_receive) {
  const sc_comm_view_t *view = x->view;
  int first = -1;
  for (int l = 0; l < view->local_size && first < 0; l++)
    if (l != view->local_rank && (to_receive > 0 ? !x->links[l].received : !x->links[l].sent))
      first = view->local_rank_to_rank[l];
  if (to_receive > 0)
    return SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_WIN,
                    "%d of %d ranks of this host (rank %d first) never passed their memory "
                    "handles (%s)",
                    to_receive, view->local_size - 1, first, step);
  return SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_WIN,
                  "could not pass memory handles to %d of %d ranks of this host (rank %d first): "
                  "they never took a connection (%s)",
                  to_send, view->local_size - 1, first, step);
}

/* Stops waiting for peers whose sockets refused this rank's connection a
 * while ago: they no longer take handles, and what they passed before has
 * come in by now. Returns how many; *wake gets the next such moment. The
 * first is a TIMEOUT in *res, so that the caller's next all-gather names a
 * rank that failed on its own (the refuser) before this one. */
static int sc_fd_refusers(sc_fd_exchange_t *x, const char *step, int64_t now, int64_t *wake,
                          sc_result_t *res) {
  const sc_comm_view_t *view = x->view;
  int given_up = 0;
  for (int l = 0; l < view->local_size; l++) {
    struct sc_fd_link *link = &x->links[l];
    if (l == view->local_rank || link->refused_at == 0 || link->received)
      continue;
    int64_t until = link->refused_at + SC_FD_REFUSED_GRACE_MS;
    if (now < until) {
      if (until < *wake)
        *wake = until;
      continue;
    }
    link->received = true;
    given_up++;
    if (*res == SYMCOMM_OK)
      *res = SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_WIN,
                      "rank %d of this host refused the connection for memory handles and never "
                      "passed its own (%s): it stopped taking them (it aborted or timed out), or "
                      "it runs in another network namespace; handles travel over abstract Unix "
                      "sockets, which do not cross network namespaces, so the ranks of one host "
                      "must share one (one pod, or --network=host)",
                      view->local_rank_to_rank[l], step);
  }
  return given_up;
}

sc_result_t sc_fd_exchange_run(sc_fd_exchange_t *x, const char *step, const sc_fd_bundle_t *mine,
                               sc_fd_bundle_t *got) {
  sc_comm_view_t *view = x->view;
  for (int l = 0; l < view->local_size; l++)
    got[l].nfds = 0;
  if (view->local_size == 1)
    return SYMCOMM_OK;
  if (x->listener < 0 || x->links == NULL)
    return SC_RAISE(SYMCOMM_ERR_INTERNAL, SC_WIN, "memory handles passed without a listener (%s)",
                    step);
  int to_send = view->local_size - 1, to_receive = view->local_size - 1;
  sc_fd_pending_t pending[SC_FD_MAX_PENDING];
  int npending = 0, strays = 0, silent = 0;
  struct pollfd p[2 + SC_FD_MAX_PENDING];
  sc_result_t res = SYMCOMM_OK; /* the first failure: the loop still serves the peers */
  char first_why[SC_FD_WHY_BYTES] = ""; /* its sentence, which later ones must not replace */
  /* Everyone listens already (the caller's all-gather said so): this takes
   * milliseconds. Half the timeout leaves the other half for the caller's
   * next all-gather, where a rank that could not pass its handles waits. */
  int64_t deadline = sc_deadline_after(view->timeout_ms < 0 ? -1 : view->timeout_ms / 2);
  for (;;) {
    /* Send first: every message fits in a socket's buffer, so nobody waits
     * for an accept. A full backlog (strays) is retried. */
    for (int l = 0; l < view->local_size; l++) {
      struct sc_fd_link *link = &x->links[l];
      if (l == view->local_rank || link->sent)
        continue;
      sc_result_t r = sc_fd_try_send(x, l, mine);
      if (r == SYMCOMM_IN_PROGRESS)
        continue;
      if (r != SYMCOMM_OK && res == SYMCOMM_OK) {
        res = r;
        snprintf(first_why, sizeof(first_why), "%s", sc_error_last());
      }
      close(link->fd);
      link->fd = -1;
      link->sent = true;
      to_send--;
    }
    int64_t now = sc_now_ms(), wake = deadline;
    to_receive -= sc_fd_refusers(x, step, now, &wake, &res);
    if (to_send == 0 && to_receive == 0)
      break;
    if (now >= deadline) {
      sc_result_t r = sc_fd_timeout(x, step, to_send, to_receive);
      if (res == SYMCOMM_OK)
        res = r;
      break;
    }
    if (to_send > 0 && now + SC_FD_RETRY_MS < wake)
      wake = now + SC_FD_RETRY_MS;
    int np = 0, at_abort = -1, at_listener = -1;
    if (view->abort_fd >= 0) {
      at_abort = np;
      p[np++] = (struct pollfd){.fd = view->abort_fd, .events = POLLIN};
    }
    if (to_receive > 0 && npending < SC_FD_MAX_PENDING) {
      at_listener = np;
      p[np++] = (struct pollfd){.fd = x->listener, .events = POLLIN};
    }
    int at_pending = np;
    for (int i = 0; i < npending; i++) {
      p[np++] = (struct pollfd){.fd = pending[i].fd, .events = POLLIN};
      if (pending[i].expires < wake)
        wake = pending[i].expires;
    }
    int n = poll(p, (nfds_t)np, sc_poll_timeout(wake));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      if (res == SYMCOMM_OK)
        res = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN, "poll while passing memory handles");
      break;
    }
    if (at_abort >= 0 && (p[at_abort].revents & POLLIN)) {
      if (res == SYMCOMM_OK)
        res = SC_RAISE(SYMCOMM_ERR_ABORTED, SC_WIN, "aborted while passing memory handles");
      break;
    }
    now = sc_now_ms();
    /* Backwards, so that moving the last one into a freed place is safe. */
    for (int i = npending - 1; i >= 0; i--) {
      sc_fd_take_t t = SC_FD_NOT_YET;
      sc_result_t failure = SYMCOMM_OK;
      if (p[at_pending + i].revents != 0)
        t = sc_fd_take(x, pending[i].fd, got, &failure);
      if (t == SC_FD_NOT_YET && now < pending[i].expires)
        continue;
      if (t == SC_FD_TAKEN || t == SC_FD_FAILED)
        to_receive--;
      if (t == SC_FD_FAILED && res == SYMCOMM_OK)
        res = failure;
      if (t == SC_FD_STRAY)
        strays++;
      if (t == SC_FD_NOT_YET)
        silent++;
      close(pending[i].fd);
      pending[i] = pending[--npending];
    }
    if (at_listener >= 0 && p[at_listener].revents != 0) {
      while (npending < SC_FD_MAX_PENDING) {
        int c = accept4(x->listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c >= 0) {
          pending[npending++] = (sc_fd_pending_t){.fd = c, .expires = now + SC_FD_STRAY_MS};
          continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
          continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          /* Out of descriptors, most likely: nothing more can come in. */
          sc_result_t r = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN,
                                         "cannot take connections with memory handles");
          if (res == SYMCOMM_OK)
            res = r;
          to_receive = 0;
          for (int i = 0; i < npending; i++)
            close(pending[i].fd);
          npending = 0;
        }
        break;
      }
    }
  }
  for (int i = 0; i < npending; i++)
    close(pending[i].fd);
  /* Not errors of the exchange, but someone else on this host talks to it. */
  if (strays > 0 || silent > 0)
    SC_WARN(SC_WIN,
            "ignored %d connections that were not ranks of this host passing memory handles and "
            "%d that brought nothing within %d ms (%s)",
            strays, silent, SC_FD_STRAY_MS, step);
  if (res != SYMCOMM_OK)
    sc_fd_bundles_close(got, view->local_size);
  if (res != SYMCOMM_OK && first_why[0] != '\0')
    sc_error_pass(res, first_why);
  return res;
}

void sc_fd_bundles_close(sc_fd_bundle_t *got, int n) {
  for (int l = 0; l < n; l++) {
    for (int i = 0; i < got[l].nfds; i++)
      close(got[l].fds[i]);
    got[l].nfds = 0;
  }
}
