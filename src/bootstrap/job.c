#include "bootstrap/job.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/log.h"

/* The worlds this process has begun; the root reads it from its thread. */
static atomic_uint_fast64_t sc_job_worlds_begun;

/* Rank 0's root, and what it needs to recognise the job's sessions. */
static pthread_mutex_t sc_job_root_lock = PTHREAD_MUTEX_INITIALIZER;
static sc_store_server_t *sc_job_root;
static sc_secret_t sc_job_root_key;

void sc_job_world_secret(const sc_secret_t *job_key, uint64_t number, sc_secret_t *out) {
  sc_secret_derive(job_key, "world", number, 0, 0, out);
}

/* Worlds rank 0 has begun are served, and the next one: a rank that has
 * finished creating world n may begin n+1 while rank 0 still returns from n. */
static bool sc_job_serves(void *ctx, uint64_t session) {
  const sc_secret_t *key = ctx;
  uint64_t begun = atomic_load(&sc_job_worlds_begun);
  uint64_t first = begun > SC_JOB_WORLDS_BEHIND ? begun - SC_JOB_WORLDS_BEHIND : 0;
  for (uint64_t n = first; n <= begun; n++) {
    sc_secret_t secret;
    sc_job_world_secret(key, n, &secret);
    if (sc_root_session(&secret) == session)
      return true;
  }
  return false;
}

static sc_result_t sc_job_root_listen_fd(const sc_launch_env_t *env, const sc_sockaddr_t *addr,
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

static sc_result_t sc_job_root_ensure(const sc_launch_env_t *env, const sc_sockaddr_t *addr) {
  pthread_mutex_lock(&sc_job_root_lock);
  sc_result_t res = SYMCOMM_OK;
  if (sc_job_root == NULL) {
    int fd = -1;
    res = sc_job_root_listen_fd(env, addr, &fd);
    if (res == SYMCOMM_OK) {
      sc_job_root_key = env->job_key;
      sc_store_server_config_t config = {
          .serves = sc_job_serves, .serves_ctx = &sc_job_root_key, .persistent = true};
      res = sc_store_server_start(fd, &config, &sc_job_root);
      if (res != SYMCOMM_OK)
        close(fd);
    }
  } else if (!sc_secret_equal(&sc_job_root_key, &env->job_key)) {
    res = SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_BOOT,
                   "the job's identity changed since this process's first symcomm_init_from_env "
                   "(%s), but its root still serves the first job",
                   env->key_from);
  }
  pthread_mutex_unlock(&sc_job_root_lock);
  return res;
}

sc_result_t sc_job_next_world(const sc_launch_env_t *env, sc_root_addr_t *root) {
  sc_root_addr_t r;
  memset(&r, 0, sizeof(r));
  SC_CHECK(sc_sockaddr_parse(env->addr, -1, &r.addr));
  uint64_t number = atomic_fetch_add(&sc_job_worlds_begun, 1);
  sc_secret_t secret;
  sc_job_world_secret(&env->job_key, number, &secret);
  sc_root_set_secret(&r, &secret);
  if (env->rank == 0)
    SC_CHECK(sc_job_root_ensure(env, &r.addr));
  SC_INFO(SC_BOOT, "world %llu of the job: session %016llx at %s", (unsigned long long)number,
          (unsigned long long)r.session, env->addr);
  *root = r;
  return SYMCOMM_OK;
}
