/* Inside libnccl.so.2, the NCCL-compatible library over symcomm's public API
 * (include/symcomm.h only: nothing of src/ is linked in). It is compiled
 * against the machine's own nccl.h, so enum values and struct layouts are
 * NCCL's; only the ncclXxx calls and their pncclXxx twins leave the library
 * (libnccl.map).
 *
 * Streams (nccl_stream.c): on the CUDA backend a cudaStream_t is wrapped once
 * per communicator with symcomm_stream_from_cuda and cached, so later calls on
 * it neither allocate nor synchronize. On the simulated backend there are no
 * CUDA streams: a NULL stream means "return once the work is done" (the call,
 * or the outermost ncclGroupEnd for calls inside a group), and any other value
 * is a symcomm_stream_t made by symcomm_stream_create on that communicator. */
#ifndef SC_NCCL_SHIM_H
#define SC_NCCL_SHIM_H

#include <nccl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "symcomm.h"

#define SHIM_API __attribute__((visibility("default")))
/* NCCL's profiling interface: every public call is exported twice, as
 * ncclXxx and as pncclXxx, one function under two names (a profiler defines
 * its own ncclXxx and reaches the library's through pncclXxx). Placed after
 * each SHIM_API definition: an alias must be in its function's file. */
#define SHIM_PROFILED(name) \
  extern __typeof__(name) p##name __attribute__((alias(#name), visibility("default")))

/* ---- errors (nccl_error.c) */

/* Sets this thread's last error to the sentence and returns res. */
ncclResult_t shim_fail(ncclResult_t res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A symcomm result as NCCL's (the table in nccl_error.c); on failure the
 * sentence symcomm gave (for comm, or this thread's with comm NULL) becomes
 * this thread's last error. */
ncclResult_t shim_result(symcomm_result_t res, symcomm_comm_t comm);
ncclResult_t shim_map_result(symcomm_result_t res);

/* ---- environment (nccl_env.c) */

/* Once per process: the NCCL_* variables symcomm has an equivalent for become
 * that SYMCOMM_* variable where it is unset; a value symcomm cannot take
 * fails with the sentence. */
ncclResult_t shim_env_apply(void);

/* ---- communicators (nccl_comm.c) */

enum shim_state { SHIM_PENDING = 0, SHIM_READY = 1, SHIM_FAILED = 2 };

typedef struct shim_stream_entry {
  void *key; /* the caller's cudaStream_t */
  symcomm_stream_t stream;
} shim_stream_entry_t;

/* A buffer registered with ncclCommRegister (win NULL) or a window. */
typedef struct shim_reg {
  void *buf;
  size_t bytes;
  symcomm_window_t win;
  struct shim_reg *next;
} shim_reg_t;

struct ncclComm {
  symcomm_comm_t sc;
  int rank, nranks, device;
  bool cuda;     /* on the CUDA backend (else simulated GPUs) */
  bool blocking; /* config.blocking */
  int max_ctas;   /* config.maxCTAs as the caller wrote it (0: none); a split keeps it */
  _Atomic int state;
  int holds; /* calls using it now (shim_comm_hold); under the registry's lock */
  ncclResult_t init_result;  /* once state is not PENDING */
  char init_error[512];      /* its sentence, for the thread that asks */
  pthread_t init_thread;
  bool init_joinable;
  /* An init run in a thread watches it (symcomm's config.abort_fd):
   * ncclCommAbort writes it, so that a pending init ends at once. -1 none. */
  int cancel_fd;
  pthread_cond_t settled; /* with lock: state left PENDING */
  /* what init needs when it runs later (in a group, or non-blocking) */
  ncclUniqueId id;
  char name[64];
  bool has_name;
  pthread_mutex_t lock; /* streams, regs */
  shim_stream_entry_t *streams;
  int nstreams, cap_streams;
  symcomm_stream_t own; /* simulated backend: what a NULL stream runs on */
  shim_reg_t *regs;
  struct ncclComm *next; /* in the registry of live communicators */
};

/* The communicator behind a handle, if it is a live one, ready for work:
 * else the NCCL result and this thread's sentence naming `call`. */
ncclResult_t shim_comm_ready(ncclComm_t comm, const char *call);
/* Only that the handle is a live communicator (any state). */
ncclResult_t shim_comm_live(ncclComm_t comm, const char *call);
/* shim_comm_ready (ready) or shim_comm_live, and comm stays allocated until
 * shim_comm_release: an ncclCommAbort or ncclCommDestroy from another thread
 * ends a call's wait (abort) but frees comm only once no call holds it. */
ncclResult_t shim_comm_hold(ncclComm_t comm, bool ready, const char *call);
void shim_comm_release(ncclComm_t comm);
/* Runs the communicator's symcomm init (its thread's body, or inline). */
void shim_comm_run_init(ncclComm_t comm);
/* Starts comm's init in a thread of its own; waits until it has ended (the
 * caller holds comm, or owns it) and gives its result. */
ncclResult_t shim_comm_start(ncclComm_t comm);
ncclResult_t shim_comm_wait(ncclComm_t comm);
/* The oldest ready communicator of this process on `device` if one is, else
 * (on simulated GPUs, or with device -1) the oldest ready one, else NULL:
 * what ncclMemAlloc reaches the device through. */
ncclComm_t shim_comm_any(int device);
/* The caller's current CUDA device where the process has a CUDA runtime, else -1. */
int shim_current_device(void);

/* ---- config (nccl_config.c) */

typedef struct shim_config {
  bool blocking;
  const char *name;
  int max_ctas;   /* config.maxCTAs as the caller wrote it; 0: not given */
} shim_config_t;
/* Reads a caller's ncclConfig_t (NULL = defaults), built against this or
 * another NCCL header: its size and version say which fields it has. */
ncclResult_t shim_config_read(const ncclConfig_t *config, const char *call, shim_config_t *out);
/* symcomm's config.max_blocks for a maxCTAs (0: none). */
int shim_max_blocks(int max_ctas);

/* ---- groups (nccl_group.c) */

bool shim_in_group(void);
/* A collective, send, receive or init inside a group ended with res: the
 * outermost ncclGroupEnd then fails with the first such failure. */
void shim_group_note(ncclResult_t res);
/* Init of comm is to run at the outermost ncclGroupEnd. */
ncclResult_t shim_group_add_init(ncclComm_t comm);
/* After the outermost ncclGroupEnd, wait for comm's NULL-stream work. */
ncclResult_t shim_group_add_sync(ncclComm_t comm);
/* A send to (or receive from) this rank itself, paired at ncclGroupEnd. */
ncclResult_t shim_group_add_self(ncclComm_t comm, bool send, void *buf, size_t bytes,
                                 symcomm_stream_t stream);

/* ---- streams (nccl_stream.c) */

/* The symcomm stream for the caller's stream; *sync says that the call must
 * wait for its work before returning (a NULL stream on simulated GPUs). */
ncclResult_t shim_stream(ncclComm_t comm, cudaStream_t stream, symcomm_stream_t *out, bool *sync);
/* Waits for comm's NULL-stream work (simulated backend). */
ncclResult_t shim_stream_finish(ncclComm_t comm);
/* After an enqueue: waits when *sync, or notes comm for the group's end. */
ncclResult_t shim_stream_done(ncclComm_t comm, bool sync);
/* Waits for everything symcomm queued on comm's streams. */
ncclResult_t shim_stream_drain(ncclComm_t comm);
/* Forgets (and, for its own, destroys) every stream of comm. */
void shim_stream_release(ncclComm_t comm);

/* ---- types (nccl_types.c) */

/* symcomm's type for data that is only moved (fp8 moves as bytes). */
ncclResult_t shim_move_type(ncclDataType_t t, const char *call, symcomm_dtype_t *out, size_t *elem);
/* symcomm's type and operation for a reduction. */
ncclResult_t shim_reduce_type(ncclDataType_t t, ncclRedOp_t op, const char *call,
                              symcomm_dtype_t *dtype, symcomm_op_t *sop, size_t *elem);
/* count * factor * elem bytes, unless that passes SIZE_MAX. */
ncclResult_t shim_bytes(size_t count, size_t factor, size_t elem, const char *call, size_t *bytes);

#endif
