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

int print_job(FILE *out) {
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
    fflush(out);
  }
  symcomm_comm_destroy(comm);
  return rc;
}
