/* What every benchmark of this repository writes beside its table: the machine,
 * the command that ran it, and the JSON file of bench/RESULTS_FORMAT.md. Shared
 * by symcomm-perf and bench/mpi_allreduce.c (which has no symcomm), so plain C. */
#ifndef RESULTS_JSON_H
#define RESULTS_JSON_H

#include <stddef.h>

typedef struct results_row {
  const char *op, *dtype, *redop; /* redop "none" where the operation has none */
  int root;                       /* -1 where it has none */
  unsigned long long bytes, count;
  int inplace;
  double time_us, algbw_gbs, busbw_gbs;
  long long wrong;
  /* symcomm-perf --gemm (gemm_k 0: none, the fields are left out) */
  int gemm_n, gemm_k;
  double gemm_alone_us, gemm_together_us, time_together_us, busbw_together_gbs;
} results_row_t;

typedef struct results_file {
  const char *program; /* names it in error messages */
  const char *tool, *engine, *machine, *command;
  int nranks, nhosts;
  /* symcomm-perf's -R and -G, written where has_settings is set (the
   * baselines have neither) */
  int has_settings, registered, cudagraph;
} results_file_t;

/* "hostname / cpu model xN / card". */
void results_describe_machine(char *buf, size_t len, const char *card);

/* prefix, then argv joined by spaces, quoted where a shell would need it.
 * malloc'ed; NULL without memory. */
char *results_join_command(const char *prefix, int argc, char **argv);

/* Writes the whole file; row_at fills row i of nrows. 0, or -1 with a message
 * on stderr. */
int results_write_json(const char *path, const results_file_t *file, size_t nrows,
                       void (*row_at)(const void *ctx, size_t i, results_row_t *row),
                       const void *ctx);

#endif
