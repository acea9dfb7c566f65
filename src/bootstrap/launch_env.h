/* Which launcher started this process, and what it says about the job.
 *
 * Rank and size come from the first launcher whose variables are all present:
 *   1. symcomm-run  SYMCOMM_RANK, SYMCOMM_WORLD_SIZE (SYMCOMM_LOCAL_RANK/SIZE)
 *   2. torchrun     RANK, WORLD_SIZE (LOCAL_RANK, LOCAL_WORLD_SIZE)
 *   3. Open MPI     OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE (..._LOCAL_RANK/SIZE)
 *   4. Slurm        SLURM_PROCID, SLURM_NTASKS (SLURM_LOCALID)
 * The root's address: SYMCOMM_ADDR, else MASTER_ADDR:MASTER_PORT (plus
 * SYMCOMM_MASTER_PORT_OFFSET), whichever launcher set them.
 *
 * The job key: what every rank of one job, and no rank of another, derives
 * alike. It folds in SYMCOMM_JOB_KEY when set (symcomm-run sets a random
 * one), the launcher's own job id (torchrun's run id and restart count, the
 * PMIx namespace or Open MPI job id, Slurm's job and step ids), the root's
 * port and the world size. Only SYMCOMM_JOB_KEY makes it secret: the rest
 * keeps concurrent jobs apart but can be guessed (docs/SECURITY.md). */
#ifndef SC_BOOTSTRAP_LAUNCH_ENV_H
#define SC_BOOTSTRAP_LAUNCH_ENV_H

#include <stdbool.h>

#include "util/error.h"
#include "util/secret.h"

/* A SYMCOMM_JOB_KEY shorter than this is refused: it could be guessed. */
#define SC_JOB_KEY_MIN_CHARS 16

typedef struct sc_launch_env {
  const char *launcher;  /* "symcomm-run", "torchrun", "Open MPI" or "Slurm" */
  int rank, size;
  int local_rank;        /* -1 when the launcher does not say */
  int local_size;        /* -1 likewise */
  char addr[320];        /* "host:port" of the root */
  const char *addr_from; /* the variables addr came from */
  int root_fd;           /* listening socket inherited from symcomm-run, -1 if none */
  sc_secret_t job_key;
  bool key_secret;       /* SYMCOMM_JOB_KEY was part of it */
  char key_from[256];    /* the variables it came from */
} sc_launch_env_t;

/* INVALID_USAGE naming the variables when no launcher is recognised, the
 * values make no sense, or no root address is given. */
sc_result_t sc_launch_env_detect(sc_launch_env_t *env);

#endif
