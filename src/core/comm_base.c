/* A communicator's memory, its options, and the checks every entry point makes. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>

#include "core/comm.h"
#include "core/mem_registry.h"
#include "util/clock.h"
#include "util/keep.h"
#include "util/log.h"
#include "util/param.h"

/* The first published symcomm_config_t ends after `name`. */
/* The shortest timeout a job can work with. */
#define SC_TIMEOUT_MIN_MS 100

#define SC_CONFIG_V1_SIZE (offsetof(symcomm_config_t, name) + sizeof(const char *))

sc_result_t sc_comm_check(const struct symcomm_comm *comm) {
  if (comm == NULL)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "the communicator is NULL");
  if (comm->magic == SC_COMM_DEAD)
    return SC_RAISE(SYMCOMM_ERR_INVALID_USAGE, SC_INIT, "the communicator was already destroyed");
  if (comm->magic != SC_COMM_MAGIC)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                    "not a communicator (a stray pointer, or one already destroyed)");
  return SYMCOMM_OK;
}

void sc_comm_note_error(struct symcomm_comm *comm) {
  if (comm != NULL && comm->magic == SC_COMM_MAGIC)
    snprintf(comm->last_error, sizeof(comm->last_error), "%s", sc_error_last());
}

/* How long a call whose wait failed gives the monitor to bring the root's
 * news of why: the root tells every watch as it answers the requests, and a
 * root that died closes the watches with the requests' connections. */
#define SC_COMM_NEWS_MS 300 /* 100 was short on a loaded 2-core machine: a rank named the peer that
                                poisoned its exchange instead of the rank that died */

void sc_comm_await_news(struct symcomm_comm *comm, int64_t ms) {
  int64_t until = sc_now_ms() + ms;
  while (atomic_load(&comm->failed) == SYMCOMM_OK && !atomic_load(&comm->aborted)) {
    int64_t left = until - sc_now_ms();
    if (left <= 0)
      break;
    /* Signalled when the monitor records a failure (or on abort). */
    struct pollfd p = {.fd = comm->abort_wake.fd, .events = POLLIN};
    if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
      break;
  }
}

sc_result_t sc_comm_explain(struct symcomm_comm *comm, sc_result_t res, const char *during) {
  /* Only the owner's thread lists and unlists comm: this read is its own. */
  if (!comm->watch.listed || atomic_load(&comm->aborted))
    return res;
  /* What the root said or did: its connection lost, or the session failed. */
  bool from_root = comm->boot.client.broken || comm->boot.client.session_failed;
  if (res != SYMCOMM_ERR_REMOTE && res != SYMCOMM_ERR_TIMEOUT && res != SYMCOMM_ERR_ABORTED &&
      res != SYMCOMM_ERR_SYSTEM && !(res == SYMCOMM_ERR_INVALID_USAGE && from_root))
    return res; /* not a wait that a failure elsewhere ends */
  sc_comm_await_news(comm, SC_COMM_NEWS_MS);
  if (atomic_load(&comm->aborted))
    return res;
  sc_result_t failed = atomic_load(&comm->failed);
  if (failed == SYMCOMM_OK) {
    /* The root said the job failed, or went away: later calls are refused
     * with this sentence whether or not the monitor's news follows. (A
     * REMOTE of the call's own, a peer's refusal that the ranks agreed on,
     * leaves the communicator working.) */
    if (res == SYMCOMM_ERR_REMOTE && from_root)
      sc_comm_watch_fail(comm, res, sc_error_last());
    return res;
  }
  if (strstr(sc_error_last(), comm->fail_text) != NULL)
    return res; /* says it already */
  char text[sizeof(comm->fail_text) + 64];
  snprintf(text, sizeof(text), "%s%s%s%s", during != NULL ? "during " : "",
           during != NULL ? during : "", during != NULL ? ": " : "", comm->fail_text);
  return sc_error_pass(failed, text);
}

sc_result_t sc_comm_finish_during(struct symcomm_comm *comm, sc_result_t res, const char *during) {
  if (res == SYMCOMM_OK || comm == NULL || comm->magic != SC_COMM_MAGIC)
    return res;
  /* A wait that a failure elsewhere ended reports that failure. */
  res = sc_comm_explain(comm, res, during);
  /* Whatever the abort made a call in progress see (the root's echo of it, a
   * closed connection), the call reports the abort; a bad argument stays the
   * caller's mistake, found before anything happened. */
  if (res != SYMCOMM_ERR_ABORTED && res != SYMCOMM_ERR_INVALID_ARGUMENT &&
      atomic_load(&comm->aborted))
    res = sc_error_pass(SYMCOMM_ERR_ABORTED, "the communicator was aborted");
  sc_comm_note_error(comm);
  return res;
}

sc_result_t sc_comm_finish(struct symcomm_comm *comm, sc_result_t res) {
  return sc_comm_finish_during(comm, res, NULL);
}

sc_result_t sc_comm_check_alive(struct symcomm_comm *comm) {
  /* A program's own failure may be newer than the monitor's last look. */
  if (atomic_load(&comm->failed) == SYMCOMM_OK && comm->status != NULL &&
      __atomic_load_n(&comm->status->failed, __ATOMIC_ACQUIRE) != 0)
    sc_comm_watch_poll_local(comm);
  if (atomic_load(&comm->aborted))
    return SC_RAISE(SYMCOMM_ERR_ABORTED, SC_INIT, "the communicator was aborted");
  sc_result_t failed = atomic_load(&comm->failed);
  if (failed != SYMCOMM_OK)
    return SC_RAISE(failed, SC_INIT, "the communicator failed earlier: %s", comm->fail_text);
  return SYMCOMM_OK;
}

sc_result_t sc_comm_options_resolve(const symcomm_config_t *config, sc_comm_options_t *out) {
  sc_comm_options_t o = {.timeout_ms = 300000, .device = -1};
  SC_CHECK(sc_param_milliseconds(SC_PARAM_TIMEOUT, &o.timeout_ms));
  /* It bounds every wait, counted from the last progress, and waits derived
   * from it are shorter still (half of it for passing memory handles): below
   * a tenth of a second init itself could not finish. */
  if (o.timeout_ms < SC_TIMEOUT_MIN_MS)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV,
                    "SYMCOMM_TIMEOUT=%s: every wait would give up at once; give the seconds a "
                    "wait may go without progress, at least 0.1 (default %s)",
                    sc_param_string(SC_PARAM_TIMEOUT), sc_param_def(SC_PARAM_TIMEOUT)->default_value);
  long long device = -1;
  bool set = false;
  SC_CHECK(sc_param_int(SC_PARAM_DEVICE, &device, &set));
  if (device < -1 || device >= SC_MAX_LOCAL_RANKS)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV, "SYMCOMM_DEVICE=%lld is not -1..%d", device,
                    SC_MAX_LOCAL_RANKS - 1);
  o.device = (int)device;
  long long check = 0;
  SC_CHECK(sc_param_int(SC_PARAM_CHECK, &check, NULL));
  if (check != 0 && check != 1)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV, "SYMCOMM_CHECK=%lld: use 0 or 1", check);
  o.check_calls = check == 1;
  long long share = 0;
  SC_CHECK(sc_param_int(SC_PARAM_SHARE_DEVICE, &share, NULL));
  if (share != 0 && share != 1)
    return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_ENV, "SYMCOMM_SHARE_DEVICE=%lld: use 0 or 1", share);
  o.share_device = share == 1;
  if (config != NULL) {
    if (config->size < SC_CONFIG_V1_SIZE || config->version == 0)
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                      "config.size %zu / version %u: start from SYMCOMM_CONFIG_INITIALIZER",
                      config->size, config->version);
    if (config->version / 10000 != SYMCOMM_VERSION / 10000)
      return SC_RAISE(SYMCOMM_ERR_UNSUPPORTED, SC_INIT,
                      "config built for symcomm %u, but this library is %d (another major version)",
                      config->version, SYMCOMM_VERSION);
    if (config->timeout_ms < 0 || (config->timeout_ms > 0 && config->timeout_ms < SC_TIMEOUT_MIN_MS))
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                      "config.timeout_ms = %d; use 0 for SYMCOMM_TIMEOUT, or at least %d",
                      config->timeout_ms, SC_TIMEOUT_MIN_MS);
    if (config->device < -1 || config->device >= SC_MAX_LOCAL_RANKS)
      return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT, "config.device = %d is not -1..%d",
                      config->device, SC_MAX_LOCAL_RANKS - 1);
    if (config->timeout_ms > 0)
      o.timeout_ms = config->timeout_ms;
    if (config->device >= 0)
      o.device = config->device;
    if (config->name != NULL)
      snprintf(o.name, sizeof(o.name), "%s", config->name);
    /* Callers built before config.backend existed pass a shorter struct. */
    if (config->size >= offsetof(symcomm_config_t, backend) + sizeof(const char *) &&
        config->backend != NULL) {
      const char *b = config->backend;
      if (strcmp(b, "auto") != 0 && strcmp(b, "host") != 0 && strcmp(b, "cuda") != 0)
        return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                        "config.backend = '%s' is not a backend: use auto, host or cuda (or NULL "
                        "for SYMCOMM_BACKEND)", b);
      snprintf(o.backend, sizeof(o.backend), "%s", b);
    }
    if (config->size >= offsetof(symcomm_config_t, abort_fd) + sizeof(int) && config->abort_fd > 0) {
      /* Before init opens fds of its own, one of which could take a closed
       * fd's number. */
      if (fcntl(config->abort_fd, F_GETFD) < 0)
        return SC_RAISE_ERRNO(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                              "config.abort_fd %d is not an open file descriptor",
                              config->abort_fd);
      o.abort_fd = config->abort_fd;
    }
    if (config->size >= offsetof(symcomm_config_t, max_blocks) + sizeof(int)) {
      if (config->max_blocks < 0 || config->max_blocks > SC_COLL_MAX_BLOCKS)
        return SC_RAISE(SYMCOMM_ERR_INVALID_ARGUMENT, SC_INIT,
                        "config.max_blocks = %d: use 0 (SYMCOMM_COLL_MAX_BLOCKS) or 1 to %d",
                        config->max_blocks, SC_COLL_MAX_BLOCKS);
      o.max_blocks = config->max_blocks;
    }
  }
  *out = o;
  return SYMCOMM_OK;
}

sc_result_t sc_comm_alloc(int rank, int nranks, const sc_comm_options_t *options,
                          struct symcomm_comm **out) {
  struct symcomm_comm *comm = calloc(1, sizeof(*comm));
  if (comm == NULL)
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory for a communicator");
  comm->boot.client.fd = -1;
  comm->abort_wake.fd = -1;
  comm->watch.conn.fd = -1;
  comm->root_rank = -1;
  comm->peers = calloc((size_t)nranks, sizeof(*comm->peers));
  if (comm->peers == NULL) {
    free(comm);
    return SC_RAISE(SYMCOMM_ERR_OUT_OF_MEMORY, SC_INIT, "no memory for %d ranks", nranks);
  }
  sc_result_t res = sc_wakeup_open(&comm->abort_wake);
  if (res != SYMCOMM_OK) {
    free(comm->peers);
    free(comm);
    return res;
  }
  comm->magic = SC_COMM_MAGIC;
  comm->rank = rank;
  comm->nranks = nranks;
  comm->options = *options;
  comm->options.abort_fd = 0; /* init's alone: a split of comm does not watch it */
  atomic_init(&comm->aborted, false);
  atomic_init(&comm->failed, SYMCOMM_OK);
  *out = comm;
  return SYMCOMM_OK;
}

/* What the device holds for the communicator, in reverse order of creation. */
static void sc_comm_detach_device(struct symcomm_comm *comm) {
  sc_coll_destroy(comm->coll);
  sc_coll_hosts_destroy(comm->coll_hosts);
  sc_net_destroy(comm->net);
  sc_p2p_destroy(comm->p2p);
  for (sc_window_t *w = comm->windows, *next; w != NULL; w = next) {
    next = w->next;
    sc_devmem_t *user = w->magic == SC_WINDOW_MAGIC && !w->owns_mem ? w->mem : NULL;
    sc_window_release(w); /* unmaps what was not freed; no peer is waited for */
    if (user != NULL) /* a symcomm_mem_alloc buffer: it lives on until symcomm_mem_free */
      sc_mem_drop(user);
  }
  if (comm->dev_window_table != NULL)
    comm->ops->dev_free(comm->device, comm->dev_window_table);
  if (comm->dev_stop != NULL)
    comm->ops->dev_free(comm->device, comm->dev_stop);
  if (comm->window_table != NULL)
    comm->ops->host_free(comm->device, comm->window_table);
  if (comm->status != NULL)
    comm->ops->host_free(comm->device, comm->status);
  if (comm->device != NULL)
    comm->ops->device_close(comm->device);
  if (comm->ops != NULL)
    pthread_mutex_destroy(&comm->lock);
  free(comm->local_of);
  free(comm->local_rank_to_rank);
  free(comm->pids);
  free(comm->used);
}

/* With device_idle false, device work of comm may still run: everything it
 * may use (the status block, windows, scratch, rings, the device itself,
 * all reachable from comm) is kept for good, comm included. */
static void sc_comm_free_parts(struct symcomm_comm *comm, bool device_idle) {
  if (comm == NULL)
    return;
  sc_comm_watch_stop(comm); /* from here on, no other thread touches it */
  if (device_idle)
    sc_comm_detach_device(comm);
  sc_bootstrap_close(&comm->boot);
  if (comm->root != NULL)
    sc_store_server_release(comm->root);
  if (comm->host_topo != NULL)
    for (int h = 0; h < comm->nhosts; h++)
      sc_topo_free(comm->host_topo[h]);
  free(comm->host_topo);
  free(comm->peers);
  sc_wakeup_close(&comm->abort_wake);
  comm->magic = SC_COMM_DEAD;
  if (device_idle)
    free(comm);
  else
    sc_keep(comm);
}

void sc_comm_free(struct symcomm_comm *comm) { sc_comm_free_parts(comm, true); }

void sc_comm_free_busy(struct symcomm_comm *comm) {
  SC_WARN(SC_INIT,
          "comm %p rank %d: its device memory and status block are kept (leaked) for work it "
          "queued that may still run",
          (void *)comm, comm->rank);
  sc_comm_free_parts(comm, false);
}

void sc_comm_free_failed(struct symcomm_comm *comm) {
  if (comm == NULL)
    return;
  sc_bootstrap_fail(&comm->boot, sc_error_last());
  sc_comm_free(comm);
}

void sc_comm_log_complete(const struct symcomm_comm *comm, const char *what) {
  if (!sc_log_enabled(SC_LOG_INFO, SC_INIT))
    return;
  char busid[16];
  sc_busid_format(comm->peers[comm->rank].busid, busid, sizeof(busid));
  const sc_topo_t *topo = comm->host_topo[comm->host];
  SC_INFO(SC_INIT,
          "%s%scomm %p rank %d nranks %d host %d/%d local %d/%d busId %s (%s) %s - Init COMPLETE",
          comm->options.name, comm->options.name[0] ? ": " : "", (const void *)comm, comm->rank,
          comm->nranks, comm->host, comm->nhosts, comm->local_rank, comm->local_size, busid,
          symcomm_topo_class_string(sc_topo_classify(topo)), what);
}
