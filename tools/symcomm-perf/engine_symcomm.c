/* The symcomm engine: the operations on a communicator of its own (the
 * backend SYMCOMM_BACKEND picks; the job's is a host-memory one for control
 * traffic), on a stream of their own. Buffers come from malloc on the
 * simulated backend and from cudaMalloc on the CUDA backend (through the CUDA
 * runtime loaded at run time, as NCCL users allocate), or with -R 1 from
 * symcomm_mem_alloc registered as windows (symcomm_window_register),
 * symcomm's "registered" mode. On CUDA the stream is the caller's kind: a
 * cudaStream_t wrapped with symcomm_stream_from_cuda, which -G captures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define SC_ENGINE_MAX_BUFS 4

typedef struct sc_engine {
  perf_job_t *job;
  symcomm_comm_t comm;
  symcomm_stream_t stream;
  const perf_cudart_t *rt; /* CUDA backend: the runtime; NULL on the simulated backend */
  cuda_stream_t native;    /* ... and the stream the operations run on */
  int device;
  int registered;
  struct {
    void *ptr;
    symcomm_window_t win;
  } bufs[SC_ENGINE_MAX_BUFS];
  char error[1024];
} sc_engine_t;

static int sc_fail(sc_engine_t *e, const char *call, symcomm_result_t res) {
  snprintf(e->error, sizeof(e->error), "%s: %s: %s", call, symcomm_result_string(res),
           symcomm_last_error(e->comm));
  return -1;
}

#define SC_TRY(e, call, expr)                                                                      \
  do {                                                                                             \
    symcomm_result_t res_ = (expr);                                                                \
    if (res_ != SYMCOMM_OK)                                                                        \
      return sc_fail((e), (call), res_);                                                           \
  } while (0)

static int sc_open(perf_job_t *job, int registered, void **self, char *why, size_t len) {
  sc_engine_t *e = calloc(1, sizeof(*e));
  if (e == NULL) {
    snprintf(why, len, "out of memory");
    return -1;
  }
  e->job = job;
  e->registered = registered;
  *self = e;
  return 0;
}

/* A communicator of the job's ranks on the backend the environment asks for. */
static int sc_init_comm(sc_engine_t *e) {
  struct {
    int32_t ok;
    symcomm_unique_id_t id;
  } msg = {0};
  symcomm_result_t res = SYMCOMM_OK;
  if (e->job->rank == 0) {
    res = symcomm_get_unique_id(&msg.id);
    msg.ok = res == SYMCOMM_OK;
  }
  if (perf_job_broadcast(e->job, &msg, sizeof(msg), 0) != 0) {
    snprintf(e->error, sizeof(e->error), "the unique id did not reach every rank");
    return -1;
  }
  if (e->job->rank == 0 && res != SYMCOMM_OK)
    return sc_fail(e, "symcomm_get_unique_id", res);
  if (!msg.ok) {
    snprintf(e->error, sizeof(e->error), "rank 0 could not make a unique id");
    return -1;
  }
  SC_TRY(e, "symcomm_comm_init",
         symcomm_comm_init(&e->comm, e->job->nranks, &msg.id, e->job->rank, NULL));
  return 0;
}

static int sc_init(void *self) {
  sc_engine_t *e = self;
  if (sc_init_comm(e) != 0)
    return -1;
  const char *backend = "host";
  SC_TRY(e, "symcomm_comm_device", symcomm_comm_device(e->comm, &backend, &e->device));
  if (strcmp(backend, "cuda") != 0) {
    SC_TRY(e, "symcomm_stream_create", symcomm_stream_create(e->comm, &e->stream));
    return 0;
  }
  char why[512];
  if (perf_cudart_load(&e->rt, why, sizeof(why)) != 0) {
    snprintf(e->error, sizeof(e->error), "the CUDA backend needs the CUDA runtime here: %s", why);
    return -1;
  }
  cuda_error_t err = e->rt->SetDevice(e->device);
  if (err != 0)
    return perf_cudart_fail(e->rt, e->error, sizeof(e->error), "cudaSetDevice", err);
  err = e->rt->StreamCreateWithFlags(&e->native, CUDA_STREAM_NON_BLOCKING);
  if (err != 0)
    return perf_cudart_fail(e->rt, e->error, sizeof(e->error), "cudaStreamCreateWithFlags", err);
  SC_TRY(e, "symcomm_stream_from_cuda", symcomm_stream_from_cuda(e->comm, e->native, &e->stream));
  return 0;
}

static void sc_describe(void *self, char *text, size_t len, char *card, size_t card_len) {
  sc_engine_t *e = self;
  int v = 0;
  symcomm_get_version(&v);
  const char *asked = getenv("SYMCOMM_BACKEND");
  const char *backend = "?";
  if (e->comm != NULL)
    symcomm_comm_device(e->comm, &backend, NULL);
  snprintf(text, len, "symcomm %d.%d.%d (%s backend%s; SYMCOMM_BACKEND=%s)", v / 10000,
           v / 100 % 100, v % 100, backend,
           strcmp(backend, "host") == 0 ? ": simulated GPUs" : "", asked && *asked ? asked : "auto");
  if (e->rt != NULL)
    perf_cudart_card(e->rt, e->device, card, card_len);
  else
    snprintf(card, card_len, "no GPU");
}

static void sc_device(void *self, char *text, size_t len) {
  sc_engine_t *e = self;
  char busid[32] = "?";
  if (e->comm != NULL) /* NULL: its init failed, said already */
    symcomm_comm_peer_busid(e->comm, e->job->rank, busid, sizeof(busid));
  if (e->rt != NULL)
    snprintf(text, len, "%s (CUDA device %d, symcomm)", busid, e->device);
  else
    snprintf(text, len, "%s (symcomm)", busid);
}

static int sc_alloc(void *self, size_t bytes, void **buf) {
  sc_engine_t *e = self;
  int slot = 0;
  while (slot < SC_ENGINE_MAX_BUFS && e->bufs[slot].ptr != NULL)
    slot++;
  if (slot == SC_ENGINE_MAX_BUFS) {
    snprintf(e->error, sizeof(e->error), "more than %d buffers", SC_ENGINE_MAX_BUFS);
    return -1;
  }
  void *p = NULL;
  if (!e->registered && e->rt != NULL) {
    cuda_error_t err = e->rt->Malloc(&p, bytes);
    if (err != 0)
      return perf_cudart_fail(e->rt, e->error, sizeof(e->error), "cudaMalloc", err);
  } else if (!e->registered) {
    p = malloc(bytes);
    if (p == NULL) {
      snprintf(e->error, sizeof(e->error), "malloc of %zu bytes failed", bytes);
      return -1;
    }
  } else {
    SC_TRY(e, "symcomm_mem_alloc", symcomm_mem_alloc(e->comm, bytes, &p));
    symcomm_result_t res = symcomm_window_register(e->comm, p, bytes, &e->bufs[slot].win);
    if (res != SYMCOMM_OK) {
      sc_fail(e, "symcomm_window_register", res);
      symcomm_mem_free(e->comm, p);
      return -1;
    }
  }
  e->bufs[slot].ptr = p;
  *buf = p;
  return 0;
}

static int sc_free(void *self, void *buf) {
  sc_engine_t *e = self;
  for (int i = 0; i < SC_ENGINE_MAX_BUFS; i++) {
    if (buf == NULL || e->bufs[i].ptr != buf)
      continue;
    e->bufs[i].ptr = NULL;
    if (!e->registered && e->rt != NULL) {
      cuda_error_t err = e->rt->Free(buf);
      return err == 0 ? 0 : perf_cudart_fail(e->rt, e->error, sizeof(e->error), "cudaFree", err);
    }
    if (!e->registered) {
      free(buf);
      return 0;
    }
    symcomm_result_t res = symcomm_window_free(e->bufs[i].win);
    symcomm_result_t res2 = symcomm_mem_free(e->comm, buf);
    if (res != SYMCOMM_OK)
      return sc_fail(e, "symcomm_window_free", res);
    if (res2 != SYMCOMM_OK)
      return sc_fail(e, "symcomm_mem_free", res2);
    return 0;
  }
  return 0;
}

/* On the simulated backend, device memory is this process's memory. */
static int sc_copy(sc_engine_t *e, void *dst, const void *src, size_t bytes, int kind) {
  if (e->rt == NULL) {
    memcpy(dst, src, bytes);
    return 0;
  }
  cuda_error_t err = e->rt->Memcpy(dst, src, bytes, kind);
  if (err != 0)
    return perf_cudart_fail(e->rt, e->error, sizeof(e->error), "cudaMemcpy", err);
  /* From pageable memory cudaMemcpy may return before its DMA has landed,
   * and the engine's stream is non-blocking (it does not wait for the
   * legacy stream): wait for the copy before any operation reads it. The
   * legacy stream only, not the device: with --threads the other ranks'
   * kernels run on it too, waiting for this rank's next one. */
  err = e->rt->StreamSynchronize(CUDA_STREAM_LEGACY);
  return err == 0 ? 0 : perf_cudart_fail(e->rt, e->error, sizeof(e->error), "cudaStreamSynchronize", err);
}

static int sc_upload(void *self, void *dst, const void *src, size_t bytes) {
  return sc_copy(self, dst, src, bytes, CUDA_MEMCPY_HOST_TO_DEVICE);
}

static int sc_download(void *self, void *dst, const void *src, size_t bytes) {
  return sc_copy(self, dst, src, bytes, CUDA_MEMCPY_DEVICE_TO_HOST);
}

static int sc_allreduce(void *self, const void *send, void *recv, size_t count,
                        symcomm_dtype_t dtype, symcomm_op_t op) {
  sc_engine_t *e = self;
  SC_TRY(e, "symcomm_allreduce",
         symcomm_allreduce(send, recv, count, dtype, op, e->comm, e->stream));
  return 0;
}

static int sc_reduce(void *self, const void *send, void *recv, size_t count, symcomm_dtype_t dtype,
                     symcomm_op_t op, int root) {
  sc_engine_t *e = self;
  SC_TRY(e, "symcomm_reduce",
         symcomm_reduce(send, recv, count, dtype, op, root, e->comm, e->stream));
  return 0;
}

static int sc_broadcast(void *self, const void *send, void *recv, size_t count,
                        symcomm_dtype_t dtype, int root) {
  sc_engine_t *e = self;
  SC_TRY(e, "symcomm_broadcast",
         symcomm_broadcast(send, recv, count, dtype, root, e->comm, e->stream));
  return 0;
}

static int sc_allgather(void *self, const void *send, void *recv, size_t sendcount,
                        symcomm_dtype_t dtype) {
  sc_engine_t *e = self;
  SC_TRY(e, "symcomm_allgather",
         symcomm_allgather(send, recv, sendcount, dtype, e->comm, e->stream));
  return 0;
}

static int sc_reducescatter(void *self, const void *send, void *recv, size_t recvcount,
                            symcomm_dtype_t dtype, symcomm_op_t op) {
  sc_engine_t *e = self;
  SC_TRY(e, "symcomm_reducescatter",
         symcomm_reducescatter(send, recv, recvcount, dtype, op, e->comm, e->stream));
  return 0;
}

static int sc_alltoall(void *self, const void *send, void *recv, size_t count_per_peer,
                       symcomm_dtype_t dtype) {
  sc_engine_t *e = self;
  SC_TRY(e, "symcomm_alltoall",
         symcomm_alltoall(send, recv, count_per_peer, dtype, e->comm, e->stream));
  return 0;
}

static int sc_sendrecv(void *self, const void *send, void *recv, size_t count,
                       symcomm_dtype_t dtype, int to, int from) {
  sc_engine_t *e = self;
  SC_TRY(e, "symcomm_group_start", symcomm_group_start());
  symcomm_result_t res = symcomm_send(send, count, dtype, to, e->comm, e->stream);
  const char *call = "symcomm_send";
  if (res == SYMCOMM_OK) {
    res = symcomm_recv(recv, count, dtype, from, e->comm, e->stream);
    call = "symcomm_recv";
  }
  symcomm_result_t end = symcomm_group_end();
  if (res != SYMCOMM_OK)
    return sc_fail(e, call, res);
  SC_TRY(e, "symcomm_group_end", end);
  return 0;
}

static int sc_synchronize(void *self) {
  sc_engine_t *e = self;
  SC_TRY(e, "symcomm_stream_synchronize", symcomm_stream_synchronize(e->stream));
  return 0;
}

static int sc_cuda_stream(void *self, const perf_cudart_t **rt, cuda_stream_t *stream) {
  sc_engine_t *e = self;
  if (e->rt == NULL) {
    snprintf(e->error, sizeof(e->error),
             "the symcomm engine's stream is not a CUDA stream (the simulated-GPU backend)");
    return -1;
  }
  *rt = e->rt;
  *stream = e->native;
  return 0;
}

static const char *sc_last_error(void *self) { return ((sc_engine_t *)self)->error; }

static int sc_close(void *self, int failed) {
  sc_engine_t *e = self;
  /* After a failure other ranks may never come: abort, so that the waits end at once. */
  if (failed && e->comm != NULL)
    symcomm_comm_abort(e->comm);
  int rc = e->stream != NULL && symcomm_stream_destroy(e->stream) != SYMCOMM_OK && !failed ? -1 : 0;
  if (e->comm != NULL && symcomm_comm_destroy(e->comm) != SYMCOMM_OK && !failed)
    rc = -1;
  /* The wrapped stream stays ours: symcomm never owned it. */
  if (e->native != NULL && e->rt->StreamDestroy(e->native) != 0 && !failed)
    rc = -1;
  free(e);
  return rc;
}

/* symcomm promises in-place all-to-all (symcomm.h); nobody promises a send
 * and a receive on one buffer, so that is timed only, as in nccl-tests. */
static int sc_checkable(void *self, perf_op_t op, symcomm_dtype_t dtype, int redop, int in_place) {
  return !(in_place && op == PERF_SENDRECV);
}

const perf_engine_ops_t perf_engine_symcomm = {
    .size = sizeof(perf_engine_ops_t),
    .name = "symcomm",
    .open = sc_open,
    .init = sc_init,
    .describe = sc_describe,
    .device = sc_device,
    .alloc = sc_alloc,
    .free = sc_free,
    .upload = sc_upload,
    .download = sc_download,
    .allreduce = sc_allreduce,
    .reduce = sc_reduce,
    .broadcast = sc_broadcast,
    .allgather = sc_allgather,
    .reducescatter = sc_reducescatter,
    .alltoall = sc_alltoall,
    .sendrecv = sc_sendrecv,
    .synchronize = sc_synchronize,
    .cuda_stream = sc_cuda_stream,
    .last_error = sc_last_error,
    .close = sc_close,
    .checkable = sc_checkable,
};
