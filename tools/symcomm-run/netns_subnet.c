/* The /24 of a --netns job. Its bridge's route lives in symcomm-run's namespace
 * beside the machine's own, so the subnet must overlap none of this namespace's
 * IPv4 networks (its addresses with their masks) and none of its routes except the
 * default one, or the job would shadow a real network (or be shadowed by it). Other
 * --netns jobs' bridges are among those addresses; their setups are serialized
 * (netns_lock_setups), so two jobs never pick the same one. */
#include "launcher.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint32_t net;
  uint32_t mask;
} netblock_t;

typedef struct {
  netblock_t *blocks;
  size_t count;
  size_t cap;
} netblock_list_t;

static int add_block(netblock_list_t *list, uint32_t addr, uint32_t mask) {
  if (list->count == list->cap) {
    size_t cap = list->cap ? list->cap * 2 : 32;
    netblock_t *grown = realloc(list->blocks, cap * sizeof(*grown));
    if (grown == NULL)
      return -1;
    list->blocks = grown;
    list->cap = cap;
  }
  list->blocks[list->count++] = (netblock_t){.net = addr & mask, .mask = mask};
  return 0;
}

static int add_addresses(netblock_list_t *list) {
  struct ifaddrs *ifas = NULL;
  if (getifaddrs(&ifas) != 0) {
    fprintf(stderr, LAUNCHER_NAME ": --netns: getifaddrs: %s\n", strerror(errno));
    return -1;
  }
  int rc = 0;
  for (const struct ifaddrs *ifa = ifas; ifa != NULL && rc == 0; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET)
      continue;
    uint32_t addr = ntohl(((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr);
    uint32_t mask = 0xffffffffu;
    if (ifa->ifa_netmask != NULL)
      mask = ntohl(((const struct sockaddr_in *)ifa->ifa_netmask)->sin_addr.s_addr);
    /* The address itself, and the network it makes reachable. */
    rc = add_block(list, addr, 0xffffffffu) != 0 || add_block(list, addr, mask) != 0 ? -1 : 0;
  }
  freeifaddrs(ifas);
  if (rc != 0)
    fprintf(stderr, LAUNCHER_NAME ": --netns: out of memory\n");
  return rc;
}

/* /proc/net/route (the main table): destination and mask in hex, as the kernel
 * stores them (network byte order). A missing file means no routes to avoid. */
static int add_routes(netblock_list_t *list) {
  FILE *f = fopen("/proc/net/route", "r");
  if (f == NULL)
    return 0;
  char line[512];
  int rc = 0;
  if (fgets(line, sizeof(line), f) == NULL) { /* the header */
    fclose(f);
    return 0;
  }
  while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
    char ifname[64];
    unsigned dest, gateway, flags, refcnt, use, metric, mask;
    if (sscanf(line, "%63s %x %x %x %u %u %u %x", ifname, &dest, &gateway, &flags, &refcnt,
               &use, &metric, &mask) != 8)
      continue;
    if (mask == 0)
      continue; /* the default route covers everything; only a specific route conflicts */
    rc = add_block(list, ntohl(dest), ntohl(mask));
  }
  fclose(f);
  if (rc != 0)
    fprintf(stderr, LAUNCHER_NAME ": --netns: out of memory\n");
  return rc;
}

static bool overlaps(const netblock_list_t *list, uint32_t subnet) {
  for (size_t i = 0; i < list->count; i++) {
    uint32_t common = list->blocks[i].mask & 0xffffff00u; /* the shorter of the two masks */
    if ((subnet & common) == (list->blocks[i].net & common))
      return true;
  }
  return false;
}

int netns_pick_subnet(uint32_t *subnet) {
  /* Private /16s, starting away from the low numbers that sites, Docker
   * (172.17) and libvirt (192.168.122) usually take. */
  static const uint8_t first[][2] = {
      {10, 213}, {10, 214}, {10, 215}, {10, 216}, {10, 217}, {10, 218}, {10, 219},
      {172, 29}, {172, 30}, {172, 31}, {192, 168},
  };
  netblock_list_t list = {0};
  int rc = -1;
  if (add_addresses(&list) != 0 || add_routes(&list) != 0)
    goto cleanup;
  for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++) {
    for (uint32_t c = 0; c < 256; c++) {
      uint32_t candidate = (uint32_t)first[i][0] << 24 | (uint32_t)first[i][1] << 16 | c << 8;
      if (!overlaps(&list, candidate)) {
        *subnet = candidate;
        rc = 0;
        goto cleanup;
      }
    }
  }
  fprintf(stderr, LAUNCHER_NAME ": --netns: every candidate /24 (10.213-219.x, 172.29-31.x, "
          "192.168.x) overlaps an address or route of this machine\n");
cleanup:
  free(list.blocks);
  return rc;
}
