/* The world communicators of a launcher's job (symcomm_init_from_env). Each
 * process numbers the worlds it creates, and every rank creates them in the
 * same order, so world n is the same communicator on every rank; its secret
 * comes from the job key (launch_env.h) and n. Rank 0's process serves every
 * world of the job from one root on the launcher's port, started at its
 * first init and kept until the process exits. That root opens a session
 * only for a world whose secret it can derive and whose number is near the
 * worlds rank 0 has begun, so a stranger cannot make it hold sessions of
 * its own. */
#ifndef SC_BOOTSTRAP_JOB_H
#define SC_BOOTSTRAP_JOB_H

#include <stdint.h>

#include "bootstrap/launch_env.h"
#include "bootstrap/root.h"

/* How far behind rank 0's latest world a rank may still open one: rank 0
 * has returned from every earlier world, so the other ranks have joined
 * them, unless one failed before they came; 3 leaves room for that. */
#define SC_JOB_WORLDS_BEHIND 3

/* The secret of world `number` of the job whose key is job_key. */
void sc_job_world_secret(const sc_secret_t *job_key, uint64_t number, sc_secret_t *out);

/* Where this process's next world communicator meets, with its secret. On
 * rank 0, starts the job's root first if it is not running yet. */
sc_result_t sc_job_next_world(const sc_launch_env_t *env, sc_root_addr_t *root);

#endif
