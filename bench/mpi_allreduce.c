/*
 * mpi_allreduce: the CPU peer that symcomm's all-reduce is measured against.
 *
 * MPI_Allreduce of float32 sums over a range of sizes, timed like nccl-tests
 * (average over the timed iterations, on the slowest rank), every element of
 * every rank's result checked, and the rows written as JSON in the format of
 * bench/RESULTS_FORMAT.md so bench/compare.py can put it beside symcomm-perf.
 *
 *   mpicc -O2 -o build/bench/mpi_allreduce bench/mpi_allreduce.c tools/common/results_json.c
 *   mpirun -np 8 build/bench/mpi_allreduce -b 8 -e 16M -f 2 --json out.json
 *
 * Exit status: 0 when every element was right, 1 when any was wrong, 2 on a
 * usage or allocation error.
 */
#include <mpi.h>

#include "../tools/common/results_json.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_MIN_BYTES 8ull
#define DEFAULT_MAX_BYTES (16ull << 20)
#define DEFAULT_FACTOR 2ull
/* Automatic iteration counts: about AUTO_BYTES moved per rank per size,
 * within [AUTO_MIN_ITERS, AUTO_MAX_ITERS]: 1000 iterations up to 512 KiB,
 * 256 at 2 MiB, 32 at 16 MiB. */
#define AUTO_BYTES (512ull << 20)
#define AUTO_MIN_ITERS 20ull
#define AUTO_MAX_ITERS 1000ull
/* Input values repeat with this period in the element index (see input_value). */
#define VALUE_PERIOD 13

struct options {
    unsigned long long min_bytes, max_bytes, factor;
    long iters;   /* -1: automatic */
    long warmup;  /* -1: automatic */
    const char *json_path;
    const char *command;
};

struct row {
    unsigned long long bytes, count, iters;
    double time_us, algbw, busbw;
    long long wrong;
};

/* Small integers, different per rank and per element, exact in float32 and in
 * any summation order for any realistic number of ranks (|sum| <= 10 * nranks). */
static float input_value(int rank, unsigned long long i)
{
    return (float)((long long)((i + 3ull * (unsigned)rank) % VALUE_PERIOD) + rank % 4 - 5);
}

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [--json FILE] [--command STR]\n"
            "  MPI_Allreduce (float32, sum) from MIN to MAX bytes, multiplying by FACTOR.\n"
            "  -b MIN       smallest size in bytes, K/M/G suffixes allowed (default 8)\n"
            "  -e MAX       largest size (default 16M)\n"
            "  -f FACTOR    size multiplier, an integer >= 2 (default 2)\n"
            "  -n ITERS     timed iterations per size (default: %llu MiB / size, within %llu..%llu)\n"
            "  -w WARMUP    untimed iterations before them (default: ITERS / 10, within 5..100)\n"
            "  --json FILE  write the rows as JSON (bench/RESULTS_FORMAT.md)\n"
            "  --command S  the command line to record in the JSON (default: this program's argv)\n"
            "Sizes are rounded down to whole float32 elements. #wrong counts result elements,\n"
            "summed over all ranks, that differ from the exact sum. Exit 1 if any is wrong.\n",
            prog, AUTO_BYTES >> 20, AUTO_MIN_ITERS, AUTO_MAX_ITERS);
}

/* "8", "64K", "2M", "1G" (powers of 1024). Returns 0 on success. */
static int parse_size(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-')
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: return -1;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0' || (shift && v > (~0ull >> shift)))
        return -1;
    *out = v << shift;
    return 0;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < 0)
        return -1;
    *out = v;
    return 0;
}

/* Returns 0 to run, 1 to exit successfully (--help), -1 on a usage error
 * (explained on stderr when verbose). */
static int parse_args(int argc, char **argv, struct options *o, int verbose)
{
    static const struct option longopts[] = {
        {"json", required_argument, NULL, 'j'},
        {"command", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct options){DEFAULT_MIN_BYTES, DEFAULT_MAX_BYTES, DEFAULT_FACTOR, -1, -1, NULL, NULL};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "b:e:f:n:w:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b': if (parse_size(optarg, &o->min_bytes)) goto bad; break;
        case 'e': if (parse_size(optarg, &o->max_bytes)) goto bad; break;
        case 'f': if (parse_size(optarg, &o->factor) || o->factor < 2) goto bad; break;
        case 'n': if (parse_long(optarg, &o->iters) || o->iters < 1) goto bad; break;
        case 'w': if (parse_long(optarg, &o->warmup)) goto bad; break;
        case 'j': o->json_path = optarg; break;
        case 'c': o->command = optarg; break;
        case 'h': return 1;
        default:
            if (verbose)
                fprintf(stderr, "%s: unknown option or missing value: %s\n", argv[0], argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc) {
        if (verbose)
            fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        return -1;
    }
    if (o->min_bytes < sizeof(float) || o->max_bytes < o->min_bytes) {
        if (verbose)
            fprintf(stderr, "%s: need %zu <= MIN <= MAX\n", argv[0], sizeof(float));
        return -1;
    }
    return 0;
bad:
    if (verbose)
        fprintf(stderr, "%s: bad value for -%c: '%s'\n", argv[0], c, optarg);
    return -1;
}

static unsigned long long auto_iters(unsigned long long bytes)
{
    unsigned long long n = AUTO_BYTES / bytes;
    return n < AUTO_MIN_ITERS ? AUTO_MIN_ITERS : n > AUTO_MAX_ITERS ? AUTO_MAX_ITERS : n;
}

static unsigned long long auto_warmup(unsigned long long iters)
{
    unsigned long long n = iters / 10;
    return n < 5 ? 5 : n > 100 ? 100 : n;
}

/* One size: warm up, time, check the timed iterations' result. Collective. */
static void run_size(const struct options *o, int nranks, float *send, float *recv,
                     const float *expected, unsigned long long count, struct row *r)
{
    unsigned long long iters = o->iters > 0 ? (unsigned long long)o->iters : auto_iters(count * sizeof(float));
    unsigned long long warmup = o->warmup >= 0 ? (unsigned long long)o->warmup : auto_warmup(iters);
    int n = (int)count;

    for (unsigned long long i = 0; i < warmup; i++)
        MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);

    /* Poison the result so a rank whose timed calls wrote nothing fails the check. */
    for (unsigned long long i = 0; i < count; i++)
        recv[i] = NAN;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (unsigned long long i = 0; i < iters; i++)
        MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    double mine = (t1 - t0) / (double)iters, slowest = 0.0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    long long wrong = 0, all_wrong = 0;
    for (unsigned long long i = 0; i < count; i++)
        if (recv[i] != expected[i % VALUE_PERIOD]) /* NaN never compares equal */
            wrong++;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);

    r->bytes = count * sizeof(float);
    r->count = count;
    r->iters = iters;
    r->time_us = slowest * 1e6;
    r->algbw = slowest > 0 ? (double)r->bytes / slowest / 1e9 : 0.0;
    r->busbw = r->algbw * 2.0 * (nranks - 1) / nranks;
    r->wrong = all_wrong;
}

static int count_hosts(int nranks)
{
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    /* A network namespace counts as a host, as symcomm-run --netns makes them
     * (bench/run_net_cpu.sh runs ranks in namespaces of one machine). */
    char ns[64];
    ssize_t nslen = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    if (nslen > 0 && (size_t)len + 1 + (size_t)nslen < sizeof name) {
        ns[nslen] = '\0';
        snprintf(name + len, sizeof name - (size_t)len, " %s", ns);
    }
    char *all = calloc((size_t)nranks, MPI_MAX_PROCESSOR_NAME);
    if (!all)
        return -1;
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    int hosts = 0;
    for (int i = 0; i < nranks; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = strncmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, all + (size_t)j * MPI_MAX_PROCESSOR_NAME,
                           MPI_MAX_PROCESSOR_NAME) == 0;
        hosts += !seen;
    }
    free(all);
    return hosts;
}

static void result_row(const void *ctx, size_t i, results_row_t *out)
{
    const struct row *r = (const struct row *)ctx + i;
    *out = (results_row_t){.op = "allreduce", .dtype = "float32", .redop = "sum", .root = -1,
                           .bytes = r->bytes, .count = r->count, .inplace = 0, .time_us = r->time_us,
                           .algbw_gbs = r->algbw, .busbw_gbs = r->busbw, .wrong = r->wrong};
}

static int write_json(const char *path, const char *command, int nranks, int nhosts, const struct row *rows,
                      size_t nrows)
{
    char machine[768];
    results_describe_machine(machine, sizeof machine, "no GPU");
    results_file_t file = {.program = "mpi_allreduce", .tool = "mpi-baseline", .engine = "openmpi",
                           .machine = machine, .command = command, .nranks = nranks, .nhosts = nhosts};
    return results_write_json(path, &file, nrows, result_row, rows);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    struct options o;
    int parsed = parse_args(argc, argv, &o, rank == 0);
    if (parsed != 0) {
        if (rank == 0)
            usage(parsed > 0 ? stdout : stderr, argv[0]);
        MPI_Finalize();
        return parsed > 0 ? 0 : 2;
    }

    unsigned long long max_count = o.max_bytes / sizeof(float);
    if (max_count > (unsigned long long)INT32_MAX) {
        if (rank == 0)
            fprintf(stderr, "%s: MAX is more than %d elements\n", argv[0], INT32_MAX);
        MPI_Finalize();
        return 2;
    }
    float *send = malloc(max_count * sizeof(float));
    float *recv = malloc(max_count * sizeof(float));
    size_t max_rows = 1;
    for (unsigned long long b = o.min_bytes; b <= o.max_bytes / o.factor; b *= o.factor)
        max_rows++;
    struct row *rows = calloc(max_rows, sizeof *rows);
    int ok = send && recv && rows, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (rank == 0)
            fprintf(stderr, "%s: out of memory for %llu-byte buffers\n", argv[0], o.max_bytes);
        MPI_Finalize();
        return 2;
    }

    float expected[VALUE_PERIOD];
    for (unsigned long long i = 0; i < VALUE_PERIOD; i++) {
        double sum = 0;
        for (int r = 0; r < nranks; r++)
            sum += input_value(r, i);
        expected[i] = (float)sum;
    }
    for (unsigned long long i = 0; i < max_count; i++) {
        send[i] = input_value(rank, i);
        recv[i] = 0.0f;
    }
    int nhosts = count_hosts(nranks);

    if (rank == 0) {
        int vlen = 0;
        char version[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
        MPI_Get_library_version(version, &vlen);
        version[strcspn(version, "\n,")] = '\0';
        printf("# mpi_allreduce: %d ranks on %d host(s), %s\n", nranks, nhosts, version);
        printf("# MPI_Allreduce float32 sum, out-of-place; time = average per iteration on the slowest rank\n");
        printf("#\n");
        printf("# %10s %12s %8s %6s %6s %10s %8s %8s %8s\n", "size", "count", "type", "redop", "iters", "time",
               "algbw", "busbw", "#wrong");
        printf("# %10s %12s %8s %6s %6s %10s %8s %8s %8s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
               "(GB/s)", "");
        fflush(stdout);
    }

    size_t nrows = 0;
    long long total_wrong = 0;
    double busbw_sum = 0;
    for (unsigned long long b = o.min_bytes;; b *= o.factor) {
        unsigned long long count = b / sizeof(float);
        struct row *r = &rows[nrows++];
        run_size(&o, nranks, send, recv, expected, count, r);
        total_wrong += r->wrong;
        busbw_sum += r->busbw;
        if (rank == 0) {
            printf("  %10llu %12llu %8s %6s %6llu %10.2f %8.3f %8.3f %8lld\n", r->bytes, r->count, "float", "sum",
                   r->iters, r->time_us, r->algbw, r->busbw, r->wrong);
            fflush(stdout);
        }
        if (b > o.max_bytes / o.factor)
            break;
    }

    int rc = total_wrong ? 1 : 0;
    if (rank == 0) {
        printf("# Out of bounds values : %lld %s\n", total_wrong, total_wrong ? "FAILED" : "OK");
        printf("# Avg bus bandwidth    : %.4f GB/s\n", busbw_sum / (double)nrows);
        if (o.json_path) {
            char *cmd = o.command ? NULL : results_join_command("", argc, argv);
            if (write_json(o.json_path, o.command ? o.command : cmd ? cmd : argv[0], nranks, nhosts, rows,
                           nrows) != 0)
                rc = 2;
            free(cmd);
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);

    free(rows);
    free(recv);
    free(send);
    MPI_Finalize();
    return rc;
}
