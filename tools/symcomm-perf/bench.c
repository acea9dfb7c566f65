/* The sweep: for every (op, dtype, redop, root) the options ask for, every
 * size, out of place then in place: warm up, time, check.
 *
 * Timing as nccl-tests: WARMUP launches and a synchronize, a barrier, then
 * ITERS launches and one synchronize between two clock readings; a rank's
 * time is the elapsed time / ITERS, and the reported one is those times
 * combined over ranks (-a; by default the slowest rank's). With -G N the ITERS
 * launches are captured in a CUDA graph first (untimed), and the graph is
 * launched N times between the clock readings (time / (N x ITERS)), as
 * nccl-tests' -G. With --gemm each size is also timed beside a GEMM on
 * another stream (time_together). Checking is a separate launch after the
 * timed ones (whose data has been reduced into itself many times in place):
 * fresh inputs, poisoned outputs, one launch, every element of every rank's
 * result compared bit for bit. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* What one launch is: printed with a failure. */
typedef struct perf_case {
  perf_op_t op;
  symcomm_dtype_t dtype;
  int redop, root;
  perf_counts_t c;
  size_t elem;
  int in_place;
  uint64_t seed;
} perf_case_t;

static int failed(perf_bench_t *b, const perf_case_t *k, const char *what) {
  fprintf(stderr, "symcomm-perf: rank %d: %s %s%s%s %zu B %s: %s failed: %s\n", b->job->rank,
          perf_op_name(k->op), symcomm_dtype_string(k->dtype), k->redop >= 0 ? " " : "",
          k->redop >= 0 ? symcomm_op_string((symcomm_op_t)k->redop) : "", k->c.count * k->elem,
          k->in_place ? "in place" : "out of place", what, b->eng->last_error(b->self));
  return -1;
}

static int launch(perf_bench_t *b, const perf_case_t *k) {
  if (perf_op_launch(b->eng, b->self, k->op, k->dtype, k->redop, k->root, &k->c, b->send, b->recv,
                     k->in_place, b->job->rank, b->job->nranks) != 0)
    return failed(b, k, perf_op_name(k->op));
  return 0;
}

static int sync_engine(perf_bench_t *b, const perf_case_t *k) {
  return b->eng->synchronize(b->self) == 0 ? 0 : failed(b, k, "synchronize");
}

static int cuda_failed(perf_bench_t *b, const char *err) {
  fprintf(stderr, "symcomm-perf: rank %d: %s\n", b->job->rank, err);
  return -1;
}

/* -G: ITERS launches captured into a graph (not run). */
static int capture(perf_bench_t *b, const perf_case_t *k, const perf_cudart_t *rt,
                   cuda_stream_t stream, cuda_graph_exec_t *exec) {
  char err[512];
  int mode = b->opts->threads > 0 ? CUDA_CAPTURE_MODE_THREAD_LOCAL : CUDA_CAPTURE_MODE_GLOBAL;
  if (perf_cudart_capture_begin(rt, stream, mode, err, sizeof(err)) != 0)
    return cuda_failed(b, err);
  int bad = 0;
  for (int i = 0; i < b->opts->iters && !bad; i++)
    bad = launch(b, k) != 0;
  /* Ended even after a failed launch: the stream must leave capture mode. */
  if (perf_cudart_capture_end(rt, stream, exec, err, sizeof(err)) != 0)
    return cuda_failed(b, err);
  if (bad) {
    rt->GraphExecDestroy(*exec);
    return -1;
  }
  return 0;
}

/* One unit of the timed part: a launch, or with -G (exec) a graph of ITERS. */
static int queue_unit(perf_bench_t *b, const perf_case_t *k, const perf_cudart_t *rt,
                      cuda_stream_t stream, cuda_graph_exec_t exec) {
  if (exec == NULL)
    return launch(b, k);
  cuda_error_t e = rt->GraphLaunch(exec, stream);
  if (e == 0)
    return 0;
  char err[512];
  perf_cudart_fail(rt, err, sizeof(err), "cudaGraphLaunch", e);
  return cuda_failed(b, err);
}

/* The timed part with -G: the graph launched `graph_launches` times; seconds
 * per iteration in *mine. */
static int time_graph(perf_bench_t *b, const perf_case_t *k, double *mine) {
  const perf_options_t *o = b->opts;
  const perf_cudart_t *rt = NULL;
  cuda_stream_t stream = NULL;
  cuda_graph_exec_t exec = NULL;
  if (b->eng->cuda_stream(b->self, &rt, &stream) != 0)
    return failed(b, k, "-G");
  if (capture(b, k, rt, stream, &exec) != 0)
    return -1;
  int rc = -1;
  if (perf_job_barrier(b->job) != 0)
    goto out;
  double t0 = now_s();
  for (int g = 0; g < o->graph_launches; g++)
    if (queue_unit(b, k, rt, stream, exec) != 0)
      goto out;
  if (sync_engine(b, k) != 0)
    goto out;
  *mine = (now_s() - t0) / ((double)o->iters * o->graph_launches);
  rc = 0;
out:
  rt->GraphExecDestroy(exec);
  return rc;
}

/* --gemm, after the collective alone took coll_s per iteration: K GEMMs
 * alone, then K GEMMs and the timed iterations queued together, interleaved
 * unit by unit so that both streams start at once. K makes the GEMM loop as
 * long as the collective's timed part was alone. Each side is timed with its
 * own events. */
static int time_together(perf_bench_t *b, const perf_case_t *k, double coll_s, perf_row_t *row) {
  const perf_options_t *o = b->opts;
  perf_gemm_t *g = b->gemm;
  const perf_cudart_t *rt = NULL;
  cuda_stream_t stream = NULL;
  cuda_graph_exec_t exec = NULL;
  char err[512];
  if (b->eng->cuda_stream(b->self, &rt, &stream) != 0)
    return failed(b, k, "--gemm");
  int units = o->graph_launches > 0 ? o->graph_launches : o->iters;
  double span = coll_s * o->iters * (o->graph_launches > 0 ? o->graph_launches : 1);
  double want = b->gemm_call_s > 0 ? span / b->gemm_call_s + 0.5 : 1.0;
  int kk = want < 1.0 ? 1 : want > 100000.0 ? 100000 : (int)want;
  double alone = 0.0, together = 0.0, coll = 0.0;
  if (o->graph_launches > 0 && capture(b, k, rt, stream, &exec) != 0)
    return -1;
  int rc = -1;
  if (perf_job_barrier(b->job) != 0)
    goto out;
  if (perf_gemm_record(g, PERF_GEMM_EV_G0, NULL, err, sizeof(err)) != 0 ||
      perf_gemm_queue(g, kk, err, sizeof(err)) != 0 ||
      perf_gemm_record(g, PERF_GEMM_EV_G1, NULL, err, sizeof(err)) != 0 ||
      perf_gemm_elapsed(g, PERF_GEMM_EV_G0, PERF_GEMM_EV_G1, &alone, err, sizeof(err)) != 0) {
    cuda_failed(b, err);
    goto out;
  }
  if (perf_job_barrier(b->job) != 0)
    goto out;
  if (perf_gemm_record(g, PERF_GEMM_EV_G0, NULL, err, sizeof(err)) != 0 ||
      perf_gemm_record(g, PERF_GEMM_EV_C0, stream, err, sizeof(err)) != 0) {
    cuda_failed(b, err);
    goto out;
  }
  for (int u = 0; u < units; u++) {
    int gemms = (int)((long long)kk * (u + 1) / units - (long long)kk * u / units);
    if (queue_unit(b, k, rt, stream, exec) != 0)
      goto out;
    if (perf_gemm_queue(g, gemms, err, sizeof(err)) != 0) {
      cuda_failed(b, err);
      goto out;
    }
  }
  if (perf_gemm_record(g, PERF_GEMM_EV_C1, stream, err, sizeof(err)) != 0 ||
      perf_gemm_record(g, PERF_GEMM_EV_G1, NULL, err, sizeof(err)) != 0 ||
      perf_gemm_elapsed(g, PERF_GEMM_EV_C0, PERF_GEMM_EV_C1, &coll, err, sizeof(err)) != 0 ||
      perf_gemm_elapsed(g, PERF_GEMM_EV_G0, PERF_GEMM_EV_G1, &together, err, sizeof(err)) != 0) {
    cuda_failed(b, err);
    goto out;
  }
  if (sync_engine(b, k) != 0)
    goto out;
  coll /= (double)o->iters * (o->graph_launches > 0 ? o->graph_launches : 1);
  if (perf_job_combine_time(b->job, o->average, alone / kk, &alone) != 0 ||
      perf_job_combine_time(b->job, o->average, together / kk, &together) != 0 ||
      perf_job_combine_time(b->job, o->average, coll, &coll) != 0)
    goto out;
  row->gemm_n = o->gemm_n;
  row->gemm_k = kk;
  row->gemm_alone_us = alone * 1e6;
  row->gemm_together_us = together * 1e6;
  row->time_together_us = coll * 1e6;
  row->busbw_together = coll > 0 ? (double)row->bytes / coll / 1e9 *
                                       perf_op_bus_factor(k->op, b->job->nranks)
                                 : 0.0;
  rc = 0;
out:
  if (exec != NULL)
    rt->GraphExecDestroy(exec);
  return rc;
}

/* Average seconds per launch, combined over ranks. */
static int time_case(perf_bench_t *b, const perf_case_t *k, double *seconds) {
  const perf_options_t *o = b->opts;
  for (int i = 0; i < o->warmup; i++)
    if (launch(b, k) != 0)
      return -1;
  if (sync_engine(b, k) != 0 || perf_job_barrier(b->job) != 0)
    return -1;
  double mine = 0.0;
  if (o->graph_launches > 0) {
    if (time_graph(b, k, &mine) != 0)
      return -1;
  } else {
    double t0 = now_s();
    for (int i = 0; i < o->iters; i++)
      if (launch(b, k) != 0)
        return -1;
    if (sync_engine(b, k) != 0)
      return -1;
    mine = (now_s() - t0) / o->iters;
  }
  return perf_job_combine_time(b->job, o->average, mine, seconds);
}

/* Fresh inputs, poisoned outputs, on the engine's buffers. */
static int prepare_check(perf_bench_t *b, const perf_case_t *k) {
  int rank = b->job->rank, n = b->job->nranks;
  size_t elem = k->elem;
  const perf_counts_t *c = &k->c;
  void *s, *r;
  perf_op_buffers(k->op, c, elem, b->send, b->recv, k->in_place, rank, &s, &r);
  size_t recv_region =
      (k->in_place && c->send_elems > c->recv_elems ? c->send_elems : c->recv_elems);
  perf_data_poison(b->host, recv_region * elem);
  if (b->eng->upload(b->self, b->recv, b->host, recv_region * elem) != 0)
    return failed(b, k, "upload");
  int kind = perf_op_reduces(k->op) ? k->redop : -1;
  size_t first = 0, len = c->send_elems;
  int from = rank;
  if (k->op == PERF_ALLGATHER)
    first = (size_t)rank * c->param;
  if (k->op == PERF_BROADCAST) {
    if (rank != k->root)
      return 0; /* its send buffer is not read */
    from = k->root;
  }
  perf_data_input(b->host, k->dtype, kind, k->seed, from, first, len, n);
  if (b->eng->upload(b->self, s, b->host, len * elem) != 0)
    return failed(b, k, "upload");
  return 0;
}

/* The expected result of this rank in b->want; 0 when this rank has none. */
static size_t expected(perf_bench_t *b, const perf_case_t *k) {
  int rank = b->job->rank, n = b->job->nranks;
  const perf_counts_t *c = &k->c;
  char *want = b->want;
  switch (k->op) {
  case PERF_REDUCE:
    if (rank != k->root)
      return 0;
    /* fall through */
  case PERF_ALLREDUCE:
    perf_data_reduced(want, k->dtype, (symcomm_op_t)k->redop, k->seed, 0, c->count, n);
    break;
  case PERF_REDUCESCATTER:
    perf_data_reduced(want, k->dtype, (symcomm_op_t)k->redop, k->seed, (size_t)rank * c->param,
                      c->param, n);
    break;
  case PERF_BROADCAST:
    perf_data_input(want, k->dtype, -1, k->seed, k->root, 0, c->count, n);
    break;
  case PERF_SENDRECV:
    perf_data_input(want, k->dtype, -1, k->seed, (rank + n - 1) % n, 0, c->count, n);
    break;
  case PERF_ALLGATHER:
  case PERF_ALLTOALL:
    for (int q = 0; q < n; q++) {
      size_t first = (k->op == PERF_ALLGATHER ? (size_t)q : (size_t)rank) * c->param;
      perf_data_input(want + (size_t)q * c->param * k->elem, k->dtype, -1, k->seed, q, first,
                      c->param, n);
    }
    break;
  default:
    return 0;
  }
  return c->recv_elems;
}

/* Wrong elements summed over ranks. */
static int check_case(perf_bench_t *b, const perf_case_t *k, long long *wrong) {
  if (perf_job_barrier(b->job) != 0 || prepare_check(b, k) != 0 || launch(b, k) != 0 ||
      sync_engine(b, k) != 0)
    return -1;
  int64_t mine = 0;
  size_t n = expected(b, k);
  if (n > 0) {
    void *s, *r;
    perf_op_buffers(k->op, &k->c, k->elem, b->send, b->recv, k->in_place, b->job->rank, &s, &r);
    if (b->eng->download(b->self, b->host, r, n * k->elem) != 0)
      return failed(b, k, "download");
    mine = (int64_t)perf_data_compare(b->host, b->want, k->elem, n);
  }
  if (perf_job_allreduce(b->job, &mine, 1, SYMCOMM_INT64, SYMCOMM_SUM) != 0)
    return -1;
  *wrong = mine;
  return 0;
}

static int add_row(perf_bench_t *b, const perf_row_t *row) {
  if (b->nrows == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 64;
    perf_row_t *rows = realloc(b->rows, cap * sizeof(*rows));
    if (rows == NULL) {
      fprintf(stderr, "symcomm-perf: out of memory for rows\n");
      return -1;
    }
    b->rows = rows;
    b->cap = cap;
  }
  b->rows[b->nrows++] = *row;
  return 0;
}

static int run_case(perf_bench_t *b, perf_case_t *k, perf_row_t *row) {
  double seconds = 0.0;
  /* The first timing of a run pays one-time costs its warm-up does not
   * cover (seen as a slower first cell): time it once more and keep that. */
  if (!b->warmed) {
    if (time_case(b, k, &seconds) != 0)
      return -1;
    b->warmed = 1;
  }
  if (time_case(b, k, &seconds) != 0)
    return -1;
  size_t bytes = k->c.count * k->elem;
  *row = (perf_row_t){.op = k->op,
                      .dtype = k->dtype,
                      .redop = k->redop,
                      .root = k->root,
                      .bytes = bytes,
                      .count = k->c.count,
                      .inplace = k->in_place,
                      .time_us = seconds * 1e6,
                      .wrong = -1};
  row->algbw = seconds > 0 ? (double)bytes / seconds / 1e9 : 0.0;
  row->busbw = row->algbw * perf_op_bus_factor(k->op, b->job->nranks);
  if (b->gemm != NULL && time_together(b, k, seconds, row) != 0)
    return -1;
  if (b->opts->check && b->eng->checkable(b->self, k->op, k->dtype, k->redop, k->in_place)) {
    if (check_case(b, k, &row->wrong) != 0)
      return -1;
    b->wrong += row->wrong;
  }
  return add_row(b, row);
}

static size_t next_size(const perf_options_t *o, size_t bytes) {
  size_t next = o->factor > 1 ? bytes * o->factor : bytes + o->increment;
  if (o->factor > 1 ? next / o->factor != bytes : next < bytes)
    return 0; /* overflow: the end */
  return next;
}

static int run_table(perf_bench_t *b, perf_op_t op, symcomm_dtype_t dtype, int redop, int root,
                     uint64_t *seq) {
  const perf_options_t *o = b->opts;
  int rank0 = b->job->rank == 0;
  if (rank0)
    perf_print_table_header(stdout, op, dtype, redop, root);
  for (size_t bytes = o->min_bytes; bytes != 0 && bytes <= o->max_bytes;
       bytes = next_size(o, bytes)) {
    perf_case_t k = {
        .op = op, .dtype = dtype, .redop = redop, .root = root, .elem = perf_dtype_size(dtype)};
    if (!perf_op_counts(op, bytes, k.elem, b->job->nranks, &k.c))
      continue;
    perf_row_t rows[2];
    for (int ip = 0; ip < 2; ip++) {
      k.in_place = ip;
      k.seed = ++*seq;
      if (run_case(b, &k, &rows[ip]) != 0)
        return -1;
    }
    if (rank0) {
      perf_print_line(stdout, &rows[0], &rows[1]);
      if (b->gemm != NULL)
        perf_print_gemm_line(stdout, &rows[0], &rows[1]);
      fflush(stdout);
    }
  }
  return 0;
}

int perf_bench_run(perf_bench_t *b) {
  const perf_options_t *o = b->opts;
  uint64_t seq = 0;
  for (int op = 0; op < PERF_OP_COUNT; op++) {
    if (!(o->ops & (1u << op)))
      continue;
    if (op == PERF_SENDRECV && b->job->nranks == 1) {
      /* A rank does not send to itself (symcomm_send refuses it). */
      if (b->job->rank == 0)
        printf("#\n# sendrecv needs 2 ranks or more: skipped\n");
      continue;
    }
    for (int dt = 0; dt < SYMCOMM_DTYPE_COUNT; dt++) {
      if (!(o->dtypes & (1u << dt)))
        continue;
      for (int redop = 0; redop < SYMCOMM_OP_COUNT; redop++) {
        int reduces = perf_op_reduces((perf_op_t)op);
        if (reduces && !(o->redops & (1u << redop)))
          continue;
        int first_root = 0, last_root = 0;
        if (perf_op_rooted((perf_op_t)op)) {
          first_root = o->root < 0 ? 0 : o->root;
          last_root = o->root < 0 ? b->job->nranks - 1 : o->root;
        } else {
          first_root = last_root = -1;
        }
        for (int root = first_root; root <= last_root; root++)
          if (run_table(b, (perf_op_t)op, (symcomm_dtype_t)dt, reduces ? redop : -1, root, &seq) !=
              0)
            return -1;
        if (!reduces)
          break; /* one table, whatever --op says */
      }
    }
  }
  return 0;
}
