/* The nvidia-smi style link matrix and classification of one host. */
#include <stdio.h>

#include "topo_print.h"

int report_failure(const char *call, symcomm_result_t res, symcomm_comm_t comm) {
  fprintf(stderr, "symcomm-topo: %s failed: %s: %s\n", call, symcomm_result_string(res),
          symcomm_last_error(comm));
  return 1;
}

static void cell_text(symcomm_link_t link, int nvlinks, char *buf, size_t len) {
  if (link == SYMCOMM_LINK_NVLINK)
    snprintf(buf, len, "NV%d", nvlinks);
  else
    snprintf(buf, len, "%s", symcomm_link_string(link));
}

int print_topo_matrix(FILE *out, symcomm_topo_t topo, const char *indent) {
  int n = 0;
  symcomm_result_t res = symcomm_topo_gpu_count(topo, &n);
  if (res != SYMCOMM_OK)
    return report_failure("symcomm_topo_gpu_count", res, NULL);
  fprintf(out, "%s%-6s", indent, "");
  for (int b = 0; b < n; b++)
    fprintf(out, " GPU%-3d", b);
  fprintf(out, "  %-14s %s\n", "busId", "rank");
  for (int a = 0; a < n; a++) {
    fprintf(out, "%sGPU%-3d", indent, a);
    for (int b = 0; b < n; b++) {
      symcomm_link_t link;
      int nvlinks = 0;
      char cell[16];
      if ((res = symcomm_topo_link(topo, a, b, &link, &nvlinks)) != SYMCOMM_OK)
        return report_failure("symcomm_topo_link", res, NULL);
      cell_text(link, nvlinks, cell, sizeof(cell));
      fprintf(out, " %-6s", cell);
    }
    char busid[32];
    int rank = -1;
    if ((res = symcomm_topo_gpu_busid(topo, a, busid, sizeof(busid))) != SYMCOMM_OK ||
        (res = symcomm_topo_gpu_rank(topo, a, &rank)) != SYMCOMM_OK)
      return report_failure("symcomm_topo_gpu_busid", res, NULL);
    if (rank >= 0)
      fprintf(out, "  %-14s %d\n", busid, rank);
    else
      fprintf(out, "  %-14s -\n", busid);
  }
  symcomm_topo_class_t cls;
  if ((res = symcomm_topo_class(topo, &cls)) != SYMCOMM_OK)
    return report_failure("symcomm_topo_class", res, NULL);
  fprintf(out, "%sclass: %s\n", indent, symcomm_topo_class_string(cls));
  return 0;
}

void print_topo_legend(FILE *out) {
  fprintf(out, "\nLegend: X = self, NV# = NVLink with # links (direct or through NVSwitch),\n"
               "        PIX = at most one PCIe switch, PXB = several PCIe switches, no host bridge,\n"
               "        PHB = through a PCIe host bridge (one CPU), SYS = across CPUs (NUMA nodes)\n");
}
