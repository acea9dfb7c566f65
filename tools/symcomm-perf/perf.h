/* symcomm-perf: nccl-tests-style timing and checking of collectives, written
 * against the public API only (and, for --engine nccl, against NCCL and the
 * CUDA runtime loaded at run time). What the files share. */
#ifndef SYMCOMM_PERF_H
#define SYMCOMM_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "symcomm.h"

/* Exit statuses. */
#define PERF_EXIT_OK 0
#define PERF_EXIT_FAILED 1    /* a wrong element, or a call that failed */
#define PERF_EXIT_USAGE 2     /* a bad flag */
#define PERF_EXIT_NO_ENGINE 3 /* --engine nccl without NCCL, CUDA or a GPU */

/* The operations, in the order -o all runs them. */
typedef enum perf_op {
  PERF_ALLREDUCE = 0,
  PERF_REDUCE,
  PERF_BROADCAST,
  PERF_ALLGATHER,
  PERF_REDUCESCATTER,
  PERF_ALLTOALL,
  PERF_SENDRECV,
  PERF_OP_COUNT
} perf_op_t;

typedef enum perf_engine_kind { PERF_ENGINE_SYMCOMM = 0, PERF_ENGINE_NCCL = 1 } perf_engine_kind_t;

/* How the per-rank times become the reported one (-a, as nccl-tests). */
typedef enum perf_average {
  PERF_AVG_RANK0 = 0,
  PERF_AVG_MEAN = 1,
  PERF_AVG_MIN = 2,
  PERF_AVG_MAX = 3
} perf_average_t;

typedef struct perf_options {
  size_t min_bytes, max_bytes;
  size_t factor; /* > 1: multiply by it; 0: add increment */
  size_t increment;
  int iters, warmup, check;
  perf_average_t average;
  int registered;  /* -R 1: buffers in windows */
  int graph_launches; /* -G N: timed iterations captured in a CUDA graph launched N times */
  int gemm_n;         /* --gemm N: an N x N bf16 GEMM beside the collectives; 0: none */
  int check_threads;  /* --check-threads N: threads that make and compare the data; 0: by cores */
  int threads;        /* --threads N: N ranks, each a thread of this one process; 0: off */
  int root;        /* -1: every rank in turn */
  unsigned ops;    /* bit per perf_op_t */
  unsigned dtypes; /* bit per symcomm_dtype_t */
  unsigned redops; /* bit per symcomm_op_t */
  perf_engine_kind_t engine;
  const char *json_path;
  const char *command; /* --command, or NULL */
} perf_options_t;

/* One line of a table: one size of one (op, dtype, redop, root), out of
 * place or in place. */
typedef struct perf_row {
  perf_op_t op;
  symcomm_dtype_t dtype;
  int redop; /* symcomm_op_t, or -1 for an operation that reduces nothing */
  int root;  /* -1 for an operation without one */
  size_t bytes, count;
  int inplace;
  double time_us, algbw, busbw;
  long long wrong; /* -1: not checked */
  /* --gemm: gemm_k GEMMs alone and beside the timed iterations (gemm_k 0:
   * no --gemm); times per GEMM and per iteration, combined over ranks. */
  int gemm_n, gemm_k;
  double gemm_alone_us, gemm_together_us, time_together_us, busbw_together;
} perf_row_t;

/* ---- the job (job.c): the symcomm communicator every engine runs under.
 * Control traffic (times, wrong counts, NCCL's unique id) goes through it. */
typedef struct perf_job {
  symcomm_comm_t comm;
  symcomm_stream_t stream; /* for control collectives only */
  int rank, nranks, local_rank, local_size, nhosts;
  int launched; /* 0: no launcher, a job of one rank */
} perf_job_t;

/* The rank the launcher gave this process as text (SYMCOMM_RANK, RANK,
 * OMPI_COMM_WORLD_RANK, SLURM_PROCID), NULL without a launcher. */
const char *perf_launcher_rank(void);
/* The same, and the variable's name in *var. */
const char *perf_launcher_rank_named(const char **var);
int perf_job_init(perf_job_t *job);
/* --threads: rank `rank` of an nranks-rank job whose ranks are threads of
 * this process, meeting at the root `id` describes. */
int perf_job_init_thread(perf_job_t *job, const symcomm_unique_id_t *id, int rank, int nranks);
/* Control collectives: queued on the job's stream and waited for. 0 or -1
 * (the error printed). */
int perf_job_allreduce(perf_job_t *job, void *buf, size_t count, symcomm_dtype_t dtype,
                       symcomm_op_t op);
int perf_job_broadcast(perf_job_t *job, void *buf, size_t bytes, int root);
/* all[r * bytes ...] = rank r's mine. */
int perf_job_allgather(perf_job_t *job, const void *mine, size_t bytes, void *all);
int perf_job_barrier(perf_job_t *job);
/* The time of this rank combined over ranks as -a says. */
int perf_job_combine_time(perf_job_t *job, perf_average_t how, double mine, double *out);
/* failed: abort first, so that nothing waits for ranks that are gone. */
void perf_job_finish(perf_job_t *job, int failed);

/* ---- operations (ops.c) */
typedef struct perf_counts {
  size_t count;      /* elements of the size nccl-tests prints (see bytes) */
  size_t param;      /* the count argument of the call */
  size_t send_elems; /* elements of the send buffer */
  size_t recv_elems; /* elements of the receive buffer */
} perf_counts_t;

const char *perf_op_name(perf_op_t op);
int perf_op_from_name(const char *name); /* -1 if unknown */
int perf_op_reduces(perf_op_t op);
int perf_op_rooted(perf_op_t op);
/* nccl-tests' bus bandwidth factor. */
double perf_op_bus_factor(perf_op_t op, int nranks);
/* The counts for a nominal size of `bytes`, rounded down to whole elements
 * (and, for block operations, to a multiple of nranks elements). 0 when
 * nothing is left (the size is skipped), else 1. */
int perf_op_counts(perf_op_t op, size_t bytes, size_t elem, int nranks, perf_counts_t *c);

/* ---- data (data.c): inputs whose results are exact in any order */
/* Element `first + j` of `rank`'s input, j < n, into buf. Reductions get
 * small integers (op decides which); other operations (op < 0) get random
 * bit patterns. seed varies them between sizes. */
void perf_data_input(void *buf, symcomm_dtype_t dtype, int op, uint64_t seed, int rank,
                     size_t first, size_t n, int nranks);
/* The reduction over every rank's input of elements first .. first+n-1, as
 * symcomm computes it (fp16/bf16 in float, AVG dividing once, integers
 * wrapping and truncating). */
void perf_data_reduced(void *buf, symcomm_dtype_t dtype, symcomm_op_t op, uint64_t seed,
                       size_t first, size_t n, int nranks);
/* Elements that differ bit for bit. */
size_t perf_data_compare(const void *got, const void *want, size_t elem, size_t n);
/* Threads each of the three above may use on a large buffer (1 to 64). */
void perf_data_set_threads(int threads);
/* A pattern no operation here produces by chance (0xA5 bytes). */
void perf_data_poison(void *buf, size_t bytes);
size_t perf_dtype_size(symcomm_dtype_t dtype);
int perf_dtype_from_name(const char *name); /* -1 if unknown; takes nccl-tests' names too */
int perf_redop_from_name(const char *name); /* -1 if unknown */

/* ---- output (report.c); rank 0 only */
/* devices: PERF_DEVICE_TEXT bytes per rank, from each rank's engine. */
#define PERF_DEVICE_TEXT 96
void perf_print_header(FILE *out, const perf_options_t *o, const perf_job_t *job,
                       const char *command, const char *engine_text, const char *machine,
                       const char *devices);
void perf_print_table_header(FILE *out, perf_op_t op, symcomm_dtype_t dtype, int redop, int root);
/* A table line: the out-of-place row and the in-place row of one size. */
void perf_print_line(FILE *out, const perf_row_t *oop, const perf_row_t *ip);
/* --gemm: the device's SMs and one GEMM's time alone, once after the header;
 * under each table line, the GEMM and the collective alone and together. */
void perf_print_gemm_header(FILE *out, int n, const char *library, int sms, double gemm_us);
void perf_print_gemm_line(FILE *out, const perf_row_t *oop, const perf_row_t *ip);
void perf_print_summary(FILE *out, const perf_row_t *rows, size_t nrows, long long wrong);
int perf_write_json(const char *path, const char *engine, const char *machine, const char *command,
                    const perf_options_t *o, const perf_job_t *job, const perf_row_t *rows,
                    size_t nrows);

#endif
