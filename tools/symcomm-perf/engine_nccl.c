/* The NCCL engine: the same harness on NCCL, for figures measured in the same
 * run on a GPU host. libnccl.so.2 and the CUDA runtime are loaded with dlopen
 * when --engine nccl asks for them; nothing here is linked against them and
 * no CUDA header is needed to build. The few types and prototypes used are
 * declared below from NCCL's nccl.h (NVIDIA/nccl src/nccl.h.in): result 0 is
 * success, the unique id is 128 bytes passed by value to ncclCommInitRank,
 * and the dtype and reduction codes differ from symcomm's (mapped below).
 *
 * --nccl-lib PATH names the library to load (default: libnccl.so.2 as the
 * dynamic loader finds it, which must then be NCCL's: symcomm's own lives in
 * build/lib/nccl/, outside the tools' runpath, but LD_LIBRARY_PATH may point
 * there; that is refused, not measured as NCCL). Where the library is
 * symcomm's and there is no CUDA runtime or no GPU, the engine runs on the
 * simulated GPUs: host memory for buffers, a NULL stream (each call returns
 * once its work is done), nothing to synchronize.
 *
 * Rank 0 makes the unique id and broadcasts it through the job's symcomm
 * communicator, so the engine runs under the same launchers as symcomm. Each
 * rank uses GPU (local rank mod GPU count). All-to-all is a group of sends
 * and receives, as nccl-tests measures it (works on every NCCL since 2.7). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart.h"
#include "engine.h"

/* ---- NCCL */
typedef int nccl_result_t; /* ncclResult_t, 0 = ncclSuccess */
typedef struct nccl_comm *nccl_comm_t;
typedef struct nccl_window *nccl_window_t;
typedef struct {
  char internal[128]; /* NCCL_UNIQUE_ID_BYTES */
} nccl_unique_id_t;
#define NCCL_WIN_COLL_SYMMETRIC 0x01

/* ncclDataType_t and ncclRedOp_t codes for symcomm's dtypes and ops. */
static const int nccl_dtype[SYMCOMM_DTYPE_COUNT] = {
    [SYMCOMM_INT8] = 0,    [SYMCOMM_UINT8] = 1,    [SYMCOMM_INT32] = 2,   [SYMCOMM_UINT32] = 3,
    [SYMCOMM_INT64] = 4,   [SYMCOMM_UINT64] = 5,   [SYMCOMM_FLOAT16] = 6, [SYMCOMM_FLOAT32] = 7,
    [SYMCOMM_FLOAT64] = 8, [SYMCOMM_BFLOAT16] = 9,
};
static const int nccl_op[SYMCOMM_OP_COUNT] = {
    [SYMCOMM_SUM] = 0, [SYMCOMM_PROD] = 1, [SYMCOMM_MAX] = 2, [SYMCOMM_MIN] = 3, [SYMCOMM_AVG] = 4,
};

typedef struct nccl_api {
  nccl_result_t (*GetVersion)(int *version);
  nccl_result_t (*GetUniqueId)(nccl_unique_id_t *id);
  nccl_result_t (*CommInitRank)(nccl_comm_t *comm, int nranks, nccl_unique_id_t id, int rank);
  nccl_result_t (*CommDestroy)(nccl_comm_t comm);
  nccl_result_t (*CommAbort)(nccl_comm_t comm);
  const char *(*GetErrorStringN)(nccl_result_t res);
  const char *(*GetLastError)(nccl_comm_t comm); /* optional (2.13) */
  nccl_result_t (*AllReduce)(const void *s, void *r, size_t count, int dt, int op, nccl_comm_t comm,
                             cuda_stream_t stream);
  nccl_result_t (*Reduce)(const void *s, void *r, size_t count, int dt, int op, int root,
                          nccl_comm_t comm, cuda_stream_t stream);
  nccl_result_t (*Broadcast)(const void *s, void *r, size_t count, int dt, int root,
                             nccl_comm_t comm, cuda_stream_t stream);
  nccl_result_t (*AllGather)(const void *s, void *r, size_t sendcount, int dt, nccl_comm_t comm,
                             cuda_stream_t stream);
  nccl_result_t (*ReduceScatter)(const void *s, void *r, size_t recvcount, int dt, int op,
                                 nccl_comm_t comm, cuda_stream_t stream);
  nccl_result_t (*Send)(const void *s, size_t count, int dt, int peer, nccl_comm_t comm,
                        cuda_stream_t stream);
  nccl_result_t (*Recv)(void *r, size_t count, int dt, int peer, nccl_comm_t comm,
                        cuda_stream_t stream);
  nccl_result_t (*GroupStart)(void);
  nccl_result_t (*GroupEnd)(void);
  /* -R 1 only (NCCL with symmetric windows) */
  nccl_result_t (*MemAlloc)(void **ptr, size_t bytes);
  nccl_result_t (*MemFree)(void *ptr);
  nccl_result_t (*WindowRegister)(nccl_comm_t comm, void *buf, size_t bytes, nccl_window_t *win,
                                  int flags);
  nccl_result_t (*WindowDeregister)(nccl_comm_t comm, nccl_window_t win);
} nccl_api_t;

#define NC_MAX_BUFS 4

typedef struct nc_engine {
  perf_job_t *job;
  nccl_api_t api;
  const perf_cudart_t *rt;
  int registered, device, ndev;
  int host; /* symcomm's libnccl.so.2 on simulated GPUs */
  nccl_comm_t comm;
  cuda_stream_t stream;
  struct {
    void *ptr;
    nccl_window_t win;
  } bufs[NC_MAX_BUFS];
  char error[1024];
} nc_engine_t;

/* ---- loading */

typedef struct nc_sym {
  const char *name;
  size_t offset; /* of the function pointer in nccl_api_t */
  int need;      /* 0: optional, 1: always, 2: with -R 1 */
} nc_sym_t;

#define NC_SYM(field, name, lib, need)                                                             \
  { name, offsetof(nccl_api_t, field), need }
static const nc_sym_t nc_syms[] = {
    NC_SYM(GetVersion, "ncclGetVersion", 1, 1),
    NC_SYM(GetUniqueId, "ncclGetUniqueId", 1, 1),
    NC_SYM(CommInitRank, "ncclCommInitRank", 1, 1),
    NC_SYM(CommDestroy, "ncclCommDestroy", 1, 1),
    NC_SYM(CommAbort, "ncclCommAbort", 1, 1),
    NC_SYM(GetErrorStringN, "ncclGetErrorString", 1, 1),
    NC_SYM(GetLastError, "ncclGetLastError", 1, 0),
    NC_SYM(AllReduce, "ncclAllReduce", 1, 1),
    NC_SYM(Reduce, "ncclReduce", 1, 1),
    NC_SYM(Broadcast, "ncclBroadcast", 1, 1),
    NC_SYM(AllGather, "ncclAllGather", 1, 1),
    NC_SYM(ReduceScatter, "ncclReduceScatter", 1, 1),
    NC_SYM(Send, "ncclSend", 1, 1),
    NC_SYM(Recv, "ncclRecv", 1, 1),
    NC_SYM(GroupStart, "ncclGroupStart", 1, 1),
    NC_SYM(GroupEnd, "ncclGroupEnd", 1, 1),
    NC_SYM(MemAlloc, "ncclMemAlloc", 1, 2),
    NC_SYM(MemFree, "ncclMemFree", 1, 2),
    NC_SYM(WindowRegister, "ncclCommWindowRegister", 1, 2),
    NC_SYM(WindowDeregister, "ncclCommWindowDeregister", 1, 2),
};

static const char *nc_library; /* --nccl-lib, or NULL */

void perf_engine_nccl_library(const char *path) { nc_library = path; }

static int nc_load(nc_engine_t *e, char *why, size_t len) {
  void *lib = dlopen(nc_library ? nc_library : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    snprintf(why, len, "%s", dlerror());
    return PERF_ENGINE_UNAVAILABLE;
  }
  /* symcomm's libnccl.so.2 brings libsymcomm along. */
  int ours = dlsym(lib, "symcomm_get_version") != NULL;
  if (ours && nc_library == NULL) {
    snprintf(why, len,
             "the libnccl.so.2 found first is symcomm's own (LD_LIBRARY_PATH?); --nccl-lib PATH "
             "names the one to load (NCCL's, or symcomm's to run it on simulated GPUs)");
    return PERF_ENGINE_UNAVAILABLE;
  }
  int ndev = 0;
  int rc = perf_cudart_load(&e->rt, why, len);
  if (ours && (rc != 0 || e->rt->GetDeviceCount(&ndev) != 0 || ndev < 1)) {
    e->host = 1;
    rc = 0;
  }
  if (rc != 0)
    return rc;
  for (size_t i = 0; i < sizeof(nc_syms) / sizeof(nc_syms[0]); i++) {
    const nc_sym_t *s = &nc_syms[i];
    void *fn = dlsym(lib, s->name);
    if (fn == NULL && (s->need == 1 || (s->need == 2 && e->registered))) {
      snprintf(why, len, "libnccl.so.2 has no %s%s", s->name,
               s->need == 2 ? " (-R 1 needs an NCCL with symmetric windows, 2.27 or later)" : "");
      return PERF_ENGINE_UNAVAILABLE;
    }
    memcpy((char *)&e->api + s->offset, &fn, sizeof(fn));
  }
  return 0;
}

/* ---- errors */

static int nc_cuda_fail(nc_engine_t *e, const char *call, cuda_error_t err) {
  return perf_cudart_fail(e->rt, e->error, sizeof(e->error), call, err);
}

static int nc_fail(nc_engine_t *e, const char *call, nccl_result_t res) {
  const char *last = e->api.GetLastError ? e->api.GetLastError(e->comm) : NULL;
  snprintf(e->error, sizeof(e->error), "%s: %s (NCCL result %d)%s%s", call,
           e->api.GetErrorStringN(res), res, last && *last ? ": " : "", last ? last : "");
  return -1;
}

#define NC_CUDA(e, call, expr)                                                                     \
  do {                                                                                             \
    cuda_error_t err_ = (expr);                                                                    \
    if (err_ != 0)                                                                                 \
      return nc_cuda_fail((e), (call), err_);                                                      \
  } while (0)

#define NC_TRY(e, call, expr)                                                                      \
  do {                                                                                             \
    nccl_result_t res_ = (expr);                                                                   \
    if (res_ != 0)                                                                                 \
      return nc_fail((e), (call), res_);                                                           \
  } while (0)

/* ---- the table */

static int nc_open(perf_job_t *job, int registered, void **self, char *why, size_t len) {
  nc_engine_t *e = calloc(1, sizeof(*e));
  if (e == NULL) {
    snprintf(why, len, "out of memory");
    return -1;
  }
  e->job = job;
  e->registered = registered;
  int rc = nc_load(e, why, len);
  int ndev = 0;
  cuda_error_t err = 0;
  if (rc == 0 && e->host) {
    *self = e;
    return 0;
  }
  if (rc == 0 && (err = e->rt->GetDeviceCount(&ndev)) != 0) {
    snprintf(why, len, "cudaGetDeviceCount: %s (CUDA error %d)", e->rt->GetErrorString(err), err);
    rc = PERF_ENGINE_UNAVAILABLE;
  } else if (rc == 0 && ndev < 1) {
    snprintf(why, len, "cudaGetDeviceCount found no GPU");
    rc = PERF_ENGINE_UNAVAILABLE;
  }
  if (rc == 0) {
    e->ndev = ndev;
    e->device = job->local_rank % ndev;
    if ((err = e->rt->SetDevice(e->device)) != 0) {
      snprintf(why, len, "cudaSetDevice(%d): %s (CUDA error %d)", e->device,
               e->rt->GetErrorString(err), err);
      rc = -1;
    }
  }
  if (rc != 0) {
    free(e);
    return rc;
  }
  *self = e;
  return 0;
}

static int nc_init(void *self) {
  nc_engine_t *e = self;
  struct {
    int32_t ok;
    nccl_unique_id_t id;
  } msg = {0};
  nccl_result_t res = 0;
  if (e->job->rank == 0) {
    res = e->api.GetUniqueId(&msg.id);
    msg.ok = res == 0;
  }
  if (perf_job_broadcast(e->job, &msg, sizeof(msg), 0) != 0) {
    snprintf(e->error, sizeof(e->error), "the unique id did not reach every rank");
    return -1;
  }
  if (e->job->rank == 0 && res != 0)
    return nc_fail(e, "ncclGetUniqueId", res);
  if (!msg.ok) {
    snprintf(e->error, sizeof(e->error), "rank 0 could not make an NCCL unique id");
    return -1;
  }
  if (!e->host)
    NC_CUDA(e, "cudaStreamCreateWithFlags",
            e->rt->StreamCreateWithFlags(&e->stream, CUDA_STREAM_NON_BLOCKING));
  NC_TRY(e, "ncclCommInitRank",
         e->api.CommInitRank(&e->comm, e->job->nranks, msg.id, e->job->rank));
  return 0;
}

static void nc_describe(void *self, char *text, size_t len, char *card, size_t card_len) {
  nc_engine_t *e = self;
  int v = 0;
  e->api.GetVersion(&v);
  /* NCCL codes versions X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after. */
  int major = v >= 10000 ? v / 10000 : v / 1000, minor = v >= 10000 ? v / 100 % 100 : v / 100 % 10;
  if (e->host) {
    snprintf(text, len, "nccl (symcomm's libnccl.so.2, NCCL API %d.%d.%d; simulated GPUs: host memory, NULL stream)",
             major, minor, v % 100);
    snprintf(card, card_len, "no GPU");
    return;
  }
  int rt = e->rt->version;
  snprintf(text, len, "nccl (NCCL %d.%d.%d, CUDA runtime %d.%d; GPU: local rank mod %d)", major,
           minor, v % 100, rt / 1000, rt % 1000 / 10, e->ndev);
  perf_cudart_card(e->rt, e->device, card, card_len);
}

static void nc_device(void *self, char *text, size_t len) {
  nc_engine_t *e = self;
  if (e->host) {
    snprintf(text, len, "simulated GPU (host memory)");
    return;
  }
  char busid[64] = "?";
  if (e->rt->DeviceGetPCIBusId)
    e->rt->DeviceGetPCIBusId(busid, (int)sizeof(busid), e->device);
  snprintf(text, len, "%s (CUDA device %d)", busid, e->device);
}

static int nc_alloc(void *self, size_t bytes, void **buf) {
  nc_engine_t *e = self;
  int slot = 0;
  while (slot < NC_MAX_BUFS && e->bufs[slot].ptr != NULL)
    slot++;
  if (slot == NC_MAX_BUFS) {
    snprintf(e->error, sizeof(e->error), "more than %d buffers", NC_MAX_BUFS);
    return -1;
  }
  void *p = NULL;
  if (!e->registered && e->host) {
    if ((p = malloc(bytes)) == NULL) {
      snprintf(e->error, sizeof(e->error), "no memory for %zu bytes", bytes);
      return -1;
    }
  } else if (!e->registered) {
    NC_CUDA(e, "cudaMalloc", e->rt->Malloc(&p, bytes));
  } else {
    NC_TRY(e, "ncclMemAlloc", e->api.MemAlloc(&p, bytes));
    nccl_result_t res =
        e->api.WindowRegister(e->comm, p, bytes, &e->bufs[slot].win, NCCL_WIN_COLL_SYMMETRIC);
    if (res != 0) {
      nc_fail(e, "ncclCommWindowRegister", res);
      e->api.MemFree(p);
      return -1;
    }
  }
  e->bufs[slot].ptr = p;
  *buf = p;
  return 0;
}

static int nc_free(void *self, void *buf) {
  nc_engine_t *e = self;
  for (int i = 0; i < NC_MAX_BUFS; i++) {
    if (buf == NULL || e->bufs[i].ptr != buf)
      continue;
    e->bufs[i].ptr = NULL;
    if (!e->registered && e->host) {
      free(buf);
      return 0;
    }
    if (!e->registered) {
      NC_CUDA(e, "cudaFree", e->rt->Free(buf));
      return 0;
    }
    NC_TRY(e, "ncclCommWindowDeregister", e->api.WindowDeregister(e->comm, e->bufs[i].win));
    NC_TRY(e, "ncclMemFree", e->api.MemFree(buf));
    return 0;
  }
  return 0;
}

static int nc_upload(void *self, void *dst, const void *src, size_t bytes) {
  nc_engine_t *e = self;
  if (e->host) {
    memcpy(dst, src, bytes);
    return 0;
  }
  NC_CUDA(e, "cudaMemcpy", e->rt->Memcpy(dst, src, bytes, CUDA_MEMCPY_HOST_TO_DEVICE));
  /* From pageable memory the copy may land after cudaMemcpy returns, and the
   * engine's stream is non-blocking: wait for it. */
  NC_CUDA(e, "cudaDeviceSynchronize", e->rt->DeviceSynchronize());
  return 0;
}

static int nc_download(void *self, void *dst, const void *src, size_t bytes) {
  nc_engine_t *e = self;
  if (e->host) {
    memcpy(dst, src, bytes);
    return 0;
  }
  NC_CUDA(e, "cudaMemcpy", e->rt->Memcpy(dst, src, bytes, CUDA_MEMCPY_DEVICE_TO_HOST));
  return 0;
}

static int nc_allreduce(void *self, const void *send, void *recv, size_t count,
                        symcomm_dtype_t dtype, symcomm_op_t op) {
  nc_engine_t *e = self;
  NC_TRY(e, "ncclAllReduce",
         e->api.AllReduce(send, recv, count, nccl_dtype[dtype], nccl_op[op], e->comm, e->stream));
  return 0;
}

static int nc_reduce(void *self, const void *send, void *recv, size_t count, symcomm_dtype_t dtype,
                     symcomm_op_t op, int root) {
  nc_engine_t *e = self;
  NC_TRY(
      e, "ncclReduce",
      e->api.Reduce(send, recv, count, nccl_dtype[dtype], nccl_op[op], root, e->comm, e->stream));
  return 0;
}

static int nc_broadcast(void *self, const void *send, void *recv, size_t count,
                        symcomm_dtype_t dtype, int root) {
  nc_engine_t *e = self;
  NC_TRY(e, "ncclBroadcast",
         e->api.Broadcast(send, recv, count, nccl_dtype[dtype], root, e->comm, e->stream));
  return 0;
}

static int nc_allgather(void *self, const void *send, void *recv, size_t sendcount,
                        symcomm_dtype_t dtype) {
  nc_engine_t *e = self;
  NC_TRY(e, "ncclAllGather",
         e->api.AllGather(send, recv, sendcount, nccl_dtype[dtype], e->comm, e->stream));
  return 0;
}

static int nc_reducescatter(void *self, const void *send, void *recv, size_t recvcount,
                            symcomm_dtype_t dtype, symcomm_op_t op) {
  nc_engine_t *e = self;
  NC_TRY(e, "ncclReduceScatter",
         e->api.ReduceScatter(send, recv, recvcount, nccl_dtype[dtype], nccl_op[op], e->comm,
                              e->stream));
  return 0;
}

/* Sends and receives of one group; the group is ended even after a failure. */
static int nc_group(nc_engine_t *e, const void *send, void *recv, size_t count,
                    symcomm_dtype_t dtype, int to, int from, int all) {
  size_t block = count * perf_dtype_size(dtype);
  NC_TRY(e, "ncclGroupStart", e->api.GroupStart());
  nccl_result_t res = 0;
  const char *call = "ncclSend";
  int first = all ? 0 : -1, last = all ? e->job->nranks - 1 : -1;
  for (int p = first; p <= last && res == 0; p++) {
    int peer_to = all ? p : to, peer_from = all ? p : from;
    size_t off = all ? (size_t)p * block : 0;
    call = "ncclSend";
    res = e->api.Send((const char *)send + off, count, nccl_dtype[dtype], peer_to, e->comm,
                      e->stream);
    if (res == 0) {
      call = "ncclRecv";
      res =
          e->api.Recv((char *)recv + off, count, nccl_dtype[dtype], peer_from, e->comm, e->stream);
    }
  }
  nccl_result_t end = e->api.GroupEnd();
  if (res != 0)
    return nc_fail(e, call, res);
  NC_TRY(e, "ncclGroupEnd", end);
  return 0;
}

static int nc_alltoall(void *self, const void *send, void *recv, size_t count_per_peer,
                       symcomm_dtype_t dtype) {
  return nc_group(self, send, recv, count_per_peer, dtype, -1, -1, 1);
}

static int nc_sendrecv(void *self, const void *send, void *recv, size_t count,
                       symcomm_dtype_t dtype, int to, int from) {
  return nc_group(self, send, recv, count, dtype, to, from, 0);
}

static int nc_synchronize(void *self) {
  nc_engine_t *e = self;
  if (e->host) /* on the NULL stream every call returned once done */
    return 0;
  NC_CUDA(e, "cudaStreamSynchronize", e->rt->StreamSynchronize(e->stream));
  return 0;
}

static int nc_cuda_stream(void *self, const perf_cudart_t **rt, cuda_stream_t *stream) {
  nc_engine_t *e = self;
  if (e->host) {
    snprintf(e->error, sizeof(e->error), "simulated GPUs have no CUDA stream to capture");
    return -1;
  }
  *rt = e->rt;
  *stream = e->stream;
  return 0;
}

static const char *nc_last_error(void *self) { return ((nc_engine_t *)self)->error; }

static int nc_close(void *self, int failed) {
  nc_engine_t *e = self;
  int rc = 0;
  if (e->comm != NULL)
    rc = (failed ? e->api.CommAbort(e->comm) : e->api.CommDestroy(e->comm)) != 0 ? -1 : 0;
  if (!e->host && e->stream != NULL && e->rt->StreamDestroy(e->stream) != 0)
    rc = -1;
  /* The libraries stay loaded: NCCL may still have threads of its own. */
  free(e);
  return rc;
}

static int is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

static int nc_checkable(void *self, perf_op_t op, symcomm_dtype_t dtype, int redop, int in_place) {
  nc_engine_t *e = self;
  /* As nccl-tests: in-place all-to-all and send/receive are timed, not checked. */
  if (in_place && (op == PERF_ALLTOALL || op == PERF_SENDRECV))
    return 0;
  /* NCCL averages floats by multiplying each input by 1/nranks before the
   * sum, which is exact (and then equal to symcomm's sum / nranks) only when
   * nranks is a power of two. */
  int fl = dtype == SYMCOMM_FLOAT16 || dtype == SYMCOMM_BFLOAT16 || dtype == SYMCOMM_FLOAT32 ||
           dtype == SYMCOMM_FLOAT64;
  if (redop == SYMCOMM_AVG && fl && !is_power_of_two(e->job->nranks))
    return 0;
  return 1;
}

const perf_engine_ops_t perf_engine_nccl = {
    .size = sizeof(perf_engine_ops_t),
    .name = "nccl",
    .open = nc_open,
    .init = nc_init,
    .describe = nc_describe,
    .device = nc_device,
    .alloc = nc_alloc,
    .free = nc_free,
    .upload = nc_upload,
    .download = nc_download,
    .allreduce = nc_allreduce,
    .reduce = nc_reduce,
    .broadcast = nc_broadcast,
    .allgather = nc_allgather,
    .reducescatter = nc_reducescatter,
    .alltoall = nc_alltoall,
    .sendrecv = nc_sendrecv,
    .synchronize = nc_synchronize,
    .cuda_stream = nc_cuda_stream,
    .last_error = nc_last_error,
    .close = nc_close,
    .checkable = nc_checkable,
};
