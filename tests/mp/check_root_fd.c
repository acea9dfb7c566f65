/* Run as a rank of symcomm-run: checks the root socket contract.
 *   rank 0:  SYMCOMM_ROOT_FD is a listening TCP socket on the port of SYMCOMM_ADDR,
 *            and a connection to SYMCOMM_ADDR is accepted on it.
 *   others:  SYMCOMM_ROOT_FD is unset and no listening socket was inherited.
 * Needs no library call: it checks what the launcher hands to the library. */
#include "test_util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int env_int(const char *name) {
  const char *text = getenv(name);
  TEST_ASSERT(text != NULL && text[0] != '\0', "%s is not set", name);
  char *end = NULL;
  long value = strtol(text, &end, 10);
  TEST_ASSERT(*end == '\0' && value >= 0 && value < 1000000, "%s='%s' is not a number", name,
              text);
  return (int)value;
}

static int is_listening_socket(int fd) {
  int listening = 0;
  socklen_t len = sizeof(listening);
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0)
    return 0; /* not a socket */
  return listening;
}

/* Every listening socket among this process's descriptors. */
static int count_listening_sockets(int *first_found) {
  DIR *dir = opendir("/proc/self/fd");
  TEST_ASSERT(dir != NULL, "opendir(/proc/self/fd): %s", strerror(errno));
  int count = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (entry->d_name[0] == '.')
      continue;
    int fd = atoi(entry->d_name);
    if (fd == dirfd(dir) || !is_listening_socket(fd))
      continue;
    if (count++ == 0)
      *first_found = fd;
  }
  closedir(dir);
  return count;
}

static void check_rank0(const char *addr_text) {
  int root_fd = env_int("SYMCOMM_ROOT_FD");
  TEST_ASSERT(is_listening_socket(root_fd), "SYMCOMM_ROOT_FD=%d is not a listening socket",
              root_fd);
  int type = 0;
  socklen_t len = sizeof(type);
  TEST_ASSERT(getsockopt(root_fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM,
              "root fd %d is not a stream socket", root_fd);
  struct sockaddr_in bound;
  len = sizeof(bound);
  TEST_ASSERT(getsockname(root_fd, (struct sockaddr *)&bound, &len) == 0,
              "getsockname(%d): %s", root_fd, strerror(errno));
  TEST_ASSERT(bound.sin_family == AF_INET, "root socket family %d, expected AF_INET",
              bound.sin_family);
  char bound_text[64];
  char ip[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &bound.sin_addr, ip, sizeof(ip));
  snprintf(bound_text, sizeof(bound_text), "%s:%d", ip, ntohs(bound.sin_port));
  TEST_ASSERT(strcmp(bound_text, addr_text) == 0,
              "root socket is bound to %s but SYMCOMM_ADDR=%s", bound_text, addr_text);
  int other = -1;
  int listening = count_listening_sockets(&other);
  TEST_ASSERT(listening == 1, "rank 0 has %d listening sockets, expected only the root's",
              listening);

  /* The port really is the one accepting: connect to SYMCOMM_ADDR, accept on the fd. */
  int client = socket(AF_INET, SOCK_STREAM, 0);
  TEST_ASSERT(client >= 0, "socket: %s", strerror(errno));
  TEST_ASSERT(connect(client, (struct sockaddr *)&bound, sizeof(bound)) == 0,
              "connect to %s: %s", addr_text, strerror(errno));
  int server = accept(root_fd, NULL, NULL);
  TEST_ASSERT(server >= 0, "accept on the root fd: %s", strerror(errno));
  TEST_ASSERT(write(client, "x", 1) == 1, "write: %s", strerror(errno));
  char byte = 0;
  TEST_ASSERT(read(server, &byte, 1) == 1 && byte == 'x', "no byte through the root socket");
  close(server);
  close(client);
}

static void check_other_rank(int rank) {
  const char *root_fd = getenv("SYMCOMM_ROOT_FD");
  TEST_ASSERT(root_fd == NULL, "rank %d has SYMCOMM_ROOT_FD=%s; only rank 0 may", rank, root_fd);
  int fd = -1;
  int listening = count_listening_sockets(&fd);
  TEST_ASSERT(listening == 0, "rank %d inherited %d listening socket(s), e.g. fd %d", rank,
              listening, fd);
}

int main(void) {
  int rank = env_int("SYMCOMM_RANK");
  int world_size = env_int("SYMCOMM_WORLD_SIZE");
  TEST_ASSERT(rank < world_size, "SYMCOMM_RANK=%d but SYMCOMM_WORLD_SIZE=%d", rank, world_size);
  const char *addr = getenv("SYMCOMM_ADDR");
  TEST_ASSERT(addr != NULL && strncmp(addr, "127.0.0.1:", 10) == 0,
              "SYMCOMM_ADDR='%s', expected 127.0.0.1:<port>", addr ? addr : "(unset)");
  if (rank == 0)
    check_rank0(addr);
  else
    check_other_rank(rank);
  printf("rank %d of %d: root socket contract ok\n", rank, world_size);
  return 0;
}
