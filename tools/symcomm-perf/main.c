/* symcomm-perf: an nccl-tests-style benchmark of symcomm's collectives (or
 * NCCL's, --engine nccl), with every result checked. Flags as nccl-tests
 * where it has them, except that -o picks the operation and --op the
 * reduction. Start it under any launcher:
 *
 *   symcomm-run -n 8 -- build/bin/symcomm-perf -o all -d all -b 8 -e 4M -f 2 -c 1
 *
 * Exit status: 0 all right; 1 a wrong element or a failed call; 2 a bad flag;
 * 3 --engine nccl on a machine without NCCL, the CUDA runtime or a GPU (or
 * --gemm without cuBLAS). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/results_json.h"
#include "engine.h"

#define DEFAULT_MIN_BYTES 8
#define DEFAULT_MAX_BYTES (16u << 20)

static const char *const usage_lines[] = {
    "usage: symcomm-perf [options]",
    "  under symcomm-run, torchrun, mpirun or srun (alone: one rank)",
    "  -o, --operation OPS   allreduce reduce broadcast allgather reducescatter alltoall",
    "                        sendrecv, comma-separated, or all (default allreduce)",
    "  -d, --datatype TYPES  int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32",
    "                        float64 (or nccl-tests' half float double bf16), or all (float32)",
    "      --op REDOPS       sum prod min max avg, or all (default sum)",
    "  -b, --minbytes N      smallest size in bytes, K/M/G = powers of 1024 (default 8)",
    "  -e, --maxbytes N      largest size (default 16M)",
    "  -f, --stepfactor F    multiply the size by F (default 2)",
    "  -i, --stepbytes N     add N to the size instead",
    "  -n, --iters N         timed iterations per size (default 20)",
    "  -w, --warmup_iters N  untimed iterations before them (default 5)",
    "  -c, --check 0|1       check every result of every size (default 1)",
    "      --threads N       N ranks (1 to 64) as threads of this one process, started alone",
    "                        (not under a launcher), --engine symcomm only; with SYMCOMM_DEVICE=0",
    "                        SYMCOMM_SHARE_DEVICE=1 their kernels run side by side on one GPU",
    "                        (a proxy, not NVLink: see docs/PERFORMANCE.md), if they all fit",
    "                        at once: SYMCOMM_COLL_MAX_BLOCKS at most SMs / (2 N) (default: off)",
    "      --check-threads N threads of each rank that make the inputs and expected results",
    "                        and compare (1 to 64; default: the host's cores over its ranks,",
    "                        at most 16)",
    "  -r, --root R|all      root of reduce and broadcast; all (or -1): every rank (default 0)",
    "  -a, --average 0..3    time reported: 0 rank 0's, 1 mean over ranks, 2 fastest rank's,",
    "                        3 slowest rank's (default 3)",
    "  -R, --registered 0|1  1: buffers from symcomm_mem_alloc, registered as windows;",
    "                        0: malloc (default 0)",
    "  -G, --cudagraph N     capture the timed iterations in a CUDA graph and launch it N",
    "                        times (needs a CUDA stream: the CUDA backend, or --engine nccl);",
    "                        0: no graph (default 0)",
    "      --gemm N          also time each size beside an N x N bf16 cuBLAS GEMM on a",
    "                        second stream, and the GEMM alone and beside it (needs a CUDA",
    "                        stream: the CUDA backend, or --engine nccl); 0: off (default 0)",
    "      --engine E        symcomm (default) or nccl (libnccl.so.2 and the CUDA runtime,",
    "                        loaded at run time)",
    "      --nccl-lib PATH   the libnccl.so.2 --engine nccl loads (default: the loader's, which",
    "                        must be NCCL's); symcomm's own, build/lib/nccl/libnccl.so.2, with",
    "                        no GPU runs the engine on the simulated GPUs (host memory, NULL stream)",
    "      --json FILE       write every row as JSON (bench/RESULTS_FORMAT.md)",
    "      --command STR     the command to record in the header and the JSON",
    "  -h, --help",
    "Sizes are per-rank buffers as nccl-tests prints them (allgather: the gathered result;",
    "reducescatter: the input; alltoall: the whole send buffer), rounded down to whole",
    "elements and, for those three, to a multiple of the rank count; a size left with",
    "nothing is skipped. #wrong: elements, summed over ranks, that differ bit for bit from",
    "the exact result. Exit status: 0 ok, 1 wrong results or a failed call, 2 bad flags",
    "(--gemm without a CUDA stream too), 3 engine (or cuBLAS for --gemm) unavailable.",
};

static void usage(FILE *out) {
  for (size_t i = 0; i < sizeof(usage_lines) / sizeof(usage_lines[0]); i++)
    fprintf(out, "%s\n", usage_lines[i]);
}

/* The host's cores shared by `here` ranks, at most 16: the data of a 1 GiB
 * size is made in under a second. */
static int check_threads_per_rank(int here) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  long t = cores > 0 && here > 0 ? cores / here : 1;
  return t < 1 ? 1 : t > 16 ? 16 : (int)t;
}

/* The ranks of a host (the hosts hold them evenly) share its cores. */
static int default_check_threads(const perf_job_t *job) {
  int hosts = job->nhosts > 0 ? job->nhosts : 1;
  return check_threads_per_rank((job->nranks + hosts - 1) / hosts);
}

/* "8", "64K", "2M", "1G" (powers of 1024), optionally with B. */
static int parse_size(const char *s, size_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || s[0] == '-')
    return -1;
  unsigned shift = 0;
  switch (*end) {
  case '\0':
    break;
  case 'k':
  case 'K':
    shift = 10;
    end++;
    break;
  case 'm':
  case 'M':
    shift = 20;
    end++;
    break;
  case 'g':
  case 'G':
    shift = 30;
    end++;
    break;
  default:
    return -1;
  }
  if (*end == 'B' || *end == 'b')
    end++;
  if (*end != '\0' || (shift && v > (SIZE_MAX >> shift)) || v > SIZE_MAX)
    return -1;
  *out = (size_t)(v << shift);
  return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v < lo || v > hi)
    return -1;
  *out = (int)v;
  return 0;
}

/* A comma-separated list of names, or "all": a bit per name. */
static int parse_list(const char *s, int (*lookup)(const char *), int count, unsigned *mask) {
  if (strcmp(s, "all") == 0) {
    *mask = (1u << count) - 1;
    return 0;
  }
  char buf[256];
  if (strlen(s) >= sizeof(buf))
    return -1;
  snprintf(buf, sizeof(buf), "%s", s);
  unsigned m = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int v = lookup(tok);
    if (v < 0)
      return -1;
    m |= 1u << v;
  }
  if (m == 0)
    return -1;
  *mask = m;
  return 0;
}

/* Only the rank the launcher calls 0 (or a process without a launcher)
 * prints usage: nothing else is known before the job starts. */
static int looks_like_rank0(void) {
  const char *r = perf_launcher_rank();
  return r == NULL || strcmp(r, "0") == 0;
}

enum { OPT_OP = 1000, OPT_ENGINE, OPT_JSON, OPT_COMMAND, OPT_GEMM, OPT_NCCL_LIB, OPT_CHECK_THREADS,
       OPT_THREADS };

/* "-b" for an option with a letter, "--op" for one without. */
static const char *option_name(const struct option *longopts, int c) {
  static char buf[64];
  if (c < OPT_OP) {
    snprintf(buf, sizeof(buf), "-%c", c);
    return buf;
  }
  for (; longopts->name != NULL; longopts++)
    if (longopts->val == c)
      snprintf(buf, sizeof(buf), "--%s", longopts->name);
  return buf;
}

/* Usage errors said by every rank, which then stop without starting a job. */
#define PARSE_REFUSED_ALONE (-2)

/* 0 to run, 1 for --help, -1 for a usage error (said on stderr), or
 * PARSE_REFUSED_ALONE. */
static int parse_args(int argc, char **argv, perf_options_t *o) {
  static const struct option longopts[] = {
      {"operation", required_argument, NULL, 'o'},
      {"datatype", required_argument, NULL, 'd'},
      {"op", required_argument, NULL, OPT_OP},
      {"minbytes", required_argument, NULL, 'b'},
      {"maxbytes", required_argument, NULL, 'e'},
      {"stepfactor", required_argument, NULL, 'f'},
      {"stepbytes", required_argument, NULL, 'i'},
      {"iters", required_argument, NULL, 'n'},
      {"warmup_iters", required_argument, NULL, 'w'},
      {"check", required_argument, NULL, 'c'},
      {"root", required_argument, NULL, 'r'},
      {"average", required_argument, NULL, 'a'},
      {"registered", required_argument, NULL, 'R'},
      {"cudagraph", required_argument, NULL, 'G'},
      {"engine", required_argument, NULL, OPT_ENGINE},
      {"nccl-lib", required_argument, NULL, OPT_NCCL_LIB},
      {"json", required_argument, NULL, OPT_JSON},
      {"command", required_argument, NULL, OPT_COMMAND},
      {"gemm", required_argument, NULL, OPT_GEMM},
      {"check-threads", required_argument, NULL, OPT_CHECK_THREADS},
      {"threads", required_argument, NULL, OPT_THREADS},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  *o = (perf_options_t){.min_bytes = DEFAULT_MIN_BYTES,
                        .max_bytes = DEFAULT_MAX_BYTES,
                        .factor = 2,
                        .iters = 20,
                        .warmup = 5,
                        .check = 1,
                        .average = PERF_AVG_MAX,
                        .root = 0,
                        .ops = 1u << PERF_ALLREDUCE,
                        .dtypes = 1u << SYMCOMM_FLOAT32,
                        .redops = 1u << SYMCOMM_SUM,
                        .engine = PERF_ENGINE_SYMCOMM};
  int verbose = looks_like_rank0(), c, avg = PERF_AVG_MAX, got_f = 0, got_i = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "o:d:b:e:f:i:n:w:c:r:a:R:G:h", longopts, NULL)) != -1) {
    int bad = 0;
    switch (c) {
    case 'o':
      bad = parse_list(optarg, perf_op_from_name, PERF_OP_COUNT, &o->ops);
      break;
    case 'd':
      bad = parse_list(optarg, perf_dtype_from_name, SYMCOMM_DTYPE_COUNT, &o->dtypes);
      break;
    case OPT_OP:
      bad = parse_list(optarg, perf_redop_from_name, SYMCOMM_OP_COUNT, &o->redops);
      break;
    case 'b':
      bad = parse_size(optarg, &o->min_bytes) || o->min_bytes == 0;
      break;
    case 'e':
      bad = parse_size(optarg, &o->max_bytes);
      break;
    case 'f':
      bad = parse_size(optarg, &o->factor) || o->factor < 2;
      got_f = 1;
      break;
    case 'i':
      bad = parse_size(optarg, &o->increment) || o->increment == 0;
      got_i = 1;
      break;
    case 'n':
      bad = parse_int(optarg, 1, INT_MAX, &o->iters);
      break;
    case 'w':
      bad = parse_int(optarg, 0, INT_MAX, &o->warmup);
      break;
    case 'c':
      bad = parse_int(optarg, 0, 1, &o->check);
      break;
    case 'r':
      if (strcmp(optarg, "all") == 0)
        o->root = -1;
      else
        bad = parse_int(optarg, -1, INT_MAX, &o->root);
      break;
    case 'a':
      bad = parse_int(optarg, 0, 3, &avg);
      break;
    case 'R':
      bad = parse_int(optarg, 0, 1, &o->registered);
      break;
    case 'G':
      bad = parse_int(optarg, 0, 1000000, &o->graph_launches);
      break;
    case OPT_ENGINE:
      if (strcmp(optarg, "symcomm") == 0)
        o->engine = PERF_ENGINE_SYMCOMM;
      else if (strcmp(optarg, "nccl") == 0)
        o->engine = PERF_ENGINE_NCCL;
      else
        bad = 1;
      break;
    case OPT_GEMM:
      bad = parse_int(optarg, 0, 32768, &o->gemm_n);
      break;
    case OPT_CHECK_THREADS:
      bad = parse_int(optarg, 1, 64, &o->check_threads);
      break;
    case OPT_THREADS:
      bad = parse_int(optarg, 1, 64, &o->threads);
      break;
    case OPT_NCCL_LIB:
      perf_engine_nccl_library(optarg);
      break;
    case OPT_JSON:
      o->json_path = optarg;
      break;
    case OPT_COMMAND:
      o->command = optarg;
      break;
    case 'h':
      return 1;
    default:
      if (verbose)
        fprintf(stderr, "symcomm-perf: unknown option or missing value: %s\n", argv[optind - 1]);
      return -1;
    }
    if (bad) {
      if (verbose)
        fprintf(stderr, "symcomm-perf: bad value for %s: '%s'\n", option_name(longopts, c), optarg);
      return -1;
    }
  }
  o->average = (perf_average_t)avg;
  const char *why = NULL;
  if (optind < argc)
    why = "unexpected argument";
  else if (got_f && got_i)
    why = "-f and -i exclude each other";
  else if (o->max_bytes < o->min_bytes)
    why = "-e is smaller than -b";
  else if (o->threads > 0 && perf_launcher_rank() != NULL) {
    /* Said by every rank: the launcher may be a stray variable, and
     * nothing else would explain it. */
    const char *var = "", *rank = perf_launcher_rank_named(&var);
    fprintf(stderr,
            "symcomm-perf: --threads makes every rank a thread of this process, but %s=%s says a "
            "launcher started it: start it alone (unset %s) or drop --threads\n",
            var, rank, var);
    return PARSE_REFUSED_ALONE;
  } else if (o->threads > 0 && o->engine != PERF_ENGINE_SYMCOMM)
    why = "--threads runs --engine symcomm only";
  if (why != NULL) {
    if (verbose)
      fprintf(stderr, "symcomm-perf: %s%s%s\n", why, optind < argc ? ": " : "",
              optind < argc ? argv[optind] : "");
    return -1;
  }
  if (got_i)
    o->factor = 0;
  return 0;
}

/* argv quoted for a shell; under symcomm-run, with the symcomm-run command
 * that makes the same job. */
static char *join_command(int argc, char **argv, const perf_job_t *job) {
  char prefix[96] = "";
  if (getenv("SYMCOMM_WORLD_SIZE") != NULL && perf_launcher_rank() != NULL) {
    if (job->nhosts > 1)
      snprintf(prefix, sizeof(prefix), "symcomm-run -n %d --hosts %d -- ", job->nranks, job->nhosts);
    else
      snprintf(prefix, sizeof(prefix), "symcomm-run -n %d -- ", job->nranks);
  }
  return results_join_command(prefix, argc, argv);
}

/* Every rank opens the engine; all stop if any could not. 0 to go on, else
 * the exit status; *broken when the control collectives failed. */
static int open_engine(perf_job_t *job, const perf_options_t *o, const perf_engine_ops_t *eng,
                       void **self, int *broken) {
  char why[768] = "";
  int rc = eng->open(job, o->registered, self, why, sizeof(why));
  int32_t first = rc == 0 ? job->nranks : job->rank; /* the lowest rank that failed says why */
  int32_t status = PERF_EXIT_OK;
  if (rc != 0)
    status = rc == PERF_ENGINE_UNAVAILABLE ? PERF_EXIT_NO_ENGINE : PERF_EXIT_FAILED;
  *broken = perf_job_allreduce(job, &first, 1, SYMCOMM_INT32, SYMCOMM_MIN) != 0 ||
            perf_job_allreduce(job, &status, 1, SYMCOMM_INT32, SYMCOMM_MAX) != 0;
  if (*broken)
    return PERF_EXIT_FAILED;
  if (first == job->nranks)
    return 0;
  if (first == job->rank) {
    char where[32] = "";
    if (job->rank != 0)
      snprintf(where, sizeof(where), " (on rank %d)", job->rank);
    if (rc == PERF_ENGINE_UNAVAILABLE)
      fprintf(stderr, "symcomm-perf: --engine %s needs libnccl.so.2 and a GPU: %s%s\n", eng->name,
              why, where);
    else
      fprintf(stderr, "symcomm-perf: --engine %s failed to start%s: %s\n", eng->name, where, why);
  }
  if (rc == 0)
    eng->close(*self, 1);
  return status;
}

/* --gemm on every rank: the GEMM's stream, matrices and cuBLAS, and one
 * GEMM's time alone (the slowest rank's). 0 to go on, else the exit status
 * every rank agreed on; the lowest rank that failed says why. */
static int open_gemm(perf_job_t *job, const perf_options_t *o, perf_bench_t *b) {
  const perf_cudart_t *rt = NULL;
  cuda_stream_t native = NULL;
  char err[1024] = "";
  double mine = 0.0;
  int32_t status = PERF_EXIT_OK;
  if (b->eng->cuda_stream(b->self, &rt, &native) != 0) {
    snprintf(err, sizeof(err),
             "--gemm %d runs beside collectives on a CUDA stream (the CUDA backend, or --engine "
             "nccl), and this run has none: %s",
             o->gemm_n, b->eng->last_error(b->self));
    status = PERF_EXIT_USAGE;
  } else {
    int rc = perf_gemm_open(rt, o->gemm_n, &b->gemm, err, sizeof(err));
    if (rc != 0)
      status = rc == PERF_ENGINE_UNAVAILABLE ? PERF_EXIT_NO_ENGINE : PERF_EXIT_FAILED;
    else if (perf_gemm_calibrate(b->gemm, &mine, err, sizeof(err)) != 0)
      status = PERF_EXIT_FAILED;
  }
  int32_t first = status != PERF_EXIT_OK ? job->rank : job->nranks;
  if (perf_job_allreduce(job, &first, 1, SYMCOMM_INT32, SYMCOMM_MIN) != 0 ||
      perf_job_allreduce(job, &status, 1, SYMCOMM_INT32, SYMCOMM_MAX) != 0)
    return PERF_EXIT_FAILED;
  if (first == job->rank) {
    char where[32] = "";
    if (job->rank != 0)
      snprintf(where, sizeof(where), " (on rank %d)", job->rank);
    fprintf(stderr, "symcomm-perf: %s%s\n", err, where);
  }
  if (status != PERF_EXIT_OK)
    return status;
  if (perf_job_combine_time(job, PERF_AVG_MAX, mine, &b->gemm_call_s) != 0)
    return PERF_EXIT_FAILED;
  return 0;
}

static int alloc_buffers(perf_bench_t *b) {
  const perf_engine_ops_t *eng = b->eng;
  if (eng->alloc(b->self, b->buf_bytes, &b->send) != 0 ||
      eng->alloc(b->self, b->buf_bytes, &b->recv) != 0) {
    fprintf(stderr, "symcomm-perf: rank %d: %zu-byte buffers: %s\n", b->job->rank, b->buf_bytes,
            eng->last_error(b->self));
    return -1;
  }
  b->host = malloc(b->buf_bytes);
  b->want = malloc(b->buf_bytes);
  if (b->host == NULL || b->want == NULL) {
    fprintf(stderr, "symcomm-perf: rank %d: out of memory for %zu-byte host buffers\n",
            b->job->rank, b->buf_bytes);
    return -1;
  }
  return 0;
}

static int free_buffers(perf_bench_t *b) {
  int rc = 0;
  if (b->eng->free(b->self, b->recv) != 0 || b->eng->free(b->self, b->send) != 0) {
    fprintf(stderr, "symcomm-perf: rank %d: freeing buffers: %s\n", b->job->rank,
            b->eng->last_error(b->self));
    rc = -1;
  }
  free(b->host);
  free(b->want);
  return rc;
}

/* Under a launcher, the first rank to exit non-zero gets the others stopped:
 * every rank waits here until the one that explains why has said it (unless
 * the control collectives themselves are broken). */
static int stop_together(perf_job_t *job, int status, int broken) {
  fflush(stdout);
  fflush(stderr);
  if (!broken)
    perf_job_barrier(job);
  perf_job_finish(job, broken);
  return status;
}

/* One rank's run once its job has started: the engine, the sizes, the
 * report (rank 0). The exit status, every rank's alike. */
static int run_rank(const perf_options_t *o, perf_job_t *job, int argc, char **argv) {
  if (o->root >= job->nranks) {
    if (job->rank == 0)
      fprintf(stderr, "symcomm-perf: root %d is not a rank of this %d-rank job\n", o->root,
              job->nranks);
    return stop_together(job, PERF_EXIT_USAGE, 0);
  }
  const perf_engine_ops_t *eng =
      o->engine == PERF_ENGINE_NCCL ? &perf_engine_nccl : &perf_engine_symcomm;
  perf_bench_t b = {.opts = o, .job = job, .eng = eng};
  int broken = 0;
  int status = open_engine(job, o, eng, &b.self, &broken);
  if (status != 0)
    return stop_together(job, status, broken);
  int failed = eng->init(b.self) != 0;
  if (failed)
    fprintf(stderr, "symcomm-perf: rank %d: --engine %s: %s\n", job->rank, eng->name,
            eng->last_error(b.self));
  if (!failed && o->graph_launches > 0) {
    /* -G on an engine without a CUDA stream: the run cannot be what was asked. */
    const perf_cudart_t *rt = NULL;
    cuda_stream_t native = NULL;
    int32_t missing = eng->cuda_stream(b.self, &rt, &native) != 0;
    if (missing)
      fprintf(stderr, "symcomm-perf: rank %d: -G %d: %s\n", job->rank, o->graph_launches,
              eng->last_error(b.self));
    if (perf_job_allreduce(job, &missing, 1, SYMCOMM_INT32, SYMCOMM_MAX) != 0)
      failed = 1;
    else if (missing) {
      eng->close(b.self, 0);
      return stop_together(job, PERF_EXIT_NO_ENGINE, 0);
    }
  }
  if (!failed && o->gemm_n > 0) {
    int gemm_status = open_gemm(job, o, &b);
    if (gemm_status != 0) {
      perf_gemm_close(b.gemm);
      eng->close(b.self, gemm_status == PERF_EXIT_FAILED);
      return stop_together(job, gemm_status, 0);
    }
  }

  char engine_text[512], card[256], machine[1024];
  eng->describe(b.self, engine_text, sizeof(engine_text), card, sizeof(card));
  results_describe_machine(machine, sizeof(machine), card);
  char *command = o->command ? strdup(o->command) : join_command(argc, argv, job);
  char mine[PERF_DEVICE_TEXT] = {0};
  char *devices = calloc((size_t)job->nranks, PERF_DEVICE_TEXT);
  eng->device(b.self, mine, sizeof(mine));
  if (!failed && (devices == NULL || perf_job_allgather(job, mine, sizeof(mine), devices) != 0))
    failed = 1;
  if (!failed && job->rank == 0)
    perf_print_header(stdout, o, job, command ? command : argv[0], engine_text, machine, devices);
  if (!failed && job->rank == 0 && b.gemm != NULL)
    perf_print_gemm_header(stdout, o->gemm_n, perf_gemm_library(b.gemm), perf_gemm_sms(b.gemm),
                           b.gemm_call_s * 1e6);
  free(devices);

  /* Room for the largest size in every dtype, 8-byte aligned. */
  b.buf_bytes = (o->max_bytes + 7) / 8 * 8;
  failed = failed || alloc_buffers(&b) != 0 || perf_bench_run(&b) != 0;
  if (!failed && job->rank == 0) {
    perf_print_summary(stdout, b.rows, b.nrows, b.wrong);
    if (o->json_path != NULL &&
        perf_write_json(o->json_path, eng->name, machine, command ? command : argv[0], o, job,
                        b.rows, b.nrows) != 0)
      status = PERF_EXIT_FAILED;
  }
  /* Every rank leaves with rank 0's status, and only once rank 0 has printed
   * (a rank that exits non-zero first gets the others stopped). */
  int32_t agreed = status;
  if (!failed && perf_job_allreduce(job, &agreed, 1, SYMCOMM_INT32, SYMCOMM_MAX) != 0)
    failed = 1;
  status = agreed;
  /* After a failure other ranks may wait for this one forever: abort, and
   * leave collective frees (windows) undone. */
  if (failed)
    symcomm_comm_abort(job->comm);
  else if (free_buffers(&b) != 0)
    failed = 1;
  perf_gemm_close(b.gemm); /* before the engine: its device and runtime */
  if (eng->close(b.self, failed) != 0 && !failed) {
    fprintf(stderr, "symcomm-perf: rank %d: closing --engine %s failed\n", job->rank, eng->name);
    failed = 1;
  }
  perf_job_finish(job, failed);
  free(command);
  free(b.rows);
  if (failed)
    return PERF_EXIT_FAILED;
  if (b.wrong != 0)
    return PERF_EXIT_FAILED;
  return status;
}

/* --threads: the ranks start once every thread exists (go 1), or not at
 * all (go -1): a rank without its thread would keep the others waiting in
 * init until the job's timeout. */
typedef struct rank_gate {
  pthread_mutex_t lock;
  pthread_cond_t opened;
  int go;
} rank_gate_t;

/* Rank `rank` of the job, in a thread of its own. */
typedef struct rank_thread {
  const perf_options_t *o;
  const symcomm_unique_id_t *id;
  rank_gate_t *gate;
  int rank, argc;
  char **argv;
  int status;
  pthread_t tid;
} rank_thread_t;

static void *rank_thread_main(void *arg) {
  rank_thread_t *t = arg;
  pthread_mutex_lock(&t->gate->lock);
  while (t->gate->go == 0)
    pthread_cond_wait(&t->gate->opened, &t->gate->lock);
  int go = t->gate->go;
  pthread_mutex_unlock(&t->gate->lock);
  perf_job_t job;
  t->status = PERF_EXIT_FAILED;
  if (go > 0 && perf_job_init_thread(&job, t->id, t->rank, t->o->threads) == 0)
    t->status = run_rank(t->o, &job, t->argc, t->argv);
  return NULL;
}

static void rank_gate_open(rank_gate_t *gate, int go) {
  pthread_mutex_lock(&gate->lock);
  gate->go = go;
  pthread_cond_broadcast(&gate->opened);
  pthread_mutex_unlock(&gate->lock);
}

/* Every rank a thread of this process, each with its communicators (a rank
 * that fails destroys them, which fails the others' waits for it: no hang).
 * The process exits with the worst status. */
static int run_threads(const perf_options_t *o, int argc, char **argv) {
  /* Ranks sharing a GPU wait for each other's kernels, and by default a
   * process's streams share 8 hardware queues: a rank's kernel queued behind
   * another rank's waiting one could not start. A precaution (2 ranks ran
   * with 8 as well, session 22); 32 is the most CUDA allows, read at the
   * first CUDA call, which comes later. */
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  perf_data_set_threads(o->check_threads > 0 ? o->check_threads
                                             : check_threads_per_rank(o->threads));
  symcomm_unique_id_t id;
  symcomm_result_t res = symcomm_get_unique_id(&id);
  if (res != SYMCOMM_OK) {
    fprintf(stderr, "symcomm-perf: symcomm_get_unique_id failed: %s: %s\n",
            symcomm_result_string(res), symcomm_last_error(NULL));
    return PERF_EXIT_FAILED;
  }
  rank_thread_t *t = calloc((size_t)o->threads, sizeof(*t));
  if (t == NULL) {
    fprintf(stderr, "symcomm-perf: no memory for %d threads\n", o->threads);
    return PERF_EXIT_FAILED;
  }
  rank_gate_t gate = {.lock = PTHREAD_MUTEX_INITIALIZER, .opened = PTHREAD_COND_INITIALIZER};
  int status = PERF_EXIT_OK, started = 0;
  for (; started < o->threads; started++) {
    t[started] = (rank_thread_t){
        .o = o, .id = &id, .gate = &gate, .rank = started, .argc = argc, .argv = argv};
    int rc = pthread_create(&t[started].tid, NULL, rank_thread_main, &t[started]);
    if (rc != 0) {
      fprintf(stderr, "symcomm-perf: no thread for rank %d of %d: %s; no rank starts\n", started,
              o->threads, strerror(rc));
      status = PERF_EXIT_FAILED;
      break;
    }
  }
  rank_gate_open(&gate, status == PERF_EXIT_OK ? 1 : -1);
  for (int r = 0; r < started; r++) {
    pthread_join(t[r].tid, NULL);
    if (t[r].status > status)
      status = t[r].status;
  }
  free(t);
  return status;
}

int main(int argc, char **argv) {
  perf_options_t o;
  int parsed = parse_args(argc, argv, &o);
  perf_job_t job;
  if (parsed == PARSE_REFUSED_ALONE)
    return PERF_EXIT_USAGE;
  if (parsed != 0) {
    int status = parsed > 0 ? PERF_EXIT_OK : PERF_EXIT_USAGE;
    if (perf_launcher_rank() == NULL || perf_job_init(&job) != 0) {
      if (looks_like_rank0())
        usage(parsed > 0 ? stdout : stderr);
      return status;
    }
    if (job.rank == 0)
      usage(parsed > 0 ? stdout : stderr);
    return stop_together(&job, status, 0);
  }
  if (o.threads > 0)
    return run_threads(&o, argc, argv);
  if (perf_job_init(&job) != 0)
    return PERF_EXIT_FAILED;
  perf_data_set_threads(o.check_threads > 0 ? o.check_threads : default_check_threads(&job));
  return run_rank(&o, &job, argc, argv);
}
