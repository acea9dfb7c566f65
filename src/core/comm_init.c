/* Making world communicators: from a unique id, or from a launcher's environment. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

#include "bootstrap/launch_env.h"
#include "core/comm.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/param.h"

sc_result_t sc_comm_init_at_root(const sc_root_addr_t *root, int rank, int nranks,
                                 const sc_comm_options_t *options, bool serves_root,
                                 struct symcomm_comm **out) {
  struct symcomm_comm *comm = NULL;
  SC_CHECK(sc_comm_alloc(rank, nranks, options, &comm));
  comm->session = root->session;
  comm->root_rank = serves_root ? rank : -1; /* the exchange tells every rank */
  sc_result_t res;
  SC_CHECK_GOTO(sc_bootstrap_connect(&comm->boot, root, rank, nranks, options->timeout_ms,
                                     comm->abort_wake.fd),
                res, fail);
  SC_CHECK_GOTO(sc_comm_watch_open(comm, root, comm->abort_wake.fd), res, fail);
  SC_CHECK_GOTO(sc_comm_exchange_identity(comm), res, fail);
  SC_CHECK_GOTO(sc_comm_attach_device(comm), res, fail);
  SC_CHECK_GOTO(sc_comm_watch_start(comm), res, fail);
  sc_comm_log_complete(comm, "world");
  *out = comm;
  return SYMCOMM_OK;
fail:
  sc_comm_free_failed(comm);
  return res;
}

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
  uint64_t session;
  SC_CHECK(sc_root_random_session(&session));
  sc_root_addr_t root;
  sc_store_server_t *server = NULL;
  SC_CHECK(sc_root_start(fixed ? &where : NULL, NULL, session, options.timeout_ms, &root, &server));
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

/* Rank 0's root for jobs started by a launcher: one per process, serving the
 * n-th symcomm_init_from_env of every rank as session n, so that a program may
 * init and destroy repeatedly with the same launcher variables. */
static pthread_mutex_t sc_env_root_lock = PTHREAD_MUTEX_INITIALIZER;
static sc_store_server_t *sc_env_root;
static atomic_uint_fast64_t sc_env_generation;

static sc_result_t sc_env_root_listen_fd(const sc_launch_env_t *env, const sc_sockaddr_t *addr,
                                         int *fd) {
  if (env->root_fd >= 0) {
    int accepting = 0;
    socklen_t len = sizeof(accepting);
    if (getsockopt(env->root_fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || !accepting)
      return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_BOOT,
                      "SYMCOMM_ROOT_FD=%d is not a listening socket (set only by symcomm-run)",
                      env->root_fd);
    fcntl(env->root_fd, F_SETFD, FD_CLOEXEC); /* not for the programs this rank starts */
    *fd = env->root_fd;
    return SYMCOMM_OK;
  }
  sc_sockaddr_t any;
  sc_sockaddr_any(addr, &any);
  sc_result_t res = sc_socket_listen(&any, fd, NULL);
  if (res != SYMCOMM_OK)
    sc_error_append(" (rank 0 serves the root on the port of %s; if torchrun's agent holds it, "
                    "see SYMCOMM_MASTER_PORT_OFFSET)",
                    env->addr_from);
  return res;
}

static sc_result_t sc_env_root_ensure(const sc_launch_env_t *env, const sc_sockaddr_t *addr) {
  pthread_mutex_lock(&sc_env_root_lock);
  sc_result_t res = SYMCOMM_OK;
  if (sc_env_root == NULL) {
    int fd = -1;
    res = sc_env_root_listen_fd(env, addr, &fd);
    if (res == SYMCOMM_OK) {
      res = sc_store_server_start(fd, 0, true, 0, &sc_env_root);
      if (res != SYMCOMM_OK)
        close(fd);
    }
  }
  pthread_mutex_unlock(&sc_env_root_lock);
  return res;
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
  SC_CHECK(sc_sockaddr_parse(env.addr, -1, &root.addr));
  uint64_t generation = atomic_fetch_add(&sc_env_generation, 1);
  root.session = sc_hash64(&generation, sizeof(generation), SC_HASH_SEED) | 1;
  if (env.rank == 0)
    SC_CHECK(sc_env_root_ensure(&env, &root.addr));
  return sc_comm_init_at_root(&root, env.rank, env.size, &options, env.rank == 0, comm);
}
