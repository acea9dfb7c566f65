/* The job's root socket. symcomm-run binds and listens before any rank starts and
 * rank 0 inherits the socket (SYMCOMM_ROOT_FD), so the port in SYMCOMM_ADDR is
 * already accepting when the other ranks connect: no rank has to race for a free
 * port, and nobody else can take it in between. */
#include "launcher.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Every rank of a large job may connect at once before rank 0 gets to accept. */
#define ROOT_BACKLOG 4096

int root_socket_open(const char *host, int *port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    fprintf(stderr, LAUNCHER_NAME ": cannot create the root socket: %s\n", strerror(errno));
    return -1;
  }
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_port = 0; /* ephemeral */
  const char *what = "inet_pton";
  errno = EINVAL;
  if (inet_pton(AF_INET, host, &addr.sin_addr) != 1)
    goto fail;
  what = "bind";
  if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
    goto fail;
  what = "listen";
  if (listen(fd, ROOT_BACKLOG) != 0)
    goto fail;
  what = "getsockname";
  socklen_t len = sizeof(addr);
  if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0)
    goto fail;
  *port = ntohs(addr.sin_port);
  return fd;

fail:
  fprintf(stderr, LAUNCHER_NAME ": root socket on %s: %s failed: %s\n", host, what,
          strerror(errno));
  close(fd);
  return -1;
}
