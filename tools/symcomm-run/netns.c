/* --netns: every simulated host is a network namespace of its own, so that traffic
 * between hosts crosses a real TCP/IP stack between distinct addresses, and a link
 * taken down in one of them is a real network failure. The layout (launcher.h) is
 * a bridge in symcomm-run's namespace with one veth pair per host; the job's root
 * listens on the bridge's address, which every namespace reaches through its veth.
 * Everything is made before the first rank starts and removed after the last one is
 * reaped, on every way out that symcomm-run survives; netns_leftovers.c covers the
 * one it does not (SIGKILL). */
#include "launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAP_NET_ADMIN_BIT 12
#define CAP_SYS_ADMIN_BIT 21

void netns_name(const char *tag, int host, char *name, size_t size) {
  snprintf(name, size, NETNS_NAME_PREFIX "%s-h%d", tag, host);
}

void netns_bridge_name(const char *tag, char *name, size_t size) {
  snprintf(name, size, "scbr-%s", tag);
}

void netns_port_name(const char *tag, int host, char *name, size_t size) {
  snprintf(name, size, "sc%s-%d", tag, host);
}

void netns_rank_ifname(int host, char *name, size_t size) {
  snprintf(name, size, NETNS_RANK_IFNAME_PREFIX "%d", host);
}

void netns_address(const launcher_netns_t *ns, int host, char *text, size_t size) {
  uint32_t a = ns->subnet | (uint32_t)(host + 2);
  snprintf(text, size, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

int netns_enter(const launcher_netns_t *ns, int host) {
  return setns(ns->ns_fds[host], CLONE_NEWNET);
}

/* Namespaces need CAP_SYS_ADMIN (ip netns mounts them under /run/netns), the bridge
 * and veths CAP_NET_ADMIN, both in symcomm-run's own effective set. */
static bool has_privileges(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL)
    return geteuid() == 0;
  char line[256];
  unsigned long long caps = 0;
  bool found = false;
  while (!found && fgets(line, sizeof(line), f) != NULL)
    found = sscanf(line, "CapEff: %llx", &caps) == 1;
  fclose(f);
  unsigned long long need = 1ull << CAP_NET_ADMIN_BIT | 1ull << CAP_SYS_ADMIN_BIT;
  return found && (caps & need) == need;
}

/* ip(8) from PATH, else where distributions put it (a user's PATH may lack sbin). */
static bool find_ip(char *path, size_t size) {
  const char *env = getenv("PATH");
  char *dirs = strdup(env != NULL ? env : "");
  char *save = NULL;
  bool found = false;
  for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d != NULL && !found;
       d = strtok_r(NULL, ":", &save)) {
    snprintf(path, size, "%s/ip", d);
    found = access(path, X_OK) == 0;
  }
  free(dirs);
  static const char *const fallback[] = {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"};
  for (size_t i = 0; !found && i < sizeof(fallback) / sizeof(fallback[0]); i++) {
    snprintf(path, size, "%s", fallback[i]);
    found = access(path, X_OK) == 0;
  }
  return found;
}

/* In symcomm-run's namespace: the namespaces, the bridge with its address, and the
 * veth pairs (the host's end goes straight into its namespace). */
static char *launcher_script(const launcher_netns_t *ns) {
  size_t size = 512 + (size_t)ns->hosts * 384;
  char *s = malloc(size);
  if (s == NULL)
    return NULL;
  char bridge[32], bridge_addr[16];
  netns_bridge_name(ns->tag, bridge, sizeof(bridge));
  netns_address(ns, -1, bridge_addr, sizeof(bridge_addr));
  size_t len = 0;
  for (int h = 0; h < ns->hosts; h++) {
    char name[NETNS_NAME_MAX];
    netns_name(ns->tag, h, name, sizeof(name));
    len += (size_t)snprintf(s + len, size - len, "netns add %s\n", name);
  }
  len += (size_t)snprintf(s + len, size - len,
                          "link add %s type bridge\naddr add %s/24 dev %s\nlink set %s up\n",
                          bridge, bridge_addr, bridge, bridge);
  for (int h = 0; h < ns->hosts; h++) {
    char name[NETNS_NAME_MAX], port[32], inner[32];
    netns_name(ns->tag, h, name, sizeof(name));
    netns_port_name(ns->tag, h, port, sizeof(port));
    netns_rank_ifname(h, inner, sizeof(inner));
    len += (size_t)snprintf(s + len, size - len,
                            "link add %s type veth peer name %s netns %s\n"
                            "link set %s master %s up\n",
                            port, inner, name, port, bridge);
  }
  return s;
}

/* Inside host h's namespace: loopback (ranks of one host talk over it too) and the
 * host's address on its end of the pair. */
static int configure_host(const launcher_netns_t *ns, int h) {
  char inner[32], addr[16], script[256];
  netns_rank_ifname(h, inner, sizeof(inner));
  netns_address(ns, h, addr, sizeof(addr));
  snprintf(script, sizeof(script), "link set lo up\naddr add %s/24 dev %s\nlink set %s up\n",
           addr, inner, inner);
  return netns_run_ip(ns->ip_path, ns->ns_fds[h], script, false, false);
}

static int open_namespaces(launcher_netns_t *ns) {
  for (int h = 0; h < ns->hosts; h++) {
    char name[NETNS_NAME_MAX], path[NETNS_NAME_MAX + 16];
    netns_name(ns->tag, h, name, sizeof(name));
    snprintf(path, sizeof(path), "/run/netns/%s", name);
    ns->ns_fds[h] = open(path, O_RDONLY | O_CLOEXEC);
    if (ns->ns_fds[h] < 0) {
      fprintf(stderr, LAUNCHER_NAME ": --netns: cannot open %s: %s\n", path, strerror(errno));
      return -1;
    }
  }
  return 0;
}

int netns_setup(launcher_netns_t *ns, int hosts) {
  memset(ns, 0, sizeof(*ns));
  ns->lock_fd = -1;
  ns->hosts = hosts;
  if (!has_privileges()) {
    fprintf(stderr, LAUNCHER_NAME ": --netns needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to "
            "make a network namespace per simulated host; run it as root, or leave out "
            "--netns and the simulated hosts talk over loopback\n");
    return LAUNCHER_EXIT_USAGE;
  }
  if (!find_ip(ns->ip_path, sizeof(ns->ip_path))) {
    fprintf(stderr, LAUNCHER_NAME ": --netns needs the ip command (package iproute2), which "
            "is neither on PATH nor in /usr/sbin or /sbin\n");
    return LAUNCHER_EXIT_USAGE;
  }
  char *script = NULL;
  int status = LAUNCHER_EXIT_INTERNAL;
  int setup_lock = -1;
  ns->ns_fds = malloc(sizeof(int) * (size_t)hosts);
  if (ns->ns_fds == NULL) {
    fprintf(stderr, LAUNCHER_NAME ": out of memory\n");
    goto cleanup;
  }
  for (int h = 0; h < hosts; h++)
    ns->ns_fds[h] = -1;
  setup_lock = netns_lock_setups();
  if (setup_lock < 0)
    goto cleanup;
  netns_remove_dead_jobs(ns->ip_path);
  ns->lock_fd = netns_lock_job(ns->tag);
  if (ns->lock_fd < 0)
    goto cleanup;
  ns->active = true;
  if (netns_pick_subnet(&ns->subnet) != 0)
    goto cleanup;
  script = launcher_script(ns);
  if (script == NULL) {
    fprintf(stderr, LAUNCHER_NAME ": out of memory\n");
    goto cleanup;
  }
  int rc = netns_run_ip(ns->ip_path, -1, script, false, false);
  if (rc != 0) {
    if (rc > 0)
      fprintf(stderr, LAUNCHER_NAME ": --netns: making the namespaces, bridge and veth pairs "
              "failed (ip exited %d; its message is above)\n", rc);
    goto cleanup;
  }
  if (open_namespaces(ns) != 0)
    goto cleanup;
  for (int h = 0; h < hosts; h++) {
    rc = configure_host(ns, h);
    if (rc != 0) {
      if (rc > 0)
        fprintf(stderr, LAUNCHER_NAME ": --netns: configuring host %d's namespace failed "
                "(ip exited %d; its message is above)\n", h, rc);
      goto cleanup;
    }
  }
  status = 0;

cleanup:
  free(script);
  if (status != 0)
    netns_teardown(ns);
  if (setup_lock >= 0)
    close(setup_lock);
  return status;
}

void netns_teardown(launcher_netns_t *ns) {
  /* Our descriptors would keep the namespaces alive after their names are gone. */
  for (int h = 0; ns->ns_fds != NULL && h < ns->hosts; h++)
    if (ns->ns_fds[h] >= 0)
      close(ns->ns_fds[h]);
  free(ns->ns_fds);
  ns->ns_fds = NULL;
  if (!ns->active)
    return;
  ns->active = false;
  if (netns_remove_tag(ns->ip_path, ns->tag, true) == 0)
    netns_unlock_job(ns->tag, ns->lock_fd);
  else
    close(ns->lock_fd); /* the lock file stays: the next setup sees it unlocked and retries */
  ns->lock_fd = -1;
}
