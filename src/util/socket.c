#include "util/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/param.h"

sc_result_t sc_sockaddr_parse(const char *text, int port, sc_sockaddr_t *out) {
  char host[256];
  const char *port_text = NULL;
  char port_buf[16];
  if (text == NULL || text[0] == '\0')
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET, "empty address");
  if (text[0] == '[') {
    const char *close = strchr(text, ']');
    if (close == NULL || (size_t)(close - text - 1) >= sizeof(host))
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET, "address '%s' has no closing ']'", text);
    memcpy(host, text + 1, (size_t)(close - text - 1));
    host[close - text - 1] = '\0';
    if (close[1] == ':')
      port_text = close + 2;
    else if (close[1] != '\0')
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET, "address '%s': expected ':port' after ']'", text);
  } else {
    const char *colon = strrchr(text, ':');
    bool one_colon = colon != NULL && strchr(text, ':') == colon;
    size_t host_len = one_colon ? (size_t)(colon - text) : strlen(text);
    if (host_len >= sizeof(host))
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET, "address '%s' is too long", text);
    memcpy(host, text, host_len);
    host[host_len] = '\0';
    if (one_colon)
      port_text = colon + 1;
  }
  if (port < 0) {
    if (port_text == NULL || port_text[0] == '\0')
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET,
                      "address '%s' has no port (write host:port, or [v6addr]:port)", text);
    char *end = NULL;
    long p = strtol(port_text, &end, 10);
    if (*end != '\0' || p <= 0 || p > 65535)
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET, "address '%s': bad port '%s'", text,
                      port_text);
    port = (int)p;
  }
  if (port > 65535)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET, "port %d is out of range", port);
  snprintf(port_buf, sizeof(port_buf), "%d", port);

  struct addrinfo hints = {0}, *res = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int rc = getaddrinfo(host, port_buf, &hints, &res);
  if (rc != 0 || res == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_NET, "cannot resolve host '%s': %s", host,
                    gai_strerror(rc));
  /* Prefer IPv4 when a name resolves to both, as a v4-only peer is the common case. */
  struct addrinfo *pick = res;
  for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next)
    if (ai->ai_family == AF_INET) {
      pick = ai;
      break;
    }
  memset(out, 0, sizeof(*out));
  memcpy(&out->storage, pick->ai_addr, pick->ai_addrlen);
  out->len = pick->ai_addrlen;
  freeaddrinfo(res);
  return SYMCOMM_OK;
}

void sc_sockaddr_format(const sc_sockaddr_t *addr, char *buf, size_t len) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (addr->storage.ss_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)&addr->storage;
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    snprintf(buf, len, "%s:%d", host, ntohs(in->sin_port));
  } else if (addr->storage.ss_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&addr->storage;
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    snprintf(buf, len, "[%s]:%d", host, ntohs(in6->sin6_port));
  } else {
    snprintf(buf, len, "(no address)");
  }
}

int sc_sockaddr_port(const sc_sockaddr_t *addr) {
  if (addr->storage.ss_family == AF_INET)
    return ntohs(((const struct sockaddr_in *)&addr->storage)->sin_port);
  if (addr->storage.ss_family == AF_INET6)
    return ntohs(((const struct sockaddr_in6 *)&addr->storage)->sin6_port);
  return -1;
}

void sc_sockaddr_set_port(sc_sockaddr_t *addr, int port) {
  if (addr->storage.ss_family == AF_INET)
    ((struct sockaddr_in *)&addr->storage)->sin_port = htons((uint16_t)port);
  else if (addr->storage.ss_family == AF_INET6)
    ((struct sockaddr_in6 *)&addr->storage)->sin6_port = htons((uint16_t)port);
}

void sc_sockaddr_any(const sc_sockaddr_t *addr, sc_sockaddr_t *any) {
  memset(any, 0, sizeof(*any));
  if (addr->storage.ss_family == AF_INET6) {
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&any->storage;
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_any;
    any->len = sizeof(*in6);
  } else {
    struct sockaddr_in *in = (struct sockaddr_in *)&any->storage;
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_ANY);
    any->len = sizeof(*in);
  }
  sc_sockaddr_set_port(any, sc_sockaddr_port(addr));
}

bool sc_socket_ifname_matches(const char *filter, const char *ifname) {
  bool exclude = filter[0] == '^';
  if (exclude)
    filter++;
  bool exact = filter[0] == '=';
  if (exact)
    filter++;
  bool hit = false;
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", filter);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
    if (exact ? strcmp(ifname, tok) == 0 : strncmp(ifname, tok, strlen(tok)) == 0) {
      hit = true;
      break;
    }
  }
  return exclude ? !hit : hit;
}

static bool sc_socket_address_usable(const struct sockaddr *sa, int family) {
  if (sa == NULL || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
    return false;
  if (family != AF_UNSPEC && sa->sa_family != family)
    return false;
  if (sa->sa_family == AF_INET6) {
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
    if (IN6_IS_ADDR_LINKLOCAL(a)) /* needs a scope id that peers cannot know */
      return false;
  }
  return true;
}

/* One pass over the interfaces: the first usable address whose interface passes
 * `filter`, preferring IPv4 unless the family is fixed. */
static bool sc_socket_scan(const struct ifaddrs *list, const char *filter, int family,
                           sc_sockaddr_t *addr, char *ifname, size_t ifname_len) {
  const int order[2] = {AF_INET, AF_INET6};
  for (int pass = 0; pass < 2; pass++) {
    int want = family != AF_UNSPEC ? family : order[pass];
    for (const struct ifaddrs *ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
      if (!(ifa->ifa_flags & IFF_UP) || !sc_socket_address_usable(ifa->ifa_addr, want))
        continue;
      if (!sc_socket_ifname_matches(filter, ifa->ifa_name))
        continue;
      memset(addr, 0, sizeof(*addr));
      addr->len = ifa->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
                                                       : sizeof(struct sockaddr_in6);
      memcpy(&addr->storage, ifa->ifa_addr, addr->len);
      snprintf(ifname, ifname_len, "%s", ifa->ifa_name);
      return true;
    }
    if (family != AF_UNSPEC)
      break;
  }
  return false;
}

sc_result_t sc_socket_pick_address(sc_sockaddr_t *addr, char *ifname, size_t ifname_len) {
  const char *family_text = sc_param_string(SC_PARAM_SOCKET_FAMILY);
  int family = AF_UNSPEC;
  if (family_text != NULL) {
    if (strcasecmp(family_text, "AF_INET") == 0)
      family = AF_INET;
    else if (strcasecmp(family_text, "AF_INET6") == 0)
      family = AF_INET6;
    else
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV,
                      "SYMCOMM_SOCKET_FAMILY='%s' is not AF_INET or AF_INET6", family_text);
  }
  struct ifaddrs *list = NULL;
  if (getifaddrs(&list) != 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "getifaddrs failed");
  const char *filter = sc_param_string(SC_PARAM_SOCKET_IFNAME);
  bool found;
  if (filter != NULL) {
    found = sc_socket_scan(list, filter, family, addr, ifname, ifname_len);
  } else {
    found = sc_socket_scan(list, "^docker,lo", family, addr, ifname, ifname_len) ||
            sc_socket_scan(list, "lo", family, addr, ifname, ifname_len);
  }
  freeifaddrs(list);
  if (!found)
    return SC_RAISE(SYMCOMM_ERR_SYSTEM, SC_NET,
                    "no network interface matches SYMCOMM_SOCKET_IFNAME='%s' and SYMCOMM_SOCKET_FAMILY='%s'",
                    filter ? filter : "", family_text ? family_text : "");
  return SYMCOMM_OK;
}

sc_result_t sc_socket_set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "fcntl(O_NONBLOCK) failed");
  return SYMCOMM_OK;
}

sc_result_t sc_socket_listen(const sc_sockaddr_t *addr, int *fd_out, sc_sockaddr_t *bound) {
  char text[SC_SOCKADDR_TEXT];
  sc_sockaddr_format(addr, text, sizeof(text));
  int fd = socket(addr->storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "socket() for %s failed", text);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, (const struct sockaddr *)&addr->storage, addr->len) != 0) {
    sc_result_t r = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "cannot listen on %s", text);
    close(fd);
    return r;
  }
  if (listen(fd, 1024) != 0) {
    sc_result_t r = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "listen() on %s failed", text);
    close(fd);
    return r;
  }
  if (bound != NULL) {
    memset(bound, 0, sizeof(*bound));
    bound->len = sizeof(bound->storage);
    getsockname(fd, (struct sockaddr *)&bound->storage, &bound->len);
  }
  *fd_out = fd;
  return SYMCOMM_OK;
}

/* Waits for `events` on fd; OK, TIMEOUT or ABORTED. */
static sc_result_t sc_socket_wait(int fd, short events, int64_t deadline_ms, int abort_fd,
                                  const char *what, const char *peer) {
  for (;;) {
    struct pollfd p[2] = {{.fd = fd, .events = events}, {.fd = abort_fd, .events = POLLIN}};
    int n = poll(p, abort_fd >= 0 ? 2 : 1, sc_poll_timeout(deadline_ms));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "poll while %s %s failed", what, peer);
    }
    /* What already arrived is taken first: a failure elsewhere, which also
     * wakes this fd, must not cut off a reply the peers have all received
     * (they go on as if this rank had it too). */
    if (p[0].revents != 0)
      return SYMCOMM_OK;
    if (abort_fd >= 0 && (p[1].revents & POLLIN))
      return SC_RAISE(SYMCOMM_ERR_ABORTED, SC_NET, "communicator aborted while %s %s", what, peer);
    if (n == 0 && deadline_ms != SC_DEADLINE_NEVER && sc_now_ms() >= deadline_ms)
      return SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_NET, "timed out while %s %s", what, peer);
  }
}

sc_result_t sc_socket_connect(const sc_sockaddr_t *addr, int64_t deadline_ms, int abort_fd,
                              int *fd_out) {
  char text[SC_SOCKADDR_TEXT];
  sc_sockaddr_format(addr, text, sizeof(text));
  int backoff_ms = 5;
  int last_errno = 0;
  int attempts = 0;
  for (;;) {
    attempts++;
    int fd = socket(addr->storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
      return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "socket() for %s failed", text);
    int rc = connect(fd, (const struct sockaddr *)&addr->storage, addr->len);
    if (rc != 0 && errno == EINPROGRESS) {
      sc_result_t r = sc_socket_wait(fd, POLLOUT, deadline_ms, abort_fd, "connecting to", text);
      if (r != SYMCOMM_OK) {
        close(fd);
        return r;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      *fd_out = fd;
      if (attempts > 1)
        SC_TRACE(SC_NET, "connected to %s after %d attempts", text, attempts);
      return SYMCOMM_OK;
    }
    last_errno = errno;
    close(fd);
    bool retry = last_errno == ECONNREFUSED || last_errno == ETIMEDOUT ||
                 last_errno == EHOSTUNREACH || last_errno == ENETUNREACH ||
                 last_errno == ECONNRESET || last_errno == EAGAIN;
    if (!retry) {
      errno = last_errno;
      return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "cannot connect to %s", text);
    }
    int64_t now = sc_now_ms();
    if (deadline_ms != SC_DEADLINE_NEVER && now >= deadline_ms)
      return SC_RAISE(SYMCOMM_ERR_TIMEOUT, SC_NET,
                      "could not connect to %s before the timeout (%d attempts, last: %s)", text,
                      attempts, strerror(last_errno));
    int sleep_ms = backoff_ms;
    if (deadline_ms != SC_DEADLINE_NEVER && now + sleep_ms > deadline_ms)
      sleep_ms = (int)(deadline_ms - now);
    /* Sleep the backoff, but wake at once on abort. */
    struct pollfd p = {.fd = abort_fd, .events = POLLIN};
    if (poll(&p, abort_fd >= 0 ? 1 : 0, sleep_ms) > 0)
      return SC_RAISE(SYMCOMM_ERR_ABORTED, SC_NET, "communicator aborted while connecting to %s", text);
    backoff_ms = backoff_ms * 2 > 500 ? 500 : backoff_ms * 2;
  }
}

sc_result_t sc_socket_send_all(int fd, const void *buf, size_t len, int64_t deadline_ms,
                               int abort_fd, const char *peer) {
  const char *p = (const char *)buf;
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= (size_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      SC_CHECK(sc_socket_wait(fd, POLLOUT, deadline_ms, abort_fd, "sending to", peer));
      continue;
    }
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
      return SC_RAISE(SYMCOMM_ERR_REMOTE, SC_NET, "%s closed the connection", peer);
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "send to %s failed", peer);
  }
  return SYMCOMM_OK;
}

sc_result_t sc_socket_recv_all(int fd, void *buf, size_t len, int64_t deadline_ms, int abort_fd,
                               const char *peer) {
  char *p = (char *)buf;
  while (len > 0) {
    ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      len -= (size_t)n;
      continue;
    }
    if (n == 0)
      return SC_RAISE(SYMCOMM_ERR_REMOTE, SC_NET, "%s closed the connection", peer);
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      SC_CHECK(sc_socket_wait(fd, POLLIN, deadline_ms, abort_fd, "receiving from", peer));
      continue;
    }
    if (errno == ECONNRESET)
      return SC_RAISE(SYMCOMM_ERR_REMOTE, SC_NET, "%s reset the connection", peer);
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_NET, "recv from %s failed", peer);
  }
  return SYMCOMM_OK;
}
