/* sc_topo_t written as an NCCL topology file that reads back to the same
 * matrix (topo.h says what is made up). The PCIe tree comes from the link
 * types, which nest: GPUs that are PIX to each other share a switch, PXB ones
 * a switch above those, PHB ones a CPU; SYS ones sit under different CPUs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "topo/topo_internal.h"
#include "util/log.h"

#define SC_WRITE_NVSWITCH_TARGET "fffffff:ff:ff.0" /* what NCCL writes for an NVSwitch */
#define SC_WRITE_SWITCH_DOMAIN "ffff"              /* made-up PCIe switches */

typedef struct sc_topo_groups {
  int cpu[SC_MAX_LOCAL_RANKS];    /* a representative GPU per group */
  int bridge[SC_MAX_LOCAL_RANKS]; /* GPUs no further than PXB */
  int sub[SC_MAX_LOCAL_RANKS];    /* GPUs no further than PIX */
} sc_topo_groups_t;

static int sc_group_find(int *parent, int x) {
  while (parent[x] != x)
    x = parent[x] = parent[parent[x]];
  return x;
}

static void sc_group_join(int *parent, int a, int b) {
  parent[sc_group_find(parent, a)] = sc_group_find(parent, b);
}

/* Joins every pair whose PCIe path is known (not NVLink) and at most `worst`. */
static void sc_group_by_path(const sc_topo_t *t, symcomm_link_t worst, int *parent) {
  for (int i = 0; i < t->ngpus; i++)
    parent[i] = i;
  for (int a = 0; a < t->ngpus; a++)
    for (int b = a + 1; b < t->ngpus; b++)
      if (t->link[a][b] >= SYMCOMM_LINK_PIX && t->link[a][b] <= worst)
        sc_group_join(parent, a, b);
}

/* Whether some GPU of group ra is SYS to some GPU of group rb. */
static bool sc_groups_apart(const sc_topo_t *t, int *parent, int ra, int rb) {
  for (int x = 0; x < t->ngpus; x++)
    for (int y = 0; y < t->ngpus; y++)
      if (sc_group_find(parent, x) == ra && sc_group_find(parent, y) == rb &&
          t->link[x][y] == SYMCOMM_LINK_SYS)
        return true;
  return false;
}

static void sc_topo_group(const sc_topo_t *t, sc_topo_groups_t *g) {
  sc_group_by_path(t, SYMCOMM_LINK_PHB, g->cpu);
  /* GPUs whose PCIe path is unknown (they have NVLink instead) share a CPU
   * with any group nothing puts apart, rather than get one each. */
  for (int a = 0; a < t->ngpus; a++) {
    for (int b = a + 1; b < t->ngpus; b++) {
      int ra = sc_group_find(g->cpu, a), rb = sc_group_find(g->cpu, b);
      if (ra != rb && !sc_groups_apart(t, g->cpu, ra, rb))
        sc_group_join(g->cpu, a, b);
    }
  }
  sc_group_by_path(t, SYMCOMM_LINK_PXB, g->bridge);
  sc_group_by_path(t, SYMCOMM_LINK_PIX, g->sub);
  for (int i = 0; i < t->ngpus; i++) {
    g->cpu[i] = sc_group_find(g->cpu, i);
    g->bridge[i] = sc_group_find(g->bridge, i);
    g->sub[i] = sc_group_find(g->sub, i);
  }
}

static int sc_min_int(int a, int b) { return a < b ? a : b; }

static void sc_write_gpu(const sc_topo_t *t, int a, FILE *out) {
  char busid[32];
  sc_busid_format(t->busid[a], busid, sizeof(busid));
  fprintf(out, "        <pci busid=\"%s\" class=\"0x030200\" vendor=\"0x10de\">\n", busid);
  fprintf(out, "          <gpu dev=\"%d\">\n", t->dev[a]);
  if (t->nvswitch[a] > 0)
    fprintf(out, "            <nvlink target=\"%s\" count=\"%d\" tclass=\"0x068000\"/>\n",
            SC_WRITE_NVSWITCH_TARGET, t->nvswitch[a]);
  for (int b = 0; b < t->ngpus; b++) {
    if (b == a || t->link[a][b] != SYMCOMM_LINK_NVLINK)
      continue;
    /* What the switches give the pair is already said by the switch links. */
    int through_switch =
        t->nvswitch[a] > 0 && t->nvswitch[b] > 0 ? sc_min_int(t->nvswitch[a], t->nvswitch[b]) : 0;
    int direct = t->nvlinks[a][b] - through_switch;
    if (direct <= 0)
      continue;
    sc_busid_format(t->busid[b], busid, sizeof(busid));
    fprintf(out, "            <nvlink target=\"%s\" count=\"%d\" tclass=\"0x030200\"/>\n", busid,
            direct);
  }
  fprintf(out, "          </gpu>\n        </pci>\n");
}

/* Every GPU of CPU group `cpu`: a switch per PXB group, below it one per PIX group. */
static void sc_write_cpu(const sc_topo_t *t, const sc_topo_groups_t *g, int cpu, int *switches,
                         FILE *out) {
  for (int br = 0; br < t->ngpus; br++) {
    if (g->cpu[br] != cpu || g->bridge[br] != br)
      continue;
    fprintf(out, "    <pci busid=\"%s:%02x:00.0\" class=\"0x060400\">\n", SC_WRITE_SWITCH_DOMAIN,
            ++*switches);
    for (int sub = 0; sub < t->ngpus; sub++) {
      if (g->bridge[sub] != br || g->sub[sub] != sub)
        continue;
      fprintf(out, "      <pci busid=\"%s:%02x:00.0\" class=\"0x060400\">\n",
              SC_WRITE_SWITCH_DOMAIN, ++*switches);
      for (int a = 0; a < t->ngpus; a++)
        if (g->sub[a] == sub)
          sc_write_gpu(t, a, out);
      fprintf(out, "      </pci>\n");
    }
    fprintf(out, "    </pci>\n");
  }
}

sc_result_t sc_topo_write_xml(const sc_topo_t *topo, FILE *out) {
  if (topo == NULL || out == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "sc_topo_write_xml: %s is NULL",
                    topo == NULL ? "topo" : "out");
  sc_topo_groups_t groups;
  sc_topo_group(topo, &groups);
  /* "--" may not appear inside an XML comment. */
  const char *source = strstr(topo->source, "--") == NULL ? topo->source : "(a path)";
  fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(out, "<!-- Written by symcomm: %d GPUs, from %s. PCIe switches in domain %s are made "
               "up to give each pair its path. -->\n",
          topo->ngpus, source, SC_WRITE_SWITCH_DOMAIN);
  fprintf(out, "<system version=\"1\">\n");
  int numa = 0, switches = 0;
  for (int cpu = 0; cpu < topo->ngpus; cpu++) {
    if (groups.cpu[cpu] != cpu)
      continue;
    fprintf(out, "  <cpu numaid=\"%d\">\n", numa++);
    sc_write_cpu(topo, &groups, cpu, &switches, out);
    fprintf(out, "  </cpu>\n");
  }
  fprintf(out, "</system>\n");
  if (fflush(out) != 0 || ferror(out))
    return SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_TOPO, "cannot write the topology");
  return SYMCOMM_OK;
}

sc_result_t sc_topo_write_file(const sc_topo_t *topo, const char *path) {
  if (path == NULL || path[0] == '\0')
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "sc_topo_write_file: no path given");
  FILE *out = fopen(path, "w");
  if (out == NULL)
    return SC_RAISE_ERRNO(SYMCOMM_ERR_INVALID_ARGUMENT, SC_TOPO, "cannot write topology file %s",
                          path);
  sc_result_t result = sc_topo_write_xml(topo, out);
  if (fclose(out) != 0 && result == SYMCOMM_OK)
    result = SC_RAISE_ERRNO(SYMCOMM_ERR_SYSTEM, SC_TOPO, "cannot write topology file %s", path);
  return result;
}
