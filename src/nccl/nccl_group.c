/* ncclGroupStart/End over symcomm's groups (which collect sends and
 * receives), plus what only the shim knows to defer to the outermost end:
 * inits called inside the group (started together, each in a thread, so that
 * one process may make the ranks of one communicator in one group, as
 * nccl-tests does), the sends of a rank to itself (paired with its receives
 * and done as copies: symcomm's sends take another rank), and the waits that
 * NULL streams on simulated GPUs ask for. */
#include <stdio.h>
#include <stdlib.h>

#include "shim.h"

typedef struct shim_self {
  ncclComm_t comm;
  bool send;
  void *buf;
  size_t bytes;
  symcomm_stream_t stream;
} shim_self_t;

typedef struct shim_group {
  int depth;
  ncclComm_t *inits, *syncs;
  int ninits, nsyncs, cap_inits, cap_syncs;
  shim_self_t *selfs;
  int nselfs, cap_selfs;
  ncclResult_t error; /* the first call of the group that failed, and its sentence */
  char why[512];
} shim_group_t;

static __thread shim_group_t shim_group;

bool shim_in_group(void) { return shim_group.depth > 0; }

void shim_group_note(ncclResult_t res) {
  shim_group_t *g = &shim_group;
  if (g->depth == 0 || res == ncclSuccess || res == ncclInProgress || g->error != ncclSuccess)
    return;
  g->error = res;
  snprintf(g->why, sizeof(g->why), "%s", ncclGetLastError(NULL));
}

/* Makes room for one more element of an array that grows. */
static ncclResult_t shim_grow(void **array, int count, int *cap, size_t elem) {
  if (count < *cap)
    return ncclSuccess;
  int grown = *cap ? 2 * *cap : 16;
  void *p = realloc(*array, (size_t)grown * elem);
  if (p == NULL)
    return shim_fail(ncclSystemError, "no memory to remember a call of the group");
  *array = p;
  *cap = grown;
  return ncclSuccess;
}

ncclResult_t shim_group_add_init(ncclComm_t comm) {
  shim_group_t *g = &shim_group;
  ncclResult_t res = shim_grow((void **)&g->inits, g->ninits, &g->cap_inits, sizeof(*g->inits));
  if (res == ncclSuccess)
    g->inits[g->ninits++] = comm;
  return res;
}

ncclResult_t shim_group_add_sync(ncclComm_t comm) {
  shim_group_t *g = &shim_group;
  for (int i = 0; i < g->nsyncs; i++)
    if (g->syncs[i] == comm)
      return ncclSuccess;
  ncclResult_t res = shim_grow((void **)&g->syncs, g->nsyncs, &g->cap_syncs, sizeof(*g->syncs));
  if (res == ncclSuccess)
    g->syncs[g->nsyncs++] = comm;
  return res;
}

ncclResult_t shim_group_add_self(ncclComm_t comm, bool send, void *buf, size_t bytes,
                                 symcomm_stream_t stream) {
  shim_group_t *g = &shim_group;
  ncclResult_t res = shim_grow((void **)&g->selfs, g->nselfs, &g->cap_selfs, sizeof(*g->selfs));
  if (res == ncclSuccess)
    g->selfs[g->nselfs++] = (shim_self_t){comm, send, buf, bytes, stream};
  return res;
}

/* The n-th send of a rank to itself meets its n-th receive from itself. */
static ncclResult_t shim_group_selfs(shim_group_t *g) {
  ncclResult_t res = ncclSuccess;
  for (int i = 0; i < g->nselfs && res == ncclSuccess; i++) {
    shim_self_t *s = &g->selfs[i];
    if (!s->send || s->comm == NULL)
      continue;
    shim_self_t *r = NULL;
    for (int j = 0; j < g->nselfs && r == NULL; j++)
      if (g->selfs[j].comm == s->comm && !g->selfs[j].send)
        r = &g->selfs[j];
    if (r == NULL)
      return shim_fail(ncclInvalidUsage,
                       "ncclGroupEnd: rank %d sends %zu bytes to itself without a receive from "
                       "itself in the group",
                       s->comm->rank, s->bytes);
    if (r->bytes != s->bytes)
      return shim_fail(ncclInvalidArgument,
                       "ncclGroupEnd: rank %d sends %zu bytes to itself but receives %zu",
                       s->comm->rank, s->bytes, r->bytes);
    ncclComm_t comm = s->comm;
    s->comm = r->comm = NULL;
    if ((res = shim_comm_hold(comm, true, "ncclGroupEnd")) != ncclSuccess)
      return res;
    res = shim_result(symcomm_copy(r->buf, s->buf, s->bytes, comm->sc, r->stream), comm->sc);
    shim_comm_release(comm);
  }
  for (int j = 0; j < g->nselfs && res == ncclSuccess; j++)
    if (g->selfs[j].comm != NULL)
      res = shim_fail(ncclInvalidUsage,
                      "ncclGroupEnd: rank %d receives %zu bytes from itself without a send to "
                      "itself in the group",
                      g->selfs[j].comm->rank, g->selfs[j].bytes);
  return res;
}

/* Starts every init of the group, then waits for the blocking ones. Each is
 * held meanwhile: an ncclCommAbort from another thread (before the group's
 * end, or during its wait) ends the init, never frees what is waited on. */
static ncclResult_t shim_group_inits(shim_group_t *g) {
  ncclResult_t res = ncclSuccess, r;
  bool pending = false;
  for (int i = 0; i < g->ninits; i++) {
    ncclComm_t comm = g->inits[i];
    if ((r = shim_comm_hold(comm, false, "ncclGroupEnd")) != ncclSuccess) {
      g->inits[i] = NULL; /* ended before the group did */
    } else if ((r = shim_comm_start(comm)) != ncclSuccess || !comm->blocking) {
      pending = pending || r == ncclSuccess;
      g->inits[i] = NULL;
      shim_comm_release(comm);
    }
    if (r != ncclSuccess && res == ncclSuccess)
      res = r;
  }
  for (int i = 0; i < g->ninits; i++) {
    if (g->inits[i] == NULL)
      continue;
    if ((r = shim_comm_wait(g->inits[i])) != ncclSuccess && res == ncclSuccess)
      res = r;
    shim_comm_release(g->inits[i]);
  }
  return res == ncclSuccess && pending ? ncclInProgress : res;
}

SHIM_API ncclResult_t ncclGroupStart(void) {
  shim_group.depth++;
  return shim_result(symcomm_group_start(), NULL);
}
SHIM_PROFILED(ncclGroupStart);

SHIM_API ncclResult_t ncclGroupEnd(void) {
  shim_group_t *g = &shim_group;
  if (g->depth == 0)
    return shim_fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  g->depth--;
  ncclResult_t res = shim_result(symcomm_group_end(), NULL), r;
  if (g->depth > 0)
    return res;
  if ((r = shim_group_selfs(g)) != ncclSuccess && (res == ncclSuccess))
    res = r;
  /* A communicator of the group may have ended since its call. */
  for (int i = 0; i < g->nsyncs; i++) {
    if ((r = shim_comm_hold(g->syncs[i], true, "ncclGroupEnd")) == ncclSuccess) {
      r = shim_stream_finish(g->syncs[i]);
      shim_comm_release(g->syncs[i]);
    }
    if (r != ncclSuccess && res == ncclSuccess)
      res = r;
  }
  if ((r = shim_group_inits(g)) != ncclSuccess && res == ncclSuccess)
    res = r;
  /* NCCL's ncclGroupEnd fails when a call of the group failed; symcomm cannot
   * take back what the group's other calls queued, so they ran. */
  if (g->error != ncclSuccess && (res == ncclSuccess || res == ncclInProgress))
    res = shim_fail(g->error, "ncclGroupEnd: a call of the group failed, the group's other calls ran: %s",
                    g->why);
  g->error = ncclSuccess;
  g->ninits = g->nsyncs = g->nselfs = 0;
  return res;
}
SHIM_PROFILED(ncclGroupEnd);

/* NCCL's cost model of a group has no counterpart in symcomm. */
SHIM_API ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo) {
  (void)simInfo;
  return shim_fail(ncclInvalidUsage, "ncclGroupSimulateEnd: symcomm does not simulate groups");
}
SHIM_PROFILED(ncclGroupSimulateEnd);
