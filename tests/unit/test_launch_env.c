/* Launcher detection: each launcher's variables, their precedence, the root
 * address and its port offset, and the errors for incomplete environments, and
 * the job key every rank derives alike. */
#include <stdlib.h>
#include <string.h>

#include "bootstrap/launch_env.h"
#include "test_util.h"
#include "util/error.h"
#include "util/param.h"

static void clear_env(void) {
  for (int i = 0; i < SC_PARAM_COUNT; i++)
    unsetenv(sc_param_def((sc_param_id_t)i)->name);
}

static sc_launch_env_t detect_ok(void) {
  sc_launch_env_t env;
  TEST_OK(sc_launch_env_detect(&env));
  return env;
}

static void expect_failure(const char *needle) {
  sc_launch_env_t env;
  sc_result_t r = sc_launch_env_detect(&env);
  TEST_ASSERT(r == SYMCOMM_ERR_INVALID_USAGE, "expected failure mentioning '%s', got %s", needle,
              symcomm_result_string(r));
  TEST_ASSERT(test_contains(sc_error_last(), needle), "'%s' not in: %s", needle, sc_error_last());
}

/* The job key: alike on every rank of a job, different between jobs, secret
 * only with SYMCOMM_JOB_KEY. Two ranks of one job differ in their rank
 * variables only. */
static sc_launch_env_t as_rank(int rank) {
  char text[16];
  snprintf(text, sizeof(text), "%d", rank);
  setenv("SLURM_PROCID", text, 1);
  setenv("SLURM_LOCALID", text, 1);
  return detect_ok();
}

static void test_job_key(void) {
  clear_env();
  setenv("SLURM_NTASKS", "4", 1);
  setenv("MASTER_ADDR", "node0", 1);
  setenv("MASTER_PORT", "29500", 1);
  sc_launch_env_t a = as_rank(0), b = as_rank(3);
  TEST_ASSERT(sc_secret_equal(&a.job_key, &b.job_key), "two ranks of one job differ");
  TEST_ASSERT(!a.key_secret && test_contains(a.key_from, "the root's port"), "%s", a.key_from);
  /* Another host name for rank 0 on some rank: still the same job. */
  setenv("MASTER_ADDR", "10.1.2.3", 1);
  b = as_rank(3);
  TEST_ASSERT(sc_secret_equal(&a.job_key, &b.job_key), "the host's spelling changed the key");
  /* What tells jobs apart. */
  const char *vars[][2] = {{"MASTER_PORT", "29501"}, {"SLURM_NTASKS", "8"},
                           {"SLURM_JOB_ID", "4242"}, {"SLURM_STEP_ID", "1"},
                           {"SYMCOMM_JOB_KEY", "0123456789abcdef0123"}};
  sc_secret_t seen[6];
  seen[0] = a.job_key;
  for (int i = 0; i < 5; i++) {
    setenv(vars[i][0], vars[i][1], 1);
    b = as_rank(0);
    for (int j = 0; j <= i; j++)
      TEST_ASSERT(!sc_secret_equal(&b.job_key, &seen[j]), "%s=%s gives an earlier key", vars[i][0],
                  vars[i][1]);
    TEST_ASSERT(test_contains(b.key_from, vars[i][0][0] == 'M' ? "port" : vars[i][0]) ||
                    strcmp(vars[i][0], "SLURM_NTASKS") == 0,
                "%s not in '%s'", vars[i][0], b.key_from);
    seen[i + 1] = b.job_key;
  }
  TEST_ASSERT(b.key_secret, "SYMCOMM_JOB_KEY did not make the key secret");
  /* Only the detected launcher's ids count: Open MPI's, under Slurm, do not. */
  setenv("PMIX_NAMESPACE", "slurm.pmix.4242.1", 1);
  sc_launch_env_t c = as_rank(0);
  TEST_ASSERT(sc_secret_equal(&b.job_key, &c.job_key), "another launcher's id changed the key");
  /* A guessable key is refused. */
  setenv("SYMCOMM_JOB_KEY", "short", 1);
  expect_failure("SYMCOMM_JOB_KEY has 5 characters");
  /* So is an empty one, which a lost key file gives. */
  setenv("SYMCOMM_JOB_KEY", "", 1);
  expect_failure("SYMCOMM_JOB_KEY is set but empty");
}

int main(void) {
  /* Nothing set: a clear sentence. */
  clear_env();
  expect_failure("no launcher found");

  /* symcomm-run. */
  clear_env();
  setenv("SYMCOMM_RANK", "3", 1);
  setenv("SYMCOMM_WORLD_SIZE", "8", 1);
  setenv("SYMCOMM_LOCAL_RANK", "1", 1);
  setenv("SYMCOMM_LOCAL_SIZE", "2", 1);
  setenv("SYMCOMM_ADDR", "127.0.0.1:4000", 1);
  setenv("SYMCOMM_ROOT_FD", "7", 1);
  sc_launch_env_t e = detect_ok();
  TEST_ASSERT(strcmp(e.launcher, "symcomm-run") == 0 && e.rank == 3 && e.size == 8);
  TEST_ASSERT(e.local_rank == 1 && e.local_size == 2 && e.root_fd == 7);
  TEST_ASSERT(strcmp(e.addr, "127.0.0.1:4000") == 0);
  /* symcomm-run wins over torchrun variables inherited from an outer job. */
  setenv("RANK", "5", 1);
  setenv("WORLD_SIZE", "6", 1);
  e = detect_ok();
  TEST_ASSERT(e.rank == 3 && strcmp(e.launcher, "symcomm-run") == 0);
  /* Half of symcomm-run's pair is a mistake worth naming. */
  unsetenv("SYMCOMM_WORLD_SIZE");
  expect_failure("SYMCOMM_RANK is set but SYMCOMM_WORLD_SIZE is not");

  /* torchrun: MASTER_ADDR:MASTER_PORT, +1 under the elastic agent. */
  clear_env();
  setenv("RANK", "1", 1);
  setenv("WORLD_SIZE", "2", 1);
  setenv("LOCAL_RANK", "1", 1);
  setenv("LOCAL_WORLD_SIZE", "2", 1);
  expect_failure("set SYMCOMM_ADDR");
  setenv("MASTER_ADDR", "localhost", 1);
  setenv("MASTER_PORT", "29500", 1);
  e = detect_ok();
  TEST_ASSERT(strcmp(e.launcher, "torchrun") == 0 && e.rank == 1 && e.size == 2);
  TEST_ASSERT(strcmp(e.addr, "localhost:29500") == 0, "addr %s", e.addr);
  TEST_ASSERT(e.root_fd == -1, "a root fd outside symcomm-run");
  setenv("TORCHELASTIC_RUN_ID", "job", 1);
  e = detect_ok();
  TEST_ASSERT(strcmp(e.addr, "localhost:29501") == 0, "addr %s", e.addr);
  setenv("SYMCOMM_MASTER_PORT_OFFSET", "7", 1);
  e = detect_ok();
  TEST_ASSERT(strcmp(e.addr, "localhost:29507") == 0, "addr %s", e.addr);
  setenv("MASTER_ADDR", "::1", 1);
  e = detect_ok();
  TEST_ASSERT(strcmp(e.addr, "[::1]:29507") == 0, "addr %s", e.addr);
  /* SYMCOMM_ADDR overrides the launcher's address. */
  setenv("SYMCOMM_ADDR", "10.0.0.1:1234", 1);
  e = detect_ok();
  TEST_ASSERT(strcmp(e.addr, "10.0.0.1:1234") == 0);
  setenv("RANK", "2", 1);
  expect_failure("RANK=2 is out of range [0, 1]");
  setenv("RANK", "one", 1);
  sc_launch_env_t env;
  TEST_EXPECT_RESULT(sc_launch_env_detect(&env), SYMCOMM_ERR_INVALID_ARGUMENT);
  TEST_ASSERT(test_contains(sc_error_last(), "RANK='one' is not an integer"), "%s", sc_error_last());

  /* Open MPI needs SYMCOMM_ADDR (it names no address of its own). */
  clear_env();
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  expect_failure("Open MPI started this process but no root address is known");
  setenv("SYMCOMM_ADDR", "[::1]:5000", 1);
  e = detect_ok();
  TEST_ASSERT(strcmp(e.launcher, "Open MPI") == 0 && e.size == 4 && e.local_size == 2);
  TEST_ASSERT(strcmp(e.addr_from, "SYMCOMM_ADDR") == 0);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);
  expect_failure("local rank 2 is not below local size 2");

  /* Slurm; torchrun's variables come first when both are present. */
  clear_env();
  setenv("SLURM_PROCID", "5", 1);
  setenv("SLURM_NTASKS", "16", 1);
  setenv("SLURM_LOCALID", "1", 1);
  setenv("SYMCOMM_ADDR", "node1:6000", 1);
  e = detect_ok();
  TEST_ASSERT(strcmp(e.launcher, "Slurm") == 0 && e.rank == 5 && e.size == 16);
  TEST_ASSERT(e.local_rank == 1 && e.local_size == -1);
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "1", 1);
  e = detect_ok();
  TEST_ASSERT(strcmp(e.launcher, "torchrun") == 0);

  test_job_key();
  printf("test_launch_env: all passed\n");
  return 0;
}
