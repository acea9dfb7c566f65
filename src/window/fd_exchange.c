#include "window/fd_exchange.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"

#define SC_FD_MAGIC 0x44464353u /* "SCFD" */

typedef struct sc_fd_header {
  uint32_t magic;
  int32_t rank;
  int32_t nfds;
  int32_t reserved;
  uint64_t words[4];
} sc_fd_header_t;

/* The abstract socket of local rank l for exchange `seq` of a communicator,
 * named by its rank in the communicator: simulated hosts share one machine. */
static socklen_t sc_fd_address(const sc_comm_view_t *view, uint64_t seq, int local,
                               struct sockaddr_un *addr) {
  memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  int n = snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1, "symcomm-%016llx-%llu-%d",
                   (unsigned long long)view->session, (unsigned long long)seq,
                   view->local_rank_to_rank[local]);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static sc_result_t sc_fd_send(const sc_comm_view_t *view, uint64_t seq, int local,
                              const sc_fd_bundle_t *mine) {
  struct sockaddr_un addr;
  socklen_t len = sc_fd_address(view, seq, local, &addr);
  int peer = view->local_rank_to_rank[local];
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN, "socket(AF_UNIX) failed");
  if (connect(fd, (struct sockaddr *)&addr, len) != 0) {
    sc_result_t r = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN,
                                   "cannot reach rank %d on this host to pass memory handles", peer);
    close(fd);
    return r;
  }
  sc_fd_header_t header = {.magic = SC_FD_MAGIC, .rank = view->rank, .nfds = mine->nfds};
  memcpy(header.words, mine->words, sizeof(header.words));
  struct iovec iov = {.iov_base = &header, .iov_len = sizeof(header)};
  char control[CMSG_SPACE(sizeof(int) * SC_FD_EXCHANGE_MAX_FDS)];
  memset(control, 0, sizeof(control));
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (mine->nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)mine->nfds);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)mine->nfds);
    memcpy(CMSG_DATA(c), mine->fds, sizeof(int) * (size_t)mine->nfds);
  }
  ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
  sc_result_t res = SYMCOMM_OK;
  if (n != (ssize_t)sizeof(header))
    res = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN, "passing memory handles to rank %d failed",
                         peer);
  close(fd);
  return res;
}

/* Takes one connection's bundle; checks who sent it. */
static sc_result_t sc_fd_receive(const sc_comm_view_t *view, int fd, sc_fd_bundle_t *got) {
  sc_fd_header_t header;
  struct iovec iov = {.iov_base = &header, .iov_len = sizeof(header)};
  char control[CMSG_SPACE(sizeof(int) * SC_FD_EXCHANGE_MAX_FDS)];
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                       .msg_controllen = sizeof(control)};
  ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  int fds[SC_FD_EXCHANGE_MAX_FDS];
  int nfds = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      for (int i = 0; i < k; i++) {
        int f;
        memcpy(&f, CMSG_DATA(c) + sizeof(int) * (size_t)i, sizeof(int));
        if (nfds < SC_FD_EXCHANGE_MAX_FDS)
          fds[nfds++] = f;
        else
          close(f);
      }
    }
  }
  struct ucred cred;
  socklen_t cred_len = sizeof(cred);
  bool from_peer = n == (ssize_t)sizeof(header) && header.magic == SC_FD_MAGIC &&
                   header.rank >= 0 && header.rank < view->nranks &&
                   view->local_of[header.rank] >= 0 && header.rank != view->rank &&
                   header.nfds == nfds &&
                   getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) == 0 &&
                   cred.pid == view->pids[header.rank];
  if (!from_peer || got[view->local_of[header.rank]].nfds != 0) {
    for (int i = 0; i < nfds; i++)
      close(fds[i]);
    SC_WARN(SC_WIN, "ignored a connection that is not a rank of this host passing memory handles");
    return SYMCOMM_IN_PROGRESS; /* not an error of the exchange; keep accepting */
  }
  sc_fd_bundle_t *b = &got[view->local_of[header.rank]];
  b->nfds = nfds;
  memcpy(b->fds, fds, sizeof(int) * (size_t)nfds);
  memcpy(b->words, header.words, sizeof(b->words));
  return SYMCOMM_OK;
}

sc_result_t sc_fd_exchange(sc_comm_view_t *view, const char *step, const sc_fd_bundle_t *mine,
                           sc_fd_bundle_t *got) {
  uint64_t seq = view->exchanges++;
  for (int l = 0; l < view->local_size; l++)
    got[l].nfds = 0;
  int listener = -1;
  sc_result_t res = SYMCOMM_OK;
  if (view->local_size > 1) {
    struct sockaddr_un addr;
    socklen_t len = sc_fd_address(view, seq, view->local_rank, &addr);
    listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listener < 0)
      return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN, "socket(AF_UNIX) failed");
    if (bind(listener, (struct sockaddr *)&addr, len) != 0 ||
        listen(listener, view->local_size) != 0) {
      res = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_WIN, "cannot listen for memory handles");
      close(listener);
      listener = -1;
      /* Still take part in the barrier, so that the others fail rather than wait. */
    }
  }
  /* Everyone listens before anyone connects. */
  sc_result_t barrier = sc_bootstrap_barrier(view->boot, step);
  if (res != SYMCOMM_OK || barrier != SYMCOMM_OK) {
    if (listener >= 0)
      close(listener);
    return res != SYMCOMM_OK ? res : barrier;
  }
  if (view->local_size == 1)
    return SYMCOMM_OK;

  /* Send to every peer first: each message fits in the socket's buffer, so
   * nobody waits for an accept, and then take the peers' messages. */
  for (int l = 0; l < view->local_size && res == SYMCOMM_OK; l++)
    if (l != view->local_rank)
      res = sc_fd_send(view, seq, l, mine);
  int received = 0;
  int64_t deadline = sc_deadline_after(view->timeout_ms);
  while (res == SYMCOMM_OK && received < view->local_size - 1) {
    struct pollfd p[2] = {{.fd = listener, .events = POLLIN}, {.fd = view->abort_fd, .events = POLLIN}};
    int n = poll(p, view->abort_fd >= 0 ? 2 : 1, sc_poll_timeout(deadline));
    if (n < 0 && errno == EINTR)
      continue;
    if (n > 0 && view->abort_fd >= 0 && (p[1].revents & POLLIN)) {
      res = SC_RAISE(SYMCOMM_ERR_ABORTED, SC_WIN, "aborted while receiving memory handles");
      break;
    }
    if (n == 0) {
      res = SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_WIN,
                     "%d of %d ranks of this host never passed their memory handles (%s)",
                     view->local_size - 1 - received, view->local_size - 1, step);
      break;
    }
    int conn = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    if (conn < 0)
      continue;
    sc_result_t r = sc_fd_receive(view, conn, got);
    close(conn);
    if (r == SYMCOMM_OK)
      received++;
  }
  close(listener);
  if (res != SYMCOMM_OK)
    sc_fd_bundles_close(got, view->local_size);
  return res;
}

void sc_fd_bundles_close(sc_fd_bundle_t *got, int n) {
  for (int l = 0; l < n; l++) {
    for (int i = 0; i < got[l].nfds; i++)
      close(got[l].fds[i]);
    got[l].nfds = 0;
  }
}
