/* symcomm-topo: what symcomm sees of a job or of a topology file. */
#include <stdio.h>
#include <string.h>

#include "topo_print.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: symcomm-topo                 join the job (symcomm-run, torchrun, mpirun, srun)\n"
          "                                    and print its hosts, ranks, devices and links from rank 0\n"
          "       symcomm-topo --write-xml FILE  the same, and rank 0 writes its host's GPUs and links\n"
          "                                    as an NCCL-format topology file (for SYMCOMM_TOPO_FILE)\n"
          "       symcomm-topo --xml FILE      print the GPUs and links of an NCCL-format topology file\n"
          "       symcomm-topo --env [--names] list every environment parameter with its value and doc\n");
}

int main(int argc, char **argv) {
  if (argc == 1)
    return print_job(stdout, NULL);
  if (strcmp(argv[1], "--write-xml") == 0 && argc == 3)
    return print_job(stdout, argv[2]);
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--env") == 0 && argc <= 3) {
    int names_only = argc == 3 && strcmp(argv[2], "--names") == 0;
    if (argc == 3 && !names_only) {
      usage(stderr);
      return 2;
    }
    return print_env(stdout, names_only);
  }
  if (strcmp(argv[1], "--xml") == 0 && argc == 3) {
    symcomm_topo_t topo = NULL;
    symcomm_result_t res = symcomm_topo_load(argv[2], &topo);
    if (res != SYMCOMM_OK)
      return report_failure("symcomm_topo_load", res, NULL);
    printf("%s\n", argv[2]);
    int rc = print_topo_matrix(stdout, topo, "");
    print_topo_legend(stdout);
    symcomm_topo_free(topo);
    return rc;
  }
  usage(stderr);
  return 2;
}
