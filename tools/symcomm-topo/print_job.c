/* symcomm-topo under a launcher: every rank joins; rank 0 prints the job. */
#include <stdio.h>

#include "topo_print.h"

static int print_host(FILE *out, symcomm_comm_t comm, int host) {
  char name[128];
  symcomm_topo_t topo = NULL;
  symcomm_result_t res = symcomm_comm_host_name(comm, host, name, sizeof(name));
  if (res == SYMCOMM_OK)
    res = symcomm_comm_host_topo(comm, host, &topo);
  if (res != SYMCOMM_OK)
    return report_failure("symcomm_comm_host_topo", res, comm);
  int n = 0;
  symcomm_topo_gpu_count(topo, &n);
  fprintf(out, "\nhost %d: %s, %d rank%s\n", host, name, n, n == 1 ? "" : "s");
  int rc = print_topo_matrix(out, topo, "  ");
  symcomm_topo_free(topo);
  return rc;
}

/* Rank 0's host (host 0) as a topology file. */
static int write_host_xml(FILE *out, symcomm_comm_t comm, const char *path) {
  symcomm_topo_t topo = NULL;
  symcomm_result_t res = symcomm_comm_host_topo(comm, 0, &topo);
  if (res != SYMCOMM_OK)
    return report_failure("symcomm_comm_host_topo", res, comm);
  int n = 0;
  symcomm_topo_gpu_count(topo, &n);
  res = symcomm_topo_write(topo, path);
  symcomm_topo_free(topo);
  if (res != SYMCOMM_OK)
    return report_failure("symcomm_topo_write", res, NULL);
  fprintf(out, "\nwrote %s: host 0's %d GPU%s and their links (SYMCOMM_TOPO_FILE=%s rehearses "
               "on simulated hosts)\n", path, n, n == 1 ? "" : "s", path);
  return 0;
}

int print_job(FILE *out, const char *xml_path) {
  symcomm_comm_t comm = NULL;
  symcomm_result_t res = symcomm_init_from_env(&comm, NULL);
  if (res != SYMCOMM_OK)
    return report_failure("symcomm_init_from_env", res, NULL);
  int rank = 0, size = 0, nhosts = 0, rc = 0;
  symcomm_comm_rank(comm, &rank);
  symcomm_comm_size(comm, &size);
  symcomm_comm_host_count(comm, &nhosts);
  if (rank == 0) {
    int version = 0;
    symcomm_get_version(&version);
    /* Each host's matrix names its ranks and their bus ids, GPU n being
     * the host's local rank n: no separate list of ranks is needed. */
    fprintf(out, "symcomm %d.%d.%d: %d rank%s on %d host%s\n", version / 10000, version / 100 % 100,
            version % 100, size, size == 1 ? "" : "s", nhosts, nhosts == 1 ? "" : "s");
    for (int h = 0; h < nhosts && rc == 0; h++)
      rc = print_host(out, comm, h);
    if (rc == 0)
      print_topo_legend(out);
    if (rc == 0 && xml_path != NULL)
      rc = write_host_xml(out, comm, xml_path);
    fflush(out);
  }
  symcomm_comm_destroy(comm);
  return rc;
}
