/* Making world communicators: from a unique id, or from a launcher's environment. */
#include <stdio.h>
#include <string.h>

#include "bootstrap/job.h"
#include "core/comm.h"
#include "util/log.h"
#include "util/param.h"

/* The caller's config.abort_fd ended init: an abort as symcomm_comm_abort's
 * once the root watches this rank (the others hear "rank R aborted"), else
 * the bootstrap's failure says so as init leaves. */
static sc_result_t sc_comm_init_aborted(struct symcomm_comm *comm, int fd) {
  if (comm->watch.listed)
    sc_comm_watch_abort(comm);
  return SC_RAISE(SYMCOMM_ERR_ABORTED, SC_INIT,
                  "init of rank %d of %d aborted: config.abort_fd %d became readable", comm->rank,
                  comm->nranks, fd);
}

sc_result_t sc_comm_init_at_root(const sc_root_addr_t *root, int rank, int nranks,
                                 const sc_comm_options_t *options, bool serves_root,
                                 struct symcomm_comm **out) {
  struct symcomm_comm *comm = NULL;
  SC_CHECK(sc_comm_alloc(rank, nranks, options, &comm));
  comm->session = root->session;
  comm->secret = root->secret;
  comm->root_rank = serves_root ? rank : -1; /* the exchange tells every rank */
  sc_result_t res;
  /* Every wait of init polls the abort fd: the caller's fd ends them too. */
  if (options->abort_fd > 0)
    SC_CHECK_GOTO(sc_wakeup_follow(&comm->abort_wake, options->abort_fd), res, fail);
  SC_CHECK_GOTO(sc_bootstrap_connect(&comm->boot, root, rank, nranks, options->timeout_ms,
                                     comm->abort_wake.fd),
                res, fail);
  SC_CHECK_GOTO(sc_comm_watch_open(comm, root, comm->abort_wake.fd), res, fail);
  SC_CHECK_GOTO(sc_comm_watch_start(comm), res, fail);
  SC_CHECK_GOTO(sc_comm_exchange_identity(comm), res, fail);
  SC_CHECK_GOTO(sc_comm_attach_device(comm), res, fail);
  sc_comm_watch_attach(comm);
  sc_wakeup_unfollow(&comm->abort_wake);
  sc_comm_log_complete(comm, "world");
  *out = comm;
  return SYMCOMM_OK;
fail:
  if (sc_wakeup_followed_ready(&comm->abort_wake))
    res = sc_comm_init_aborted(comm, options->abort_fd);
  sc_wakeup_unfollow(&comm->abort_wake);
  res = sc_comm_explain(comm, res, "init");
  /* What this rank cannot support (too many ranks on a host, say), every
   * rank finds alike from what all exchanged, or fails on its own later:
   * leaving quietly keeps a slower rank from hearing of it as this rank's
   * failure before it finds it itself. */
  if (res == SYMCOMM_ERR_UNSUPPORTED)
    sc_comm_free(comm);
  else
    sc_comm_free_failed(comm);
  return res;
}

/* Set once symcomm_init_from_env has joined the job whose root SYMCOMM_ADDR
 * names: that port is the job's from then on. */
static int sc_env_root_taken;

symcomm_result_t symcomm_get_unique_id(symcomm_unique_id_t *id) {
  sc_error_clear();
  if (id == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "symcomm_get_unique_id: id is NULL");
  sc_comm_options_t options;
  SC_CHECK(sc_comm_options_resolve(NULL, &options));
  sc_sockaddr_t where;
  bool fixed = sc_param_is_set(SC_PARAM_ADDR);
  if (fixed)
    SC_CHECK(sc_sockaddr_parse(sc_param_string(SC_PARAM_ADDR), -1, &where));
  /* A second communicator of a launched job (say, on another backend): its
   * own root, on an address of this process's (SYMCOMM_SOCKET_IFNAME), as a
   * job without SYMCOMM_ADDR would: the job's address may be another
   * machine's, or the launcher's network namespace (symcomm-run --netns). */
  if (fixed && __atomic_load_n(&sc_env_root_taken, __ATOMIC_ACQUIRE))
    fixed = false;
  sc_secret_t secret;
  SC_CHECK(sc_secret_random(&secret));
  sc_root_addr_t root;
  sc_store_server_t *server = NULL;
  SC_CHECK(sc_root_start(fixed ? &where : NULL, NULL, &secret, options.timeout_ms, &root, &server));
  /* The root serves this job on its own from now on and ends once every rank
   * that joined has left (or nobody came within the timeout). */
  sc_store_server_release(server);
  sc_root_encode(&root, id);
  return SYMCOMM_OK;
}

symcomm_result_t symcomm_comm_init(symcomm_comm_t *comm, int nranks, const symcomm_unique_id_t *id,
                                   int rank, const symcomm_config_t *config) {
  sc_error_clear();
  if (comm == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "symcomm_comm_init: comm is NULL");
  if (id == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "symcomm_comm_init: id is NULL");
  if (nranks < 1)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "symcomm_comm_init: nranks = %d", nranks);
  if (rank < 0 || rank >= nranks)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                    "symcomm_comm_init: rank %d is not in [0, %d)", rank, nranks);
  sc_root_addr_t root;
  SC_CHECK(sc_root_decode(id, &root));
  sc_comm_options_t options;
  SC_CHECK(sc_comm_options_resolve(config, &options));
  sc_log_set_rank(rank);
  return sc_comm_init_at_root(&root, rank, nranks, &options, false, comm);
}

symcomm_result_t symcomm_init_from_env(symcomm_comm_t *comm, const symcomm_config_t *config) {
  sc_error_clear();
  if (comm == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "symcomm_init_from_env: comm is NULL");
  sc_comm_options_t options;
  SC_CHECK(sc_comm_options_resolve(config, &options));
  sc_launch_env_t env;
  SC_CHECK(sc_launch_env_detect(&env));
  sc_log_set_rank(env.rank);
  options.host_ranks_hint = env.local_size > 0 ? env.local_size : 0;
  sc_root_addr_t root;
  SC_CHECK(sc_job_next_world(&env, &root));
  __atomic_store_n(&sc_env_root_taken, 1, __ATOMIC_RELEASE);
  return sc_comm_init_at_root(&root, env.rank, env.size, &options, env.rank == 0, comm);
}
