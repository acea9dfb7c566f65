#include "bootstrap/launch_env.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/log.h"
#include "util/param.h"

typedef struct sc_launcher_vars {
  const char *name;
  sc_param_id_t rank, size, local_rank, local_size; /* SC_PARAM_COUNT = none */
  sc_param_id_t job_ids[2]; /* what names the job (SC_PARAM_COUNT = none) */
} sc_launcher_vars_t;

static const sc_launcher_vars_t sc_launchers[] = {
    {"symcomm-run", SC_PARAM_RANK, SC_PARAM_WORLD_SIZE, SC_PARAM_LOCAL_RANK, SC_PARAM_LOCAL_SIZE,
     {SC_PARAM_COUNT, SC_PARAM_COUNT}},
    {"torchrun", SC_PARAM_TORCH_RANK, SC_PARAM_TORCH_WORLD_SIZE, SC_PARAM_TORCH_LOCAL_RANK,
     SC_PARAM_TORCH_LOCAL_WORLD_SIZE, {SC_PARAM_TORCHELASTIC_RUN_ID, SC_PARAM_TORCHELASTIC_RESTART_COUNT}},
    {"Open MPI", SC_PARAM_OMPI_RANK, SC_PARAM_OMPI_SIZE, SC_PARAM_OMPI_LOCAL_RANK,
     SC_PARAM_OMPI_LOCAL_SIZE, {SC_PARAM_PMIX_NAMESPACE, SC_PARAM_OMPI_JOBID}},
    {"Slurm", SC_PARAM_SLURM_PROCID, SC_PARAM_SLURM_NTASKS, SC_PARAM_SLURM_LOCALID, SC_PARAM_COUNT,
     {SC_PARAM_SLURM_JOB_ID, SC_PARAM_SLURM_STEP_ID}},
};

static sc_result_t sc_launch_int(sc_param_id_t id, int lo, int hi, int *out) {
  long long v = -1;
  bool set = false;
  if (id == SC_PARAM_COUNT)
    return SYMCOMM_OK;
  SC_CHECK(sc_param_int(id, &v, &set));
  if (!set)
    return SYMCOMM_OK;
  if (v < lo || v > hi)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_ENV, "%s=%lld is out of range [%d, %d]",
                    sc_param_def(id)->name, v, lo, hi);
  *out = (int)v;
  return SYMCOMM_OK;
}

static sc_result_t sc_launch_address(sc_launch_env_t *env) {
  if (sc_param_is_set(SC_PARAM_ADDR)) {
    snprintf(env->addr, sizeof(env->addr), "%s", sc_param_string(SC_PARAM_ADDR));
    env->addr_from = "SYMCOMM_ADDR";
    return SYMCOMM_OK;
  }
  if (sc_param_is_set(SC_PARAM_MASTER_ADDR) && sc_param_is_set(SC_PARAM_MASTER_PORT)) {
    int port = 0, offset = -1;
    SC_CHECK(sc_launch_int(SC_PARAM_MASTER_PORT, 1, 65535, &port));
    SC_CHECK(sc_launch_int(SC_PARAM_MASTER_PORT_OFFSET, -1, 1000, &offset));
    if (offset < 0) /* torchrun's agent serves its own store on MASTER_PORT */
      offset = sc_param_is_set(SC_PARAM_TORCHELASTIC_RUN_ID) ? 1 : 0;
    if (port + offset > 65535)
      return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_ENV,
                      "MASTER_PORT=%d plus SYMCOMM_MASTER_PORT_OFFSET=%d is not a port", port, offset);
    const char *host = sc_param_string(SC_PARAM_MASTER_ADDR);
    bool v6 = strchr(host, ':') != NULL && host[0] != '[';
    snprintf(env->addr, sizeof(env->addr), v6 ? "[%s]:%d" : "%s:%d", host, port + offset);
    env->addr_from = offset ? "MASTER_ADDR:MASTER_PORT+SYMCOMM_MASTER_PORT_OFFSET"
                            : "MASTER_ADDR:MASTER_PORT";
    return SYMCOMM_OK;
  }
  return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_ENV,
                  "%s started this process but no root address is known: set SYMCOMM_ADDR=host:port "
                  "(the host where rank 0 runs and a free port) on every rank",
                  env->launcher);
}

/* Appends ", NAME" (or "NAME" first) to env->key_from. */
static void sc_launch_key_source(sc_launch_env_t *env, const char *name) {
  size_t n = strlen(env->key_from);
  snprintf(env->key_from + n, sizeof(env->key_from) - n, "%s%s", n > 0 ? ", " : "", name);
}

/* The job key (see launch_env.h). Every input is folded in with its name, so
 * that a value cannot pass for another variable's. */
static sc_result_t sc_launch_job_key(const sc_launcher_vars_t *launcher, sc_launch_env_t *env) {
  sc_secret_t key = {{0x73796d636f6d6d20ULL, 0x6a6f62206b657921ULL}};
  sc_secret_absorb(&key, "launcher", launcher->name, strlen(launcher->name));
  env->key_from[0] = '\0';
  env->key_secret = false;
  /* An empty key is a key that went missing ($(cat lost-file)), not a wish
   * to run without one. */
  if (sc_param_is_empty(SC_PARAM_JOB_KEY))
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_ENV,
                    "SYMCOMM_JOB_KEY is set but empty: give every rank the same random key of %d "
                    "characters or more, or unset it",
                    SC_JOB_KEY_MIN_CHARS);
  if (sc_param_is_set(SC_PARAM_JOB_KEY)) {
    const char *text = sc_param_string(SC_PARAM_JOB_KEY);
    if (strlen(text) < SC_JOB_KEY_MIN_CHARS)
      return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_ENV,
                      "SYMCOMM_JOB_KEY has %zu characters: a key shorter than %d could be "
                      "guessed; use 32 random hex digits (e.g. from `openssl rand -hex 16`), the "
                      "same on every rank",
                      strlen(text), SC_JOB_KEY_MIN_CHARS);
    sc_secret_absorb(&key, "SYMCOMM_JOB_KEY", text, strlen(text));
    sc_launch_key_source(env, "SYMCOMM_JOB_KEY");
    env->key_secret = true;
  }
  for (int i = 0; i < 2; i++) {
    sc_param_id_t id = launcher->job_ids[i];
    if (id == SC_PARAM_COUNT || !sc_param_is_set(id))
      continue;
    const char *name = sc_param_def(id)->name, *value = sc_param_string(id);
    sc_secret_absorb(&key, name, value, strlen(value));
    sc_launch_key_source(env, name);
  }
  /* Jobs at once on one host have roots on different ports. */
  const char *port = strrchr(env->addr, ':');
  port = port != NULL ? port + 1 : env->addr;
  sc_secret_absorb(&key, "port", port, strlen(port));
  sc_launch_key_source(env, "the root's port");
  long long size = env->size;
  sc_secret_absorb(&key, "size", &size, sizeof(size));
  sc_launch_key_source(env, "the world size");
  env->job_key = key;
  return SYMCOMM_OK;
}

sc_result_t sc_launch_env_detect(sc_launch_env_t *out) {
  sc_launch_env_t env = {.local_rank = -1, .local_size = -1, .root_fd = -1};
  const sc_launcher_vars_t *found = NULL;
  for (size_t i = 0; i < sizeof(sc_launchers) / sizeof(sc_launchers[0]); i++) {
    const sc_launcher_vars_t *l = &sc_launchers[i];
    bool has_rank = sc_param_is_set(l->rank), has_size = sc_param_is_set(l->size);
    if (has_rank && has_size) {
      found = l;
      break;
    }
    if (has_rank != has_size && l == &sc_launchers[0])
      return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_ENV, "%s is set but %s is not",
                      sc_param_def(has_rank ? l->rank : l->size)->name,
                      sc_param_def(has_rank ? l->size : l->rank)->name);
  }
  if (found == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_ENV,
                    "no launcher found: start the ranks with symcomm-run, torchrun, mpirun or srun "
                    "(or set SYMCOMM_RANK, SYMCOMM_WORLD_SIZE and SYMCOMM_ADDR), or use "
                    "symcomm_comm_init with a unique id");
  env.launcher = found->name;
  env.size = -1;
  env.rank = -1;
  SC_CHECK(sc_launch_int(found->size, 1, 1 << 24, &env.size));
  SC_CHECK(sc_launch_int(found->rank, 0, env.size - 1, &env.rank));
  SC_CHECK(sc_launch_int(found->local_size, 1, env.size, &env.local_size));
  SC_CHECK(sc_launch_int(found->local_rank, 0, env.size - 1, &env.local_rank));
  if (env.local_size > 0 && env.local_rank >= env.local_size)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_ENV, "%s: local rank %d is not below local size %d",
                    found->name, env.local_rank, env.local_size);
  if (found->rank == SC_PARAM_RANK)
    SC_CHECK(sc_launch_int(SC_PARAM_ROOT_FD, 0, 1 << 20, &env.root_fd));
  SC_CHECK(sc_launch_address(&env));
  SC_CHECK(sc_launch_job_key(found, &env));
  SC_INFO(SC_ENV, "launched by %s: rank %d of %d (local %d of %d), root at %s (from %s)",
          env.launcher, env.rank, env.size, env.local_rank, env.local_size, env.addr, env.addr_from);
  SC_INFO(SC_ENV, "job key from %s: %s", env.key_from,
          env.key_secret ? "secret"
                         : "not secret (a stranger who can reach the root and guesses these can "
                           "disturb the job; set SYMCOMM_JOB_KEY to make it secret)");
  *out = env;
  return SYMCOMM_OK;
}
