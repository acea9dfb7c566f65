#include "results_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void results_describe_machine(char *buf, size_t len, const char *card) {
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

char *results_join_command(const char *prefix, int argc, char **argv) {
  size_t len = strlen(prefix) + 1;
  for (int i = 0; i < argc; i++)
    len += 4 * strlen(argv[i]) + 3; /* every ' may become '\'' */
  char *s = malloc(len);
  if (s == NULL)
    return NULL;
  char *p = s + sprintf(s, "%s", prefix);
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int quote = a[0] == '\0' || strpbrk(a, " \t\"'\\$`*?;&|<>()") != NULL;
    if (i)
      *p++ = ' ';
    if (quote)
      *p++ = '\'';
    for (; *a; a++) {
      if (*a == '\'') {
        memcpy(p, "'\\''", 4);
        p += 4;
      } else {
        *p++ = *a;
      }
    }
    if (quote)
      *p++ = '\'';
  }
  *p = '\0';
  return s;
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

int results_write_json(const char *path, const results_file_t *file, size_t nrows,
                       void (*row_at)(const void *ctx, size_t i, results_row_t *row),
                       const void *ctx) {
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "%s: cannot write %s: %s\n", file->program, path, strerror(errno));
    return -1;
  }
  char date[32];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf(f, "{\n  \"tool\": ");
  json_string(f, file->tool);
  fprintf(f, ",\n  \"engine\": ");
  json_string(f, file->engine);
  fprintf(f, ",\n  \"machine\": ");
  json_string(f, file->machine);
  fprintf(f, ",\n  \"date\": \"%s\",\n  \"nranks\": %d,\n  \"nhosts\": %d,\n  \"command\": ", date,
          file->nranks, file->nhosts);
  json_string(f, file->command);
  if (file->has_settings)
    fprintf(f, ",\n  \"registered\": %d,\n  \"cudagraph\": %d", file->registered, file->cudagraph);
  fprintf(f, ",\n  \"rows\": [\n");
  for (size_t i = 0; i < nrows; i++) {
    results_row_t r;
    row_at(ctx, i, &r);
    fprintf(f,
            "    {\"op\": \"%s\", \"dtype\": \"%s\", \"redop\": \"%s\", \"root\": %d, "
            "\"bytes\": %llu, \"count\": %llu, \"inplace\": %s, \"time_us\": %.3f, "
            "\"algbw_gbs\": %.4f, \"busbw_gbs\": %.4f, \"wrong\": %lld",
            r.op, r.dtype, r.redop, r.root, r.bytes, r.count, r.inplace ? "true" : "false",
            r.time_us, r.algbw_gbs, r.busbw_gbs, r.wrong);
    if (r.gemm_k > 0)
      fprintf(f,
              ", \"gemm_n\": %d, \"gemm_k\": %d, \"gemm_alone_us\": %.3f, "
              "\"gemm_together_us\": %.3f, \"gemm_slowdown\": %.4f, \"time_together_us\": %.3f, "
              "\"busbw_together_gbs\": %.4f",
              r.gemm_n, r.gemm_k, r.gemm_alone_us, r.gemm_together_us,
              r.gemm_alone_us > 0 ? r.gemm_together_us / r.gemm_alone_us : 0.0,
              r.time_together_us, r.busbw_together_gbs);
    fprintf(f, "}%s\n", i + 1 < nrows ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  if (fclose(f) != 0) {
    fprintf(stderr, "%s: error writing %s\n", file->program, path);
    return -1;
  }
  return 0;
}
