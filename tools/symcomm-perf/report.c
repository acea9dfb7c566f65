/* What rank 0 prints, in the layout of nccl-tests, and the JSON rows of
 * bench/RESULTS_FORMAT.md. */
#include <string.h>

#include "../common/results_json.h"
#include "perf.h"

static const char *average_text(perf_average_t a) {
  switch (a) {
  case PERF_AVG_RANK0:
    return "rank 0's";
  case PERF_AVG_MEAN:
    return "the mean over ranks";
  case PERF_AVG_MIN:
    return "the fastest rank's";
  default:
    return "the slowest rank's";
  }
}

void perf_print_header(FILE *out, const perf_options_t *o, const perf_job_t *job,
                       const char *command, const char *engine_text, const char *machine,
                       const char *devices) {
  fprintf(out, "# symcomm-perf: %s\n", command);
  fprintf(out, "# %d rank%s on %d host%s; engine %s; buffers %s\n", job->nranks,
          job->nranks == 1 ? "" : "s", job->nhosts, job->nhosts == 1 ? "" : "s", engine_text,
          o->registered ? "in windows (-R 1)" : "from malloc (-R 0)");
  fprintf(out, "# machine: %s\n", machine);
  fprintf(out, "# iters %d, warmup %d, check %d; time: average per iteration, %s (-a %d)\n",
          o->iters, o->warmup, o->check, average_text(o->average), (int)o->average);
  fprintf(out, "#\n");
  for (int r = 0; r < job->nranks; r++) {
    int host = -1;
    char name[128] = "?";
    symcomm_comm_peer_host(job->comm, r, &host);
    symcomm_comm_host_name(job->comm, host, name, sizeof(name));
    fprintf(out, "#  Rank %3d on %s device %.*s\n", r, name, PERF_DEVICE_TEXT,
            devices + (size_t)r * PERF_DEVICE_TEXT);
  }
  fflush(out);
}

void perf_print_table_header(FILE *out, perf_op_t op, symcomm_dtype_t dtype, int redop, int root) {
  fprintf(out, "#\n# %s, %s", perf_op_name(op), symcomm_dtype_string(dtype));
  if (redop >= 0)
    fprintf(out, ", %s", symcomm_op_string((symcomm_op_t)redop));
  if (root >= 0)
    fprintf(out, ", root %d", root);
  fprintf(out, "\n");
  fprintf(out, "# %10s %13s %9s %6s %5s  %11s%-24s  %13s%-22s\n", "", "", "", "", "", "",
          "out-of-place", "", "in-place");
  fprintf(out, "# %10s %13s %9s %6s %5s  %9s %7s %7s %7s  %9s %7s %7s %7s\n", "size", "count",
          "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
          "#wrong");
  fprintf(out, "# %10s %13s %9s %6s %5s  %9s %7s %7s %7s  %9s %7s %7s %7s\n", "(B)", "(elements)",
          "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

static void print_half(FILE *out, const perf_row_t *r) {
  char wrong[32];
  if (r->wrong < 0)
    snprintf(wrong, sizeof(wrong), "N/A");
  else
    snprintf(wrong, sizeof(wrong), "%lld", r->wrong);
  fprintf(out, "  %9.2f %7.3f %7.3f %7s", r->time_us, r->algbw, r->busbw, wrong);
}

void perf_print_line(FILE *out, const perf_row_t *oop, const perf_row_t *ip) {
  fprintf(out, "  %10zu %13zu %9s %6s %5d", oop->bytes, oop->count,
          symcomm_dtype_string(oop->dtype),
          oop->redop >= 0 ? symcomm_op_string((symcomm_op_t)oop->redop) : "none", oop->root);
  print_half(out, oop);
  print_half(out, ip);
  fprintf(out, "\n");
}

void perf_print_gemm_header(FILE *out, int n, const char *library, int sms, double gemm_us) {
  fprintf(out, "#\n# --gemm %d: %d x %d bf16 cublasGemmEx (fp32 compute, default algo, %s) on a\n"
               "# second stream; device: %d SMs; one GEMM alone: %.1f us. Per size: K GEMMs\n"
               "# (K = the collective's timed part alone / one GEMM) alone, then queued\n"
               "# together with the timed iterations; slowdown = together / alone.\n",
          n, n, n, library, sms, gemm_us);
  fflush(out);
}

static void print_gemm_half(FILE *out, const char *name, const perf_row_t *r) {
  fprintf(out,
          "  %s: K %d; gemm %.1f us alone, %.1f together (slowdown %.3f); busbw %.3f GB/s alone, "
          "%.3f together (slowdown %.3f)",
          name,
          r->gemm_k, r->gemm_alone_us, r->gemm_together_us,
          r->gemm_alone_us > 0 ? r->gemm_together_us / r->gemm_alone_us : 0.0, r->busbw,
          r->busbw_together, r->busbw_together > 0 ? r->busbw / r->busbw_together : 0.0);
}

void perf_print_gemm_line(FILE *out, const perf_row_t *oop, const perf_row_t *ip) {
  fprintf(out, "#");
  print_gemm_half(out, "oop", oop);
  fprintf(out, "\n#");
  print_gemm_half(out, "ip", ip);
  fprintf(out, "\n");
}

void perf_print_summary(FILE *out, const perf_row_t *rows, size_t nrows, long long wrong) {
  double sum = 0.0;
  for (size_t i = 0; i < nrows; i++)
    sum += rows[i].busbw;
  fprintf(out, "# Out of bounds values : %lld %s\n", wrong, wrong ? "FAILED" : "OK");
  fprintf(out, "# Avg bus bandwidth    : %g \n", nrows ? sum / (double)nrows : 0.0);
  fprintf(out, "#\n");
  fflush(out);
}

static void perf_result_row(const void *ctx, size_t i, results_row_t *out) {
  const perf_row_t *r = (const perf_row_t *)ctx + i;
  *out = (results_row_t){.op = perf_op_name(r->op),
                         .dtype = symcomm_dtype_string(r->dtype),
                         .redop = r->redop >= 0 ? symcomm_op_string((symcomm_op_t)r->redop) : "none",
                         .root = r->root,
                         .bytes = r->bytes,
                         .count = r->count,
                         .inplace = r->inplace,
                         .time_us = r->time_us,
                         .algbw_gbs = r->algbw,
                         .busbw_gbs = r->busbw,
                         .wrong = r->wrong,
                         .gemm_n = r->gemm_n,
                         .gemm_k = r->gemm_k,
                         .gemm_alone_us = r->gemm_alone_us,
                         .gemm_together_us = r->gemm_together_us,
                         .time_together_us = r->time_together_us,
                         .busbw_together_gbs = r->busbw_together};
}

int perf_write_json(const char *path, const char *engine, const char *machine, const char *command,
                    const perf_options_t *o, const perf_job_t *job, const perf_row_t *rows,
                    size_t nrows) {
  results_file_t file = {.program = "symcomm-perf", .tool = "symcomm-perf", .engine = engine,
                         .machine = machine, .command = command, .nranks = job->nranks,
                         .nhosts = job->nhosts, .has_settings = 1, .registered = o->registered,
                         .cudagraph = o->graph_launches};
  return results_write_json(path, &file, nrows, perf_result_row, rows);
}
