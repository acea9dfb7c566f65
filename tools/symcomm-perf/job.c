/* The job: the symcomm communicator symcomm-perf runs under, whatever the
 * engine, and the few control collectives the harness needs (a barrier, the
 * slowest rank's time, the sum of wrong elements, NCCL's unique id). */
#include <stdio.h>
#include <stdlib.h>

#include "perf.h"

const char *perf_launcher_rank_named(const char **var) {
  static const char *const vars[] = {"SYMCOMM_RANK", "RANK", "OMPI_COMM_WORLD_RANK",
                                     "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
    const char *v = getenv(vars[i]);
    if (v != NULL && *v != '\0') {
      if (var != NULL)
        *var = vars[i];
      return v;
    }
  }
  return NULL;
}

const char *perf_launcher_rank(void) { return perf_launcher_rank_named(NULL); }

static int job_failed(const char *call, symcomm_result_t res, symcomm_comm_t comm, int rank) {
  fprintf(stderr, "symcomm-perf: rank %d: %s failed: %s: %s\n", rank, call,
          symcomm_result_string(res), symcomm_last_error(comm));
  return -1;
}

/* Without a launcher, a job of one rank, as nccl-tests runs without mpirun. */
static symcomm_result_t job_init_alone(symcomm_comm_t *comm, const symcomm_config_t *config) {
  symcomm_unique_id_t id;
  symcomm_result_t res = symcomm_get_unique_id(&id);
  if (res == SYMCOMM_OK)
    res = symcomm_comm_init(comm, 1, &id, 0, config);
  return res;
}

/* Control traffic lives in host memory: the job's communicator runs on the
 * simulated backend whatever the engine measures on. */
static symcomm_config_t job_config(void) {
  symcomm_config_t config = SYMCOMM_CONFIG_INITIALIZER;
  config.backend = "host";
  config.name = "perf-control";
  return config;
}

/* The rest of the start, once job->comm is made. */
static int job_start(perf_job_t *job) {
  symcomm_comm_rank(job->comm, &job->rank);
  symcomm_comm_size(job->comm, &job->nranks);
  symcomm_comm_local_rank(job->comm, &job->local_rank);
  symcomm_comm_local_size(job->comm, &job->local_size);
  symcomm_comm_host_count(job->comm, &job->nhosts);
  symcomm_result_t res = symcomm_stream_create(job->comm, &job->stream);
  if (res != SYMCOMM_OK) {
    job_failed("symcomm_stream_create", res, job->comm, job->rank);
    symcomm_comm_destroy(job->comm);
    job->comm = NULL;
    return -1;
  }
  return 0;
}

int perf_job_init(perf_job_t *job) {
  *job = (perf_job_t){0};
  job->launched = perf_launcher_rank() != NULL;
  symcomm_config_t config = job_config();
  symcomm_result_t res = job->launched ? symcomm_init_from_env(&job->comm, &config)
                                       : job_init_alone(&job->comm, &config);
  if (res != SYMCOMM_OK)
    return job_failed(job->launched ? "symcomm_init_from_env" : "symcomm_comm_init", res, NULL, -1);
  return job_start(job);
}

int perf_job_init_thread(perf_job_t *job, const symcomm_unique_id_t *id, int rank, int nranks) {
  *job = (perf_job_t){0};
  job->launched = 1;
  symcomm_config_t config = job_config();
  symcomm_result_t res = symcomm_comm_init(&job->comm, nranks, id, rank, &config);
  if (res != SYMCOMM_OK)
    return job_failed("symcomm_comm_init", res, NULL, rank);
  return job_start(job);
}

static int job_wait(perf_job_t *job, const char *call, symcomm_result_t res) {
  if (res == SYMCOMM_OK)
    res = symcomm_stream_synchronize(job->stream);
  return res == SYMCOMM_OK ? 0 : job_failed(call, res, job->comm, job->rank);
}

int perf_job_allreduce(perf_job_t *job, void *buf, size_t count, symcomm_dtype_t dtype,
                       symcomm_op_t op) {
  return job_wait(job, "symcomm_allreduce (control)",
                  symcomm_allreduce(buf, buf, count, dtype, op, job->comm, job->stream));
}

int perf_job_broadcast(perf_job_t *job, void *buf, size_t bytes, int root) {
  return job_wait(job, "symcomm_broadcast (control)",
                  symcomm_broadcast(buf, buf, bytes, SYMCOMM_UINT8, root, job->comm, job->stream));
}

int perf_job_allgather(perf_job_t *job, const void *mine, size_t bytes, void *all) {
  return job_wait(job, "symcomm_allgather (control)",
                  symcomm_allgather(mine, all, bytes, SYMCOMM_UINT8, job->comm, job->stream));
}

int perf_job_barrier(perf_job_t *job) {
  int32_t token = 0;
  return perf_job_allreduce(job, &token, 1, SYMCOMM_INT32, SYMCOMM_SUM);
}

int perf_job_combine_time(perf_job_t *job, perf_average_t how, double mine, double *out) {
  double v = mine;
  symcomm_op_t op = how == PERF_AVG_MIN   ? SYMCOMM_MIN
                    : how == PERF_AVG_MAX ? SYMCOMM_MAX
                                          : SYMCOMM_SUM;
  if (how == PERF_AVG_RANK0 && job->rank != 0)
    v = 0.0;
  if (perf_job_allreduce(job, &v, 1, SYMCOMM_FLOAT64, op) != 0)
    return -1;
  *out = how == PERF_AVG_MEAN ? v / job->nranks : v;
  return 0;
}

void perf_job_finish(perf_job_t *job, int failed) {
  if (job->comm == NULL)
    return;
  if (failed)
    symcomm_comm_abort(job->comm);
  /* The stream stays usable after its communicator is gone. */
  symcomm_comm_destroy(job->comm);
  symcomm_stream_destroy(job->stream);
  job->comm = NULL;
}
