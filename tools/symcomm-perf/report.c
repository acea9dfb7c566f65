/* What rank 0 prints, in the layout of nccl-tests, and the JSON rows of
 * bench/RESULTS_FORMAT.md. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"

/* "hostname / cpu model xN / card", as bench/mpi_allreduce.c writes it. */
void perf_describe_machine(char *buf, size_t len, const char *card) {
  char host[256] = "unknown", model[256] = "unknown cpu";
  gethostname(host, sizeof(host) - 1);
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f != NULL) {
    char line[512];
    while (fgets(line, sizeof(line), f)) {
      char *colon = strchr(line, ':');
      if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
        colon++;
        colon += strspn(colon, " \t");
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(model, sizeof(model), "%s", colon);
        break;
      }
    }
    fclose(f);
  }
  snprintf(buf, len, "%s / %s x%ld / %s", host, model, sysconf(_SC_NPROCESSORS_ONLN), card);
}

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

void perf_print_summary(FILE *out, const perf_row_t *rows, size_t nrows, long long wrong) {
  double sum = 0.0;
  for (size_t i = 0; i < nrows; i++)
    sum += rows[i].busbw;
  fprintf(out, "# Out of bounds values : %lld %s\n", wrong, wrong ? "FAILED" : "OK");
  fprintf(out, "# Avg bus bandwidth    : %g \n", nrows ? sum / (double)nrows : 0.0);
  fprintf(out, "#\n");
  fflush(out);
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

int perf_write_json(const char *path, const char *engine, const char *machine, const char *command,
                    const perf_job_t *job, const perf_row_t *rows, size_t nrows) {
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "symcomm-perf: cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  char date[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf(f, "{\n  \"tool\": \"symcomm-perf\",\n  \"engine\": ");
  json_string(f, engine);
  fprintf(f, ",\n  \"machine\": ");
  json_string(f, machine);
  fprintf(f, ",\n  \"date\": \"%s\",\n  \"nranks\": %d,\n  \"nhosts\": %d,\n  \"command\": ", date,
          job->nranks, job->nhosts);
  json_string(f, command);
  fprintf(f, ",\n  \"rows\": [\n");
  for (size_t i = 0; i < nrows; i++) {
    const perf_row_t *r = &rows[i];
    fprintf(f,
            "    {\"op\": \"%s\", \"dtype\": \"%s\", \"redop\": \"%s\", \"root\": %d, "
            "\"bytes\": %zu, \"count\": %zu, \"inplace\": %s, \"time_us\": %.3f, "
            "\"algbw_gbs\": %.4f, \"busbw_gbs\": %.4f, \"wrong\": %lld}%s\n",
            perf_op_name(r->op), symcomm_dtype_string(r->dtype),
            r->redop >= 0 ? symcomm_op_string((symcomm_op_t)r->redop) : "none", r->root, r->bytes,
            r->count, r->inplace ? "true" : "false", r->time_us, r->algbw, r->busbw, r->wrong,
            i + 1 < nrows ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  if (fclose(f) != 0) {
    fprintf(stderr, "symcomm-perf: error writing %s\n", path);
    return -1;
  }
  return 0;
}
