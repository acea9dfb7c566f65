/* Communicators: init (blocking, non-blocking, inside a group), split,
 * finalize, destroy, abort and the queries. Every live communicator is in a
 * registry, so that a handle that is not one (NULL, destroyed, never made)
 * is refused with a sentence rather than followed. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "shim.h"

static pthread_mutex_t shim_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t shim_released = PTHREAD_COND_INITIALIZER;
static struct ncclComm *shim_registry;

/* With shim_registry_lock held. */
static bool shim_listed(ncclComm_t comm) {
  bool found = false;
  for (struct ncclComm *c = shim_registry; c != NULL && !found; c = c->next)
    found = c == comm;
  return found;
}

static bool shim_registered(ncclComm_t comm) {
  pthread_mutex_lock(&shim_registry_lock);
  bool found = shim_listed(comm);
  pthread_mutex_unlock(&shim_registry_lock);
  return found;
}

/* Takes comm out of the registry; false when it was not there (a second
 * destroy racing the first). */
static bool shim_unregister(ncclComm_t comm) {
  bool found = false;
  pthread_mutex_lock(&shim_registry_lock);
  for (struct ncclComm **p = &shim_registry; *p != NULL; p = &(*p)->next)
    if (*p == comm) {
      *p = comm->next;
      found = true;
      break;
    }
  pthread_mutex_unlock(&shim_registry_lock);
  return found;
}

/* Whether memory allocated through c may stand for memory of a device c is
 * not on: that of a simulated GPU is the process's own, and with no CUDA
 * device current the caller named none. */
static bool shim_comm_serves_any(ncclComm_t c, int device) { return device < 0 || !c->cuda; }

ncclComm_t shim_comm_any(int device) {
  ncclComm_t any = NULL, on = NULL;
  pthread_mutex_lock(&shim_registry_lock);
  /* The oldest (the registry is newest first): the buffer outlives it anyway,
   * so any would do; the oldest keeps the choice stable. A GPU's memory is
   * never made on another GPU, as NCCL's is made on the current one. */
  for (ncclComm_t c = shim_registry; c != NULL; c = c->next)
    if (atomic_load(&c->state) == SHIM_READY) {
      if (c->device == device)
        on = c;
      else if (shim_comm_serves_any(c, device))
        any = c;
    }
  pthread_mutex_unlock(&shim_registry_lock);
  return on != NULL ? on : any;
}

/* Why a handle that is not in the registry is refused. */
static ncclResult_t shim_comm_refuse(ncclComm_t comm, const char *call) {
  if (comm == NULL)
    return shim_fail(ncclInvalidArgument, "%s: the communicator is NULL", call);
  return shim_fail(ncclInvalidArgument,
                   "%s: %p is not a live communicator (destroyed, aborted, or never made)", call,
                   (void *)comm);
}

ncclResult_t shim_comm_live(ncclComm_t comm, const char *call) {
  return comm != NULL && shim_registered(comm) ? ncclSuccess : shim_comm_refuse(comm, call);
}

/* Joins comm's init thread once it has finished (or, with wait, until it
 * has). Whoever joins, others that must wait for the init use shim_comm_wait. */
static void shim_comm_join(ncclComm_t comm, bool wait) {
  pthread_mutex_lock(&comm->lock);
  bool join = comm->init_joinable && (wait || atomic_load(&comm->state) != SHIM_PENDING);
  if (join)
    comm->init_joinable = false;
  pthread_mutex_unlock(&comm->lock);
  if (join)
    pthread_join(comm->init_thread, NULL);
}

/* Whether a live comm is ready for work: else the result and sentence. */
static ncclResult_t shim_comm_state(ncclComm_t comm, const char *call) {
  switch (atomic_load(&comm->state)) {
  case SHIM_READY: return ncclSuccess;
  case SHIM_PENDING:
    return shim_fail(ncclInvalidUsage,
                     "%s: the communicator is still being made (non-blocking init, or init in a "
                     "group not yet ended); wait until ncclCommGetAsyncError gives ncclSuccess",
                     call);
  default:
    return shim_fail(comm->init_result, "%s: the communicator's init failed: %s", call,
                     comm->init_error);
  }
}

ncclResult_t shim_comm_ready(ncclComm_t comm, const char *call) {
  ncclResult_t res = shim_comm_live(comm, call);
  return res == ncclSuccess ? shim_comm_state(comm, call) : res;
}

ncclResult_t shim_comm_hold(ncclComm_t comm, bool ready, const char *call) {
  pthread_mutex_lock(&shim_registry_lock);
  bool live = comm != NULL && shim_listed(comm);
  if (live)
    comm->holds++;
  pthread_mutex_unlock(&shim_registry_lock);
  if (!live)
    return shim_comm_refuse(comm, call);
  ncclResult_t res = ready ? shim_comm_state(comm, call) : ncclSuccess;
  if (res != ncclSuccess)
    shim_comm_release(comm);
  return res;
}

void shim_comm_release(ncclComm_t comm) {
  pthread_mutex_lock(&shim_registry_lock);
  if (--comm->holds == 0)
    pthread_cond_broadcast(&shim_released);
  pthread_mutex_unlock(&shim_registry_lock);
}

/* Waits until no call holds comm (it is out of the registry: no new hold comes). */
static void shim_comm_unheld(ncclComm_t comm) {
  pthread_mutex_lock(&shim_registry_lock);
  while (comm->holds > 0)
    pthread_cond_wait(&shim_released, &shim_registry_lock);
  pthread_mutex_unlock(&shim_registry_lock);
}

/* The caller's current CUDA device where the process has a CUDA runtime (as
 * NCCL takes it), else -1: symcomm's default (SYMCOMM_DEVICE, the local rank). */
int shim_current_device(void) {
  int (*get)(int *) = (int (*)(int *))dlsym(RTLD_DEFAULT, "cudaGetDevice");
  int dev = -1;
  if (get == NULL || get(&dev) != 0)
    return -1;
  return dev;
}

static ncclComm_t shim_comm_new(int nranks, const ncclUniqueId *id, int rank, int device,
                                const shim_config_t *cfg) {
  ncclComm_t comm = calloc(1, sizeof(*comm));
  if (comm == NULL)
    return NULL;
  pthread_mutex_init(&comm->lock, NULL);
  pthread_cond_init(&comm->settled, NULL);
  comm->cancel_fd = -1;
  comm->nranks = nranks;
  comm->rank = rank;
  comm->device = device;
  comm->blocking = cfg->blocking;
  comm->max_ctas = cfg->max_ctas;
  if (id != NULL)
    comm->id = *id;
  if (cfg->name != NULL) {
    snprintf(comm->name, sizeof(comm->name), "%s", cfg->name);
    comm->has_name = true;
  }
  atomic_store(&comm->state, SHIM_PENDING);
  pthread_mutex_lock(&shim_registry_lock);
  comm->next = shim_registry;
  shim_registry = comm;
  pthread_mutex_unlock(&shim_registry_lock);
  return comm;
}

static void shim_comm_free(ncclComm_t comm) {
  while (comm->regs != NULL) {
    shim_reg_t *r = comm->regs;
    comm->regs = r->next;
    free(r);
  }
  free(comm->streams);
  if (comm->cancel_fd >= 0)
    close(comm->cancel_fd);
  pthread_cond_destroy(&comm->settled);
  pthread_mutex_destroy(&comm->lock);
  free(comm);
}

/* What a communicator needs once symcomm made it: its place and backend. */
static symcomm_result_t shim_comm_attach(ncclComm_t comm) {
  const char *backend = NULL;
  symcomm_result_t res = symcomm_comm_rank(comm->sc, &comm->rank);
  if (res == SYMCOMM_OK)
    res = symcomm_comm_size(comm->sc, &comm->nranks);
  if (res == SYMCOMM_OK)
    res = symcomm_comm_device(comm->sc, &backend, &comm->device);
  if (res == SYMCOMM_OK) {
    comm->cuda = strcmp(backend, "cuda") == 0;
    if (!comm->cuda)
      res = symcomm_stream_create(comm->sc, &comm->own);
  }
  return res;
}

/* Records how init ended; the sentence stays with comm for whichever thread asks. */
static void shim_comm_settle_as(ncclComm_t comm, ncclResult_t result) {
  pthread_mutex_lock(&comm->lock);
  comm->init_result = result;
  atomic_store(&comm->state, result == ncclSuccess ? SHIM_READY : SHIM_FAILED);
  pthread_cond_broadcast(&comm->settled);
  pthread_mutex_unlock(&comm->lock);
}

static void shim_comm_settle(ncclComm_t comm, symcomm_result_t res, symcomm_comm_t errcomm) {
  if (res != SYMCOMM_OK)
    snprintf(comm->init_error, sizeof(comm->init_error), "%s", symcomm_last_error(errcomm));
  shim_comm_settle_as(comm, res == SYMCOMM_OK ? ncclSuccess : shim_map_result(res));
}

void shim_comm_run_init(ncclComm_t comm) {
  symcomm_config_t cfg = SYMCOMM_CONFIG_INITIALIZER;
  cfg.device = comm->device;
  cfg.name = comm->has_name ? comm->name : NULL;
  cfg.abort_fd = comm->cancel_fd > 0 ? comm->cancel_fd : 0;
  cfg.max_blocks = shim_max_blocks(comm->max_ctas);
  symcomm_result_t res = symcomm_comm_init(&comm->sc, comm->nranks,
                                           (const symcomm_unique_id_t *)&comm->id, comm->rank, &cfg);
  symcomm_comm_t errcomm = NULL;
  if (res == SYMCOMM_OK && (res = shim_comm_attach(comm)) != SYMCOMM_OK)
    errcomm = comm->sc;
  shim_comm_settle(comm, res, errcomm);
}

static void *shim_comm_init_thread(void *arg) {
  shim_comm_run_init(arg);
  return NULL;
}

/* Runs comm's init in a thread of its own (non-blocking, or one of a group's). */
ncclResult_t shim_comm_start(ncclComm_t comm) {
  /* Without it an abort would wait for the init (up to SYMCOMM_TIMEOUT). */
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd == 0) { /* stdin was closed: to symcomm, abort_fd 0 means none */
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 1);
    close(fd);
    fd = moved;
  }
  if (fd < 0) {
    snprintf(comm->init_error, sizeof(comm->init_error), "no eventfd for the init: %s",
             strerror(errno));
    shim_comm_settle_as(comm, ncclSystemError); /* the sentence is in init_error */
    return shim_fail(ncclSystemError, "%s", comm->init_error);
  }
  pthread_mutex_lock(&comm->lock);
  comm->cancel_fd = fd;
  int err = pthread_create(&comm->init_thread, NULL, shim_comm_init_thread, comm);
  comm->init_joinable = err == 0;
  pthread_mutex_unlock(&comm->lock);
  if (err != 0) {
    snprintf(comm->init_error, sizeof(comm->init_error), "no thread for the init: %s",
             strerror(err));
    shim_comm_settle_as(comm, ncclSystemError); /* the sentence is in init_error */
    return shim_fail(ncclSystemError, "%s", comm->init_error);
  }
  return ncclSuccess;
}

/* Waits for a started init (a thread may be joining it: the state says when
 * it ended); its result, with the sentence. */
ncclResult_t shim_comm_wait(ncclComm_t comm) {
  pthread_mutex_lock(&comm->lock);
  while (atomic_load(&comm->state) == SHIM_PENDING)
    pthread_cond_wait(&comm->settled, &comm->lock);
  pthread_mutex_unlock(&comm->lock);
  if (atomic_load(&comm->state) == SHIM_READY)
    return ncclSuccess;
  return shim_fail(comm->init_result, "%s", comm->init_error);
}

/* An abort of a communicator still being made ends its init's waits. */
static void shim_comm_cancel(ncclComm_t comm) {
  pthread_mutex_lock(&comm->lock);
  if (comm->cancel_fd >= 0) {
    uint64_t one = 1;
    ssize_t n = write(comm->cancel_fd, &one, sizeof(one));
    (void)n;
  }
  pthread_mutex_unlock(&comm->lock);
}

static void shim_comm_teardown(ncclComm_t comm, bool abort) {
  if (abort)
    shim_comm_cancel(comm);
  shim_comm_join(comm, true);
  /* The abort ends the waits of calls in other threads; they still read comm. */
  if (abort && comm->sc != NULL)
    symcomm_comm_abort(comm->sc);
  shim_comm_unheld(comm);
  if (comm->sc != NULL)
    shim_stream_release(comm);
}

/* Makes one rank's communicator: inline, in the group, or in a thread. */
static ncclResult_t shim_init_call(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank,
                                   const ncclConfig_t *config, const char *call) {
  shim_config_t cfg;
  ncclResult_t res = shim_config_read(config, call, &cfg);
  if (res != ncclSuccess)
    return res;
  if (out == NULL)
    return shim_fail(ncclInvalidArgument, "%s: the communicator pointer is NULL", call);
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return shim_fail(ncclInvalidArgument, "%s: rank %d of %d ranks is not in [0, %d)", call, rank,
                     nranks, nranks);
  if ((res = shim_env_apply()) != ncclSuccess)
    return res;
  ncclComm_t comm = shim_comm_new(nranks, id, rank, shim_current_device(), &cfg);
  if (comm == NULL)
    return shim_fail(ncclSystemError, "%s: no memory for a communicator", call);
  if (shim_in_group()) {
    *out = comm;
    return shim_group_add_init(comm);
  }
  if (!cfg.blocking) {
    *out = comm;
    res = shim_comm_start(comm);
    return res == ncclSuccess ? ncclInProgress : res;
  }
  shim_comm_run_init(comm);
  if (atomic_load(&comm->state) != SHIM_READY) {
    res = shim_fail(comm->init_result, "%s: %s", call, comm->init_error);
    shim_unregister(comm);
    shim_comm_teardown(comm, false);
    if (comm->sc != NULL)
      symcomm_comm_destroy(comm->sc);
    shim_comm_free(comm);
    return res;
  }
  *out = comm;
  return ncclSuccess;
}

static ncclResult_t shim_init(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank,
                              const ncclConfig_t *config, const char *call) {
  ncclResult_t res = shim_init_call(out, nranks, id, rank, config, call);
  shim_group_note(res);
  return res;
}

SHIM_API ncclResult_t ncclGetVersion(int *version) {
  if (version == NULL)
    return shim_fail(ncclInvalidArgument, "ncclGetVersion: version is NULL");
  /* The header's code, so that callers enable what this NCCL declares. */
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}
SHIM_PROFILED(ncclGetVersion);

SHIM_API ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId) {
  if (uniqueId == NULL)
    return shim_fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  ncclResult_t res = shim_env_apply();
  if (res != ncclSuccess)
    return res;
  _Static_assert(sizeof(ncclUniqueId) == sizeof(symcomm_unique_id_t), "unique ids differ in size");
  symcomm_unique_id_t id;
  res = shim_result(symcomm_get_unique_id(&id), NULL);
  if (res == ncclSuccess)
    memcpy(uniqueId, &id, sizeof(id));
  return res;
}
SHIM_PROFILED(ncclGetUniqueId);

SHIM_API ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
  return shim_init(comm, nranks, &commId, rank, NULL, "ncclCommInitRank");
}
SHIM_PROFILED(ncclCommInitRank);

SHIM_API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId,
                                             int rank, ncclConfig_t *config) {
  return shim_init(comm, nranks, &commId, rank, config, "ncclCommInitRankConfig");
}
SHIM_PROFILED(ncclCommInitRankConfig);

/* Every rank passes the same ids in the same order; the first names the root
 * (symcomm's bootstrap needs one, and is not the bottleneck NCCL's is). */
SHIM_API ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                               ncclUniqueId *commIds, ncclConfig_t *config) {
  if (nId < 1 || commIds == NULL)
    return shim_fail(ncclInvalidArgument, "ncclCommInitRankScalable: %d unique ids at %p", nId,
                     (void *)commIds);
  return shim_init(newcomm, nranks, &commIds[0], myrank, config, "ncclCommInitRankScalable");
}
SHIM_PROFILED(ncclCommInitRankScalable);

/* One process, ndev ranks: each rank's init runs in a thread of its own. */
SHIM_API ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
  const char *call = "ncclCommInitAll";
  if (comms == NULL || ndev < 1)
    return shim_fail(ncclInvalidArgument, "%s: %d devices into %p", call, ndev, (void *)comms);
  for (int i = 0; devlist != NULL && i < ndev; i++)
    for (int j = 0; j < i; j++)
      if (devlist[i] < 0 || devlist[i] == devlist[j])
        return shim_fail(ncclInvalidArgument, "%s: device %d is negative or listed twice", call,
                         devlist[i]);
  ncclUniqueId id;
  ncclResult_t res = ncclGetUniqueId(&id);
  if (res != ncclSuccess)
    return res;
  ncclComm_t *made = calloc((size_t)ndev, sizeof(*made));
  if (made == NULL)
    return shim_fail(ncclSystemError, "%s: no memory", call);
  shim_config_t cfg = {.blocking = true};
  for (int i = 0; i < ndev && res == ncclSuccess; i++) {
    made[i] = shim_comm_new(ndev, &id, i, devlist != NULL ? devlist[i] : i, &cfg);
    if (made[i] == NULL)
      res = shim_fail(ncclSystemError, "%s: no memory for a communicator", call);
    else
      res = shim_comm_start(made[i]);
  }
  for (int i = 0; i < ndev && made[i] != NULL; i++) {
    ncclResult_t r = shim_comm_wait(made[i]);
    if (res == ncclSuccess)
      res = r;
  }
  for (int i = 0; i < ndev; i++) {
    if (res == ncclSuccess)
      comms[i] = made[i];
    else if (made[i] != NULL)
      ncclCommDestroy(made[i]);
  }
  free(made);
  return res;
}
SHIM_PROFILED(ncclCommInitAll);

static ncclResult_t shim_comm_split(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                    ncclConfig_t *config, const char *call);

SHIM_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                    ncclConfig_t *config) {
  const char *call = "ncclCommSplit";
  ncclResult_t res = shim_comm_hold(comm, true, call);
  if (res != ncclSuccess)
    return res;
  res = shim_comm_split(comm, color, key, newcomm, config, call);
  shim_comm_release(comm);
  return res;
}
SHIM_PROFILED(ncclCommSplit);

/* ncclCommSplit on a held comm. */
static ncclResult_t shim_comm_split(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                    ncclConfig_t *config, const char *call) {
  shim_config_t cfg;
  ncclResult_t res = shim_config_read(config, call, &cfg);
  if (res != ncclSuccess)
    return res;
  if (newcomm == NULL)
    return shim_fail(ncclInvalidArgument, "%s: newcomm is NULL", call);
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
    return shim_fail(ncclInvalidArgument, "%s: color %d is negative (NCCL_SPLIT_NOCOLOR is %d)",
                     call, color, NCCL_SPLIT_NOCOLOR);
  /* symcomm's split keeps the parent's cap: another one cannot be had (a
   * maxCTAs above 128 caps nothing, as the parent's 128 does not). */
  if (cfg.max_ctas != 0 && shim_max_blocks(cfg.max_ctas) != shim_max_blocks(comm->max_ctas))
    return comm->max_ctas == 0
               ? shim_fail(ncclInvalidUsage,
                           "%s: config.maxCTAs is %d, but the parent was made without one: a "
                           "split keeps its parent's cap on a collective's blocks; leave it unset",
                           call, cfg.max_ctas)
               : shim_fail(ncclInvalidUsage,
                           "%s: config.maxCTAs is %d, but the parent's is %d: a split keeps its "
                           "parent's cap on a collective's blocks; give the parent's, or leave it "
                           "unset",
                           call, cfg.max_ctas, comm->max_ctas);
  cfg.max_ctas = comm->max_ctas;
  symcomm_comm_t sc = NULL;
  res = shim_result(symcomm_comm_split(comm->sc, color, key, &sc), comm->sc);
  if (res != ncclSuccess)
    return res;
  if (sc == NULL) {
    *newcomm = NULL;
    return ncclSuccess;
  }
  ncclComm_t made = shim_comm_new(0, NULL, 0, -1, &cfg);
  if (made == NULL) {
    symcomm_comm_destroy(sc);
    return shim_fail(ncclSystemError, "%s: no memory for a communicator", call);
  }
  made->sc = sc;
  symcomm_result_t sres = shim_comm_attach(made);
  shim_comm_settle(made, sres, sc);
  if (sres != SYMCOMM_OK) {
    res = shim_fail(made->init_result, "%s: %s", call, made->init_error);
    ncclCommDestroy(made);
    return res;
  }
  *newcomm = made;
  return ncclSuccess;
}

SHIM_API ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  ncclResult_t res = shim_comm_hold(comm, true, "ncclCommFinalize");
  if (res != ncclSuccess)
    return res;
  res = shim_stream_drain(comm);
  shim_comm_release(comm);
  return res;
}
SHIM_PROFILED(ncclCommFinalize);

static ncclResult_t shim_comm_end(ncclComm_t comm, bool abort, const char *call) {
  ncclResult_t res = shim_comm_live(comm, call);
  if (res != ncclSuccess)
    return res;
  if (!shim_unregister(comm))
    return shim_fail(ncclInvalidArgument, "%s: the communicator was destroyed meanwhile", call);
  shim_comm_teardown(comm, abort);
  if (comm->sc != NULL)
    res = shim_result(symcomm_comm_destroy(comm->sc), NULL);
  shim_comm_free(comm);
  return res;
}

SHIM_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return shim_comm_end(comm, false, "ncclCommDestroy");
}
SHIM_PROFILED(ncclCommDestroy);

SHIM_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return shim_comm_end(comm, true, "ncclCommAbort");
}
SHIM_PROFILED(ncclCommAbort);

static ncclResult_t shim_comm_async_error(ncclComm_t comm, ncclResult_t *asyncError);

/* PyTorch's watchdog calls it from its own thread all the time, so it holds
 * comm against an ncclCommAbort of another thread. */
SHIM_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
  ncclResult_t res = shim_comm_hold(comm, false, "ncclCommGetAsyncError");
  if (res != ncclSuccess)
    return res;
  res = shim_comm_async_error(comm, asyncError);
  shim_comm_release(comm);
  return res;
}
SHIM_PROFILED(ncclCommGetAsyncError);

static ncclResult_t shim_comm_async_error(ncclComm_t comm, ncclResult_t *asyncError) {
  ncclResult_t res;
  if (asyncError == NULL)
    return shim_fail(ncclInvalidArgument, "ncclCommGetAsyncError: asyncError is NULL");
  shim_comm_join(comm, false);
  switch (atomic_load(&comm->state)) {
  case SHIM_PENDING: *asyncError = ncclInProgress; return ncclSuccess;
  case SHIM_FAILED:
    *asyncError = shim_fail(comm->init_result, "%s", comm->init_error);
    return ncclSuccess;
  default: break;
  }
  symcomm_result_t async = SYMCOMM_OK;
  res = shim_result(symcomm_comm_get_async_error(comm->sc, &async), comm->sc);
  if (res == ncclSuccess)
    *asyncError = shim_result(async, comm->sc);
  return res;
}

enum shim_field { SHIM_COUNT, SHIM_DEVICE, SHIM_RANK };

static ncclResult_t shim_query(ncclComm_t comm, int *out, enum shim_field field, const char *call) {
  ncclResult_t res = shim_comm_ready(comm, call);
  if (res != ncclSuccess)
    return res;
  if (out == NULL)
    return shim_fail(ncclInvalidArgument, "%s: the output pointer is NULL", call);
  *out = field == SHIM_COUNT ? comm->nranks : field == SHIM_DEVICE ? comm->device : comm->rank;
  return ncclSuccess;
}

SHIM_API ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  return shim_query(comm, count, SHIM_COUNT, "ncclCommCount");
}
SHIM_PROFILED(ncclCommCount);

SHIM_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
  return shim_query(comm, device, SHIM_DEVICE, "ncclCommCuDevice");
}
SHIM_PROFILED(ncclCommCuDevice);

SHIM_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  return shim_query(comm, rank, SHIM_RANK, "ncclCommUserRank");
}
SHIM_PROFILED(ncclCommUserRank);

/* NCCL 2.28's fault-tolerance calls: symcomm has no communicator without its
 * failed ranks (a split needs every rank), so these are refused, not faked. */
SHIM_API ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  (void)revokeFlags;
  ncclResult_t res = shim_comm_live(comm, "ncclCommRevoke");
  if (res != ncclSuccess)
    return res;
  return shim_fail(ncclInvalidUsage, "ncclCommRevoke: symcomm cannot revoke a communicator (ncclCommAbort ends it)");
}
SHIM_PROFILED(ncclCommRevoke);

SHIM_API ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount, ncclComm_t *newcomm,
                                     ncclConfig_t *config, int shrinkFlags) {
  (void)excludeRanksList, (void)excludeRanksCount, (void)config, (void)shrinkFlags;
  ncclResult_t res = shim_comm_live(comm, "ncclCommShrink");
  if (res != ncclSuccess)
    return res;
  if (newcomm != NULL)
    *newcomm = NULL;
  return shim_fail(ncclInvalidUsage, "ncclCommShrink: symcomm cannot shrink a communicator without its excluded "
                                     "ranks (ncclCommSplit, called by every rank, makes a smaller one)");
}
SHIM_PROFILED(ncclCommShrink);

/* NCCL 2.28's device API (nccl_device.h, a CUDA C++ header, so its types are
 * not visible here: the pointers are passed through untouched). Programs
 * that link it (PyTorch does) need the symbols; symcomm has no device-side
 * communicator to give. */
SHIM_API ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void *reqs, void *outDevComm);
SHIM_API ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void *devComm);

SHIM_API ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void *reqs, void *outDevComm) {
  (void)reqs, (void)outDevComm;
  ncclResult_t res = shim_comm_live(comm, "ncclDevCommCreate");
  if (res != ncclSuccess)
    return res;
  return shim_fail(ncclInvalidUsage, "ncclDevCommCreate: symcomm does not offer NCCL's device API");
}
SHIM_PROFILED(ncclDevCommCreate);

SHIM_API ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void *devComm) {
  (void)devComm;
  ncclResult_t res = shim_comm_live(comm, "ncclDevCommDestroy");
  if (res != ncclSuccess)
    return res;
  return shim_fail(ncclInvalidUsage, "ncclDevCommDestroy: symcomm does not offer NCCL's device API");
}
SHIM_PROFILED(ncclDevCommDestroy);
