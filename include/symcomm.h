/*
 * symcomm: GPU communication over symmetric memory (NVLink inside a host, TCP
 * between hosts), with a simulated-GPU backend for machines without GPUs.
 *
 * This is the only public header. Every handle is opaque, every call returns a
 * symcomm_result_t, and outputs are written only when the call succeeds.
 * symcomm_last_error() gives the sentence that explains the last failure.
 */
#ifndef SYMCOMM_H
#define SYMCOMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SYMCOMM_API __attribute__((visibility("default")))
#else
#define SYMCOMM_API
#endif

/* ---------------------------------------------------------------- version */

#define SYMCOMM_VERSION_MAJOR 0
#define SYMCOMM_VERSION_MINOR 1
#define SYMCOMM_VERSION_PATCH 0
#define SYMCOMM_VERSION_CODE(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
/* The version this header describes, e.g. 100 for 0.1.0. */
#define SYMCOMM_VERSION \
  SYMCOMM_VERSION_CODE(SYMCOMM_VERSION_MAJOR, SYMCOMM_VERSION_MINOR, SYMCOMM_VERSION_PATCH)

/* ---------------------------------------------------------------- results */

typedef enum symcomm_result {
  SYMCOMM_OK = 0,
  SYMCOMM_IN_PROGRESS = 1,          /* not an error: the operation has not completed yet */
  SYMCOMM_ERR_INVALID_ARGUMENT = 2, /* a bad argument; nothing was done */
  SYMCOMM_ERR_INVALID_USAGE = 3,    /* a valid call at the wrong time or in the wrong order */
  SYMCOMM_ERR_SYSTEM = 4,           /* an operating-system call failed (socket, memory map, ...) */
  SYMCOMM_ERR_DEVICE = 5,           /* the device (GPU or simulated GPU) failed */
  SYMCOMM_ERR_REMOTE = 6,           /* another rank failed, left or disagreed */
  SYMCOMM_ERR_TIMEOUT = 7,          /* a wait passed SYMCOMM_TIMEOUT */
  SYMCOMM_ERR_ABORTED = 8,          /* the communicator was aborted */
  SYMCOMM_ERR_OUT_OF_MEMORY = 9,
  SYMCOMM_ERR_UNSUPPORTED = 10, /* not available in this build, on this machine or in this version */
  SYMCOMM_ERR_INTERNAL = 11     /* a bug in symcomm: please report it with the log */
} symcomm_result_t;

/* ---------------------------------------------------------------- handles */

typedef struct symcomm_comm *symcomm_comm_t;     /* a communicator */
typedef struct symcomm_topo *symcomm_topo_t;     /* the GPUs of one host and the links between them */
typedef struct symcomm_stream *symcomm_stream_t; /* an ordered queue of work on this rank's device */
typedef struct symcomm_window *symcomm_window_t; /* symmetric memory: one buffer per rank, mapped by its host's peers */

/* Names the root of a job; produced by symcomm_get_unique_id() and passed to
 * every rank by the application (like ncclUniqueId). Plain bytes: copy it,
 * send it, but do not interpret it. */
#define SYMCOMM_UNIQUE_ID_BYTES 128
typedef struct symcomm_unique_id {
  char internal[SYMCOMM_UNIQUE_ID_BYTES];
} symcomm_unique_id_t;

/* ---------------------------------------------------------------- configuration */

/* Communicator options. Always start from SYMCOMM_CONFIG_INITIALIZER, so that a
 * program built against this header keeps working with a newer library: size and
 * version say which fields the caller knows. A NULL config means all defaults. */
typedef struct symcomm_config {
  size_t size;          /* sizeof(symcomm_config_t) as the caller was built */
  unsigned int version; /* SYMCOMM_VERSION as the caller was built */
  int timeout_ms;       /* how long any wait may go without progress; 0 = SYMCOMM_TIMEOUT */
  int device;           /* device index on this host; -1 = SYMCOMM_DEVICE, else the local rank */
  const char *name;     /* shown in log lines; NULL = none. Copied at init. */
  const char *backend;  /* "auto", "host" (simulated GPUs) or "cuda"; NULL = SYMCOMM_BACKEND.
                           Lets one process keep, e.g., a host-memory control communicator
                           beside its GPU ones. */
  int abort_fd;         /* > 0: while init runs, a file descriptor it watches (an eventfd, a
                           pipe's read end): once that is readable, init stops waiting and
                           fails with SYMCOMM_ERR_ABORTED, and the other ranks' inits fail
                           naming this rank. Only init reads it, never drains it; the caller
                           may close it once init returned. 0 = none (stdin is never watched). */
  int max_blocks;       /* > 0: a collective's kernel runs on at most this many blocks (each
                           takes an SM's share) on each GPU, 1..128, leaving the rest to the
                           caller's kernels; 0 = SYMCOMM_COLL_MAX_BLOCKS. Every rank must give
                           the same: a collective between ranks with different caps fails on
                           every rank. A split keeps its parent's. SYMCOMM_COLL_BLOCKS (a fixed
                           count, for tests) overrides it. */
} symcomm_config_t;

#define SYMCOMM_CONFIG_INITIALIZER {sizeof(symcomm_config_t), SYMCOMM_VERSION, 0, -1, NULL, NULL, 0, 0}

/* ---------------------------------------------------------------- library */

/* The run-time library version, in SYMCOMM_VERSION's encoding. */
SYMCOMM_API symcomm_result_t symcomm_get_version(int *version);

/* A constant name for a result code ("SYMCOMM_ERR_TIMEOUT"); never NULL. */
SYMCOMM_API const char *symcomm_result_string(symcomm_result_t result);

/* The sentence that explains the last failure of a call on this communicator
 * or on one of its windows (or the error of a stream it created, once
 * synchronize or query returned it), or, with comm == NULL, of the last failed
 * call made by this thread (use that after a failed init, or when a handle was
 * not one at all). Empty string when nothing has failed. The text stays valid
 * until the next call on the same communicator (or thread). */
SYMCOMM_API const char *symcomm_last_error(symcomm_comm_t comm);

/* ---------------------------------------------------------------- communicators */

/* Creates a root for a new job in this process and describes it in *id. Give
 * the id to every rank, then each calls symcomm_comm_init(). The root listens on
 * SYMCOMM_ADDR when set (on its host and a free port once symcomm_init_from_env
 * has used that address for its job), else on an interface chosen by
 * SYMCOMM_SOCKET_IFNAME. */
SYMCOMM_API symcomm_result_t symcomm_get_unique_id(symcomm_unique_id_t *id);

/* Collective over nranks processes: each calls it with its own rank in [0, nranks).
 * At most 64 ranks may share a host (one GPU each); a job with more on one
 * host fails on every rank with SYMCOMM_ERR_UNSUPPORTED. Environment variables
 * are read here (and by split), not later. */
SYMCOMM_API symcomm_result_t symcomm_comm_init(symcomm_comm_t *comm, int nranks,
                                               const symcomm_unique_id_t *id, int rank,
                                               const symcomm_config_t *config);

/* Joins the job described by the environment of the launcher that started this
 * process: symcomm-run, torchrun, Open MPI or Slurm (see README.md for the
 * variables and their precedence). Collective over every rank of the job. */
SYMCOMM_API symcomm_result_t symcomm_init_from_env(symcomm_comm_t *comm,
                                                   const symcomm_config_t *config);

/* Splits comm: ranks passing the same color form a new communicator, ordered by
 * key, then by their rank in comm. Collective over every rank of comm. A rank
 * passing SYMCOMM_SPLIT_NOCOLOR takes part but gets *newcomm = NULL. The new
 * communicator keeps every rank's device. */
#define SYMCOMM_SPLIT_NOCOLOR (-1)
SYMCOMM_API symcomm_result_t symcomm_comm_split(symcomm_comm_t comm, int color, int key,
                                                symcomm_comm_t *newcomm);

/* Frees the communicator. Not collective; other ranks may still be using theirs.
 * Waits first for the work it queued on any stream (after symcomm_comm_abort,
 * or once any rank of the job failed, it ends at once), at most for
 * SYMCOMM_TIMEOUT (config.timeout_ms) in all; on a stream made with
 * symcomm_stream_from_cuda, only up to symcomm's last work there, not for
 * the caller's work queued after it. Work still running then (a stream held
 * by the caller's own work, a wait that keeps seeing progress) is left to
 * finish: a WARN names the stream, and what that work may use (device
 * memory, windows, the device) is kept, leaked rather than freed under a
 * running kernel. On CUDA, freeing GPU memory and page-locked host memory
 * makes the driver wait until the device is idle (as cudaFree does), so
 * once symcomm's own wait is over the free itself may still wait for the
 * caller's work on the device. Streams made from it stay usable for synchronize,
 * query and destroy. Once it has returned, the handle is dead: using it in
 * any call, destroy and abort included, is undefined (as in NCCL), since a
 * new communicator may have been given the same address. Only an abort that
 * races destroy from another thread (called before destroy returned) is
 * safe.
 *
 * Leaving is not a failure: the other ranks may go on with work that does not
 * need this rank (sends and receives among themselves), and work that already
 * has all it needs of it completes. Work of theirs that still waits for it (a
 * collective it did not join, a send or receive it did not post) fails within
 * moments with SYMCOMM_ERR_REMOTE, "rank 2 left (destroyed its communicator)
 * during all-reduce #50", which fails that rank's communicator as below.
 * symcomm_wait_signal() waits for no rank in particular and is bounded by
 * SYMCOMM_TIMEOUT only. */
SYMCOMM_API symcomm_result_t symcomm_comm_destroy(symcomm_comm_t comm);

/* Stops everything in flight on the communicator, from any thread, at any time
 * until symcomm_comm_destroy() returns (also while it runs: it then stops
 * destroy's wait for queued work). A wait in another thread returns
 * SYMCOMM_ERR_ABORTED, and so does every later call except
 * symcomm_comm_destroy(), which must still be called. The other ranks' work
 * on the communicator fails within moments, naming this rank.
 *
 * Failures spread the same way without an abort: once a rank of the job
 * exits, is killed, aborts, or times out in a wait, every rank's work on the
 * communicator (queued, running, or called later) fails with
 * SYMCOMM_ERR_REMOTE and a sentence naming that rank ("rank 3 exited during
 * all-reduce #40432"); symcomm_stream_synchronize() returns that failure for a
 * stream that carried such work. A communicator that failed stays failed:
 * destroy it and make another. */
SYMCOMM_API symcomm_result_t symcomm_comm_abort(symcomm_comm_t comm);

/* Whether comm has failed, without waiting (like ncclCommGetAsyncError):
 * *async_error is SYMCOMM_OK while nothing failed, else the result of the
 * communicator's first failure that its device work met or that this rank
 * recorded: its abort, another rank that failed, exited or aborted, a wait
 * that passed SYMCOMM_TIMEOUT, a collective the ranks disagreed on, a send
 * and receive of different sizes. symcomm_last_error(comm) then holds the
 * sentence, naming the rank and the operation as the stream that carried the
 * work reports it ("rank 1 aborted the communicator during all-reduce #7";
 * before any device work met a failure recorded here, the sentence names the
 * rank only). Sticky: once set, it stays. Scoped to comm: the failure of a
 * communicator split from the same parent, or of the parent, is not comm's
 * unless it reaches comm's own ranks (a rank that exits fails every
 * communicator it belongs to; an abort, only the one aborted).
 * It reads host memory that the device and symcomm's monitor write, and
 * neither queues nor queries anything: safe from any thread, while kernels
 * run and while a stream is being captured into a CUDA graph. It is how a
 * failure of work that no symcomm stream reports is found: a CUDA graph
 * replayed on another stream than the one it was captured on. Returns
 * SYMCOMM_OK unless comm or async_error is not valid. */
SYMCOMM_API symcomm_result_t symcomm_comm_get_async_error(symcomm_comm_t comm,
                                                          symcomm_result_t *async_error);

SYMCOMM_API symcomm_result_t symcomm_comm_rank(symcomm_comm_t comm, int *rank);
SYMCOMM_API symcomm_result_t symcomm_comm_size(symcomm_comm_t comm, int *size);
/* Rank among the ranks of comm on the same host, and how many there are. */
SYMCOMM_API symcomm_result_t symcomm_comm_local_rank(symcomm_comm_t comm, int *local_rank);
SYMCOMM_API symcomm_result_t symcomm_comm_local_size(symcomm_comm_t comm, int *local_size);
/* Hosts are numbered 0..count-1 in the order of their lowest rank in comm. */
SYMCOMM_API symcomm_result_t symcomm_comm_host_count(symcomm_comm_t comm, int *count);
SYMCOMM_API symcomm_result_t symcomm_comm_host_index(symcomm_comm_t comm, int *host);

/* What comm knows of another of its ranks. */
SYMCOMM_API symcomm_result_t symcomm_comm_peer_host(symcomm_comm_t comm, int peer, int *host);
/* Rank of peer in the communicator made by init from which comm was split. */
SYMCOMM_API symcomm_result_t symcomm_comm_peer_world_rank(symcomm_comm_t comm, int peer,
                                                          int *world_rank);
/* PCI bus id of peer's device ("0000:07:00.0"); simulated devices get virtual ids
 * whose PCI domain encodes the simulated host. len >= 13. */
SYMCOMM_API symcomm_result_t symcomm_comm_peer_busid(symcomm_comm_t comm, int peer, char *busid,
                                                     size_t len);
/* The backend comm runs on ("cuda", or "host" for simulated GPUs) and the
 * index of this rank's device among the visible ones: on "cuda", data
 * buffers must be memory of that GPU (cudaMalloc, symcomm_mem_alloc, or a
 * framework's allocator). Either pointer may be NULL. */
SYMCOMM_API symcomm_result_t symcomm_comm_device(symcomm_comm_t comm, const char **backend,
                                                 int *device);
/* Name of a host of comm: its hostname, with "/sim<N>" for simulated host N. */
SYMCOMM_API symcomm_result_t symcomm_comm_host_name(symcomm_comm_t comm, int host, char *name,
                                                    size_t len);

/* ---------------------------------------------------------------- topology */

/* How GPUs inside one host are connected, as a whole. */
typedef enum symcomm_topo_class {
  SYMCOMM_TOPO_NONE = 0,             /* no NVLink between any two GPUs */
  SYMCOMM_TOPO_PARTIAL = 1,          /* NVLink between some pairs, not all */
  SYMCOMM_TOPO_HYBRID_CUBE_MESH = 2, /* 8 GPUs: two fully connected quads plus one link per GPU across */
  SYMCOMM_TOPO_FULLY_CONNECTED = 3   /* NVLink (direct or through NVSwitch) between every pair */
} symcomm_topo_class_t;

/* The best path between two GPUs, as `nvidia-smi topo -m` names it. */
typedef enum symcomm_link {
  SYMCOMM_LINK_SELF = 0,   /* the same GPU ("X") */
  SYMCOMM_LINK_NVLINK = 1, /* NVLink, direct or through NVSwitch ("NV<count>") */
  SYMCOMM_LINK_PIX = 2,    /* at most one PCIe switch */
  SYMCOMM_LINK_PXB = 3,    /* several PCIe switches, no host bridge */
  SYMCOMM_LINK_PHB = 4,    /* through a PCIe host bridge (one CPU) */
  SYMCOMM_LINK_SYS = 5,    /* across CPUs / NUMA nodes */
  SYMCOMM_LINK_NET = 6     /* on different hosts */
} symcomm_link_t;

/* Reads an NCCL-format topology XML file (as NCCL_TOPO_FILE takes, or as
 * NCCL_TOPO_DUMP_FILE writes). A malformed file fails with a sentence naming the
 * line (symcomm_last_error(NULL)). */
SYMCOMM_API symcomm_result_t symcomm_topo_load(const char *path, symcomm_topo_t *topo);

/* Writes topo as an NCCL-format topology file that symcomm_topo_load (and
 * SYMCOMM_TOPO_FILE) reads back to the same GPUs, links and class: how a job
 * rehearses on simulated hosts with a real host's topology. */
SYMCOMM_API symcomm_result_t symcomm_topo_write(symcomm_topo_t topo, const char *path);

/* The GPUs of host number `host` of comm that belong to comm, in local-rank order. */
SYMCOMM_API symcomm_result_t symcomm_comm_host_topo(symcomm_comm_t comm, int host,
                                                    symcomm_topo_t *topo);

SYMCOMM_API symcomm_result_t symcomm_topo_gpu_count(symcomm_topo_t topo, int *count);
SYMCOMM_API symcomm_result_t symcomm_topo_gpu_busid(symcomm_topo_t topo, int gpu, char *busid,
                                                    size_t len);
/* The rank of comm that uses the GPU, or -1 for a topology read from a file. */
SYMCOMM_API symcomm_result_t symcomm_topo_gpu_rank(symcomm_topo_t topo, int gpu, int *rank);
/* The path between two GPUs; nvlinks is the NVLink count (0 unless NVLINK). */
SYMCOMM_API symcomm_result_t symcomm_topo_link(symcomm_topo_t topo, int gpu_a, int gpu_b,
                                               symcomm_link_t *link, int *nvlinks);
SYMCOMM_API symcomm_result_t symcomm_topo_class(symcomm_topo_t topo, symcomm_topo_class_t *cls);
SYMCOMM_API symcomm_result_t symcomm_topo_free(symcomm_topo_t topo);

SYMCOMM_API const char *symcomm_topo_class_string(symcomm_topo_class_t cls);
SYMCOMM_API const char *symcomm_link_string(symcomm_link_t link);

/* ---------------------------------------------------------------- data types */

typedef enum symcomm_dtype {
  SYMCOMM_INT8 = 0,
  SYMCOMM_UINT8 = 1,
  SYMCOMM_INT32 = 2,
  SYMCOMM_UINT32 = 3,
  SYMCOMM_INT64 = 4,
  SYMCOMM_UINT64 = 5,
  SYMCOMM_FLOAT16 = 6,  /* IEEE half; reductions accumulate in float */
  SYMCOMM_BFLOAT16 = 7, /* bfloat16; reductions accumulate in float */
  SYMCOMM_FLOAT32 = 8,
  SYMCOMM_FLOAT64 = 9,
  SYMCOMM_DTYPE_COUNT
} symcomm_dtype_t;

typedef enum symcomm_op {
  SYMCOMM_SUM = 0,
  SYMCOMM_PROD = 1,
  SYMCOMM_MIN = 2,
  SYMCOMM_MAX = 3,
  SYMCOMM_AVG = 4, /* sum divided by the number of ranks; integers truncate toward zero */
  SYMCOMM_OP_COUNT
} symcomm_op_t;

/* Bytes of one element; INVALID_ARGUMENT for an unknown type. */
SYMCOMM_API symcomm_result_t symcomm_dtype_size(symcomm_dtype_t dtype, size_t *size);
SYMCOMM_API const char *symcomm_dtype_string(symcomm_dtype_t dtype);
SYMCOMM_API const char *symcomm_op_string(symcomm_op_t op);

/* ---------------------------------------------------------------- streams */

/* Every data operation takes a stream and returns as soon as its work is
 * queued there; the work runs in queue order on the rank's device (a CUDA
 * stream on a GPU; a worker thread on the simulated backend). Errors found
 * while the work runs (a peer that failed, a size mismatch, a wait that passed
 * SYMCOMM_TIMEOUT) stop the stream and are returned by its synchronize and
 * query calls, with the sentence in symcomm_last_error(comm).
 * On the CUDA backend a failure does not stop the CUDA stream (later kernels
 * of a stopped communicator return at once): symcomm_stream_synchronize and
 * _query report the first failure of the stream's kernels once its work is
 * done, and a stream being captured into a CUDA graph cannot be synchronized
 * or queried (INVALID_USAGE) until the capture ends. */
/* A new stream on comm's device (CUDA: a non-blocking CUDA stream). */
SYMCOMM_API symcomm_result_t symcomm_stream_create(symcomm_comm_t comm, symcomm_stream_t *stream);
/* A symcomm stream over an existing CUDA stream of the caller (a
 * cudaStream_t or CUstream, e.g. PyTorch's current stream; NULL is the
 * device's default stream), which must belong to comm's device (its primary
 * context, as the CUDA runtime uses). The CUDA stream stays the caller's:
 * symcomm_stream_destroy forgets it without destroying it, and must come
 * before the caller destroys it. UNSUPPORTED on the simulated backend. */
SYMCOMM_API symcomm_result_t symcomm_stream_from_cuda(symcomm_comm_t comm, void *cuda_stream,
                                                      symcomm_stream_t *stream);
/* Waits until the queued work is done: OK, or the error that stopped it. */
SYMCOMM_API symcomm_result_t symcomm_stream_synchronize(symcomm_stream_t stream);
/* OK when all queued work is done, SYMCOMM_IN_PROGRESS while some runs, or the error that stopped it. */
SYMCOMM_API symcomm_result_t symcomm_stream_query(symcomm_stream_t stream);
/* Waits for symcomm's work queued on it (on a wrapped CUDA stream, up to
 * symcomm's last work there, not the caller's queued after it), at most for
 * its communicator's SYMCOMM_TIMEOUT, then frees the stream. Work still
 * running then is left to finish, with a WARN; what it may use is kept. */
SYMCOMM_API symcomm_result_t symcomm_stream_destroy(symcomm_stream_t stream);

/* ---------------------------------------------------------------- memory and windows */

/* Device memory that can become part of a window (like ncclMemAlloc), on
 * comm's device. It belongs to the process and that device, not to comm:
 * destroying comm leaves it allocated, and any communicator of the same
 * device (comm, a split of it, one made later) may register it as a window
 * or use it as an ordinary buffer. It lives until symcomm_mem_free. */
SYMCOMM_API symcomm_result_t symcomm_mem_alloc(symcomm_comm_t comm, size_t bytes, void **ptr);
/* Frees a buffer of symcomm_mem_alloc made through any communicator of
 * comm's device; with comm NULL, found by its address alone (after every
 * communicator is gone; symcomm_last_error(NULL) then has the sentence).
 * INVALID_ARGUMENT when ptr is no such buffer's start (or was freed
 * already); INVALID_USAGE while a window uses it: free the window first
 * (windows freed by symcomm_comm_destroy count as freed). */
SYMCOMM_API symcomm_result_t symcomm_mem_free(symcomm_comm_t comm, void *ptr);

/* Collective over comm: every rank allocates `bytes` (rounded up to the
 * backend's granularity; every rank must pass the same size) and maps the
 * buffers of the other ranks of its host. Each window has a signal pad of
 * SYMCOMM_SIGNAL_SLOTS 64-bit counters per rank, zero at the start. */
#define SYMCOMM_SIGNAL_SLOTS 64
SYMCOMM_API symcomm_result_t symcomm_window_alloc(symcomm_comm_t comm, size_t bytes,
                                                  symcomm_window_t *win);
/* Collective: the buffer [ptr, ptr + bytes) from symcomm_mem_alloc (through
 * any communicator of this device) becomes a window (like
 * ncclCommWindowRegister); the memory stays the caller's. Collectives may
 * run straight on it, which needs their buffers at the same offset of it on
 * every rank (see symcomm_allreduce); symcomm_window_alloc's windows too. */
SYMCOMM_API symcomm_result_t symcomm_window_register(symcomm_comm_t comm, void *ptr, size_t bytes,
                                                     symcomm_window_t *win);
/* symcomm_window_register with flags, which every rank must pass alike (a
 * mismatch fails the registration on every rank with INVALID_USAGE, naming
 * two ranks); other bits are INVALID_ARGUMENT; 0 is symcomm_window_register.
 * SYMCOMM_WINDOW_ANY_OFFSET: collectives may place their buffers at different
 * offsets of the window on different ranks, or use it on some ranks only
 * (what NCCL's default windows allow); they stage through the scratch then,
 * as for buffers that are no window. Sends, receives and one-sided calls
 * work on it as on any window. */
#define SYMCOMM_WINDOW_ANY_OFFSET 0x1u
SYMCOMM_API symcomm_result_t symcomm_window_register_flags(symcomm_comm_t comm, void *ptr,
                                                           size_t bytes, unsigned flags,
                                                           symcomm_window_t *win);
/* This rank's buffer, and `rank`'s buffer as mapped here (NULL for a rank on another host). */
SYMCOMM_API void *symcomm_window_local(symcomm_window_t win);
SYMCOMM_API void *symcomm_window_peer(symcomm_window_t win, int rank);
SYMCOMM_API size_t symcomm_window_size(symcomm_window_t win);
/* Collective: waits for the work this rank queued through the window's
 * communicator (as destroy does, at most SYMCOMM_TIMEOUT; work still running
 * then keeps the window mapped for good, with a WARN), then for every rank,
 * then unmaps and frees. */
SYMCOMM_API symcomm_result_t symcomm_window_free(symcomm_window_t win);

/* ---------------------------------------------------------------- one-sided operations */

typedef enum symcomm_signal_op {
  SYMCOMM_SIGNAL_SET = 0, /* slot = value */
  SYMCOMM_SIGNAL_ADD = 1  /* slot += value */
} symcomm_signal_op_t;

typedef enum symcomm_cmp {
  SYMCOMM_CMP_GE = 0, /* until slot >= value */
  SYMCOMM_CMP_EQ = 1  /* until slot == value */
} symcomm_cmp_t;

/* Copies bytes from src to offset dst_offset of peer's buffer in the
 * window. The peer must be on this host. src is memory the device copies
 * from without the host's help: on the CUDA backend, memory of the
 * communicator's GPU (cudaMalloc, symcomm_mem_alloc, a window) or page-locked
 * host memory (cudaMallocHost, cudaHostRegister); pageable host memory
 * (malloc, the stack) is refused with INVALID_ARGUMENT, since copying it
 * would hold the call on the host and cannot be captured into a CUDA graph.
 * On the simulated backend every address of the process is its device's
 * memory, so any memory of this rank works there. */
SYMCOMM_API symcomm_result_t symcomm_put(symcomm_window_t win, int peer, size_t dst_offset,
                                         const void *src, size_t bytes, symcomm_stream_t stream);
/* Sets or adds to slot `slot` of peer's signal pad, after the stream's earlier
 * work (release): a peer that sees the value also sees the data put before it. */
SYMCOMM_API symcomm_result_t symcomm_signal(symcomm_window_t win, int peer, int slot,
                                            uint64_t value, symcomm_signal_op_t op,
                                            symcomm_stream_t stream);
/* A put, then a signal, in that order. */
SYMCOMM_API symcomm_result_t symcomm_put_signal(symcomm_window_t win, int peer, size_t dst_offset,
                                                const void *src, size_t bytes, int slot,
                                                uint64_t value, symcomm_signal_op_t op,
                                                symcomm_stream_t stream);
/* Holds the stream until this rank's slot compares to value (acquire). */
SYMCOMM_API symcomm_result_t symcomm_wait_signal(symcomm_window_t win, int slot, symcomm_cmp_t cmp,
                                                 uint64_t value, symcomm_stream_t stream);

/* ---------------------------------------------------------------- point-to-point */

/* Stream-ordered send and receive, within a host (through the windows) or
 * between hosts (TCP: the device hands the op to the process's network
 * thread, which stages GPU data through pinned host memory). A send matches
 * the receive that peer posts from this rank in the same position (the n-th
 * send to a peer meets its n-th receive from us), and both must have the same
 * count and type: a mismatch fails both streams, naming both sizes (within a
 * host, a send of at most SYMCOMM_P2P_EAGER_BYTES ends once its data is put
 * into the peer's memory, before the receive takes it: the receive fails at
 * once, and the send fails at once or, if it had ended, the sender's next
 * send to that peer, of any size, fails, naming the refused message). Positions
 * are taken on the device when an operation starts (so that a captured CUDA
 * graph can replay it): on one stream that is posting order. Within a host,
 * an operation queued on another stream than the last one with the same peer
 * and direction waits for that stream (an event), so positions follow call
 * order across streams too; not while either stream is captured into a CUDA
 * graph: order graph launches with other work on that pair yourself (with
 * SYMCOMM_P2P_LANES > 1, such launches running at once on one pair and
 * direction may fail with SYMCOMM_ERR_INVALID_USAGE, naming the pair).
 * Neither call waits for the peer on the host, queries or synchronizes a
 * stream. Between hosts, a size mismatch or a network failure fails the
 * communicator (on every rank). */
SYMCOMM_API symcomm_result_t symcomm_send(const void *buf, size_t count, symcomm_dtype_t dtype,
                                          int peer, symcomm_comm_t comm, symcomm_stream_t stream);
SYMCOMM_API symcomm_result_t symcomm_recv(void *buf, size_t count, symcomm_dtype_t dtype, int peer,
                                          symcomm_comm_t comm, symcomm_stream_t stream);

/* Copies bytes from src to dst, both buffers of this rank's device (as
 * symcomm_put's src: on CUDA, memory of comm's GPU or page-locked host
 * memory; on the simulated backend, any memory of the process), in the
 * stream's order after its earlier work. Returns once the copy is queued;
 * dst == src copies nothing; otherwise overlapping buffers are refused
 * (INVALID_ARGUMENT). What a send to this rank itself would be: sends and
 * receives take a peer other than the caller. Not part of a group: it is
 * queued when called. */
SYMCOMM_API symcomm_result_t symcomm_copy(void *dst, const void *src, size_t bytes,
                                          symcomm_comm_t comm, symcomm_stream_t stream);

/* Between start and end, sends and receives of this thread are collected and
 * queued together at end, so that a rank may post several that would
 * otherwise wait on each other (every rank sends right and receives left).
 * Groups nest; the outermost end queues the work. A group may span several
 * communicators, each on its own stream; two communicators on one stream are
 * refused (INVALID_USAGE, nothing queued). At most 128 sends and receives with
 * other hosts per communicator and stream in one group (UNSUPPORTED beyond,
 * nothing of that batch queued). */
SYMCOMM_API symcomm_result_t symcomm_group_start(void);
SYMCOMM_API symcomm_result_t symcomm_group_end(void);

/* ---------------------------------------------------------------- collectives */

/* Collective over every rank of comm, stream-ordered (each returns once the
 * work is queued). Ranks must call the same collectives in the same order with
 * the same count, type, operation and root; a mismatch is caught cheaply and
 * reported as an error (SYMCOMM_CHECK=1 names both sides). Any alignment and
 * count (0 too) work; fp16 and bf16 accumulate in float; AVG on integers
 * truncates. In place: sendbuf == recvbuf, and for allgather sendbuf ==
 * recvbuf + rank * sendcount, for reducescatter recvbuf == sendbuf + rank *
 * recvcount (elements). Collectives of one communicator run in call order even
 * on different streams (the later waits for the earlier, as for an event;
 * not when either stream is being captured into a CUDA graph: order a
 * graph's launches against other collectives of comm yourself, as with NCCL);
 * once one failed on this rank, every later one fails (the ranks are out of
 * step): refused by the call when the failure is known by then, else when it
 * runs.
 * A collective whose buffers that peers touch lie in windows of comm runs
 * straight on them (no staging): all-reduce's input and output above the
 * one-shot size, all-gather's and all-to-all's output, reduce-scatter's
 * input (buffers that overlap stage, but for all-gather's input in its own
 * block or before it: sendbuf == recvbuf). That needs them at the same window
 * offsets on every rank, or windows on no rank; mixing is caught as a
 * mismatch (the call fails on every rank: "disagree"). Buffers whose
 * offsets differ from rank to rank, or that are windows on some ranks only,
 * go in windows registered with SYMCOMM_WINDOW_ANY_OFFSET, on which
 * collectives stage (a buffer that also lies in a window without the flag
 * runs on that one; the NCCL shim registers NCCL_WIN_DEFAULT windows so,
 * NCCL_WIN_COLL_SYMMETRIC ones without it). SYMCOMM_ALGO's
 * direct for all-gather, reduce-scatter and all-to-all stages anyway. SYMCOMM_ALGO,
 * SYMCOMM_ONESHOT_MAX_BYTES, SYMCOMM_COLL_SCRATCH_BYTES and SYMCOMM_COLL_BLOCKS
 * must be the same on every rank. Ranks on several hosts: every collective
 * works, through sends and receives between hosts (docs/ARCHITECTURE.md,
 * "Collectives across hosts"); there, ranks that call different collectives
 * whose messages happen to have the same sizes are not told (SYMCOMM_CHECK=1
 * catches it), and the order of the reduction is not rank order (every rank
 * gets the same bits). */
SYMCOMM_API symcomm_result_t symcomm_allreduce(const void *sendbuf, void *recvbuf, size_t count,
                                               symcomm_dtype_t dtype, symcomm_op_t op,
                                               symcomm_comm_t comm, symcomm_stream_t stream);
/* recvbuf matters on the root only. */
SYMCOMM_API symcomm_result_t symcomm_reduce(const void *sendbuf, void *recvbuf, size_t count,
                                            symcomm_dtype_t dtype, symcomm_op_t op, int root,
                                            symcomm_comm_t comm, symcomm_stream_t stream);
/* sendbuf matters on the root only. */
SYMCOMM_API symcomm_result_t symcomm_broadcast(const void *sendbuf, void *recvbuf, size_t count,
                                               symcomm_dtype_t dtype, int root,
                                               symcomm_comm_t comm, symcomm_stream_t stream);
/* recvbuf holds nranks * sendcount elements, rank r's at r * sendcount. */
SYMCOMM_API symcomm_result_t symcomm_allgather(const void *sendbuf, void *recvbuf, size_t sendcount,
                                               symcomm_dtype_t dtype, symcomm_comm_t comm,
                                               symcomm_stream_t stream);
/* sendbuf holds nranks * recvcount elements; rank r gets the reduction of block r. */
SYMCOMM_API symcomm_result_t symcomm_reducescatter(const void *sendbuf, void *recvbuf,
                                                   size_t recvcount, symcomm_dtype_t dtype,
                                                   symcomm_op_t op, symcomm_comm_t comm,
                                                   symcomm_stream_t stream);
/* Block r of sendbuf (count_per_peer elements) goes to rank r, where it lands
 * in block <sender> of recvbuf. */
SYMCOMM_API symcomm_result_t symcomm_alltoall(const void *sendbuf, void *recvbuf,
                                              size_t count_per_peer, symcomm_dtype_t dtype,
                                              symcomm_comm_t comm, symcomm_stream_t stream);

/* ---------------------------------------------------------------- parameters */

/* Every environment variable symcomm reads, for tools that list them. index runs
 * from 0 to symcomm_param_count()-1. *value is the current setting, NULL if unset.
 * Any output pointer may be NULL. The strings are constant or live until exit. */
SYMCOMM_API int symcomm_param_count(void);
SYMCOMM_API symcomm_result_t symcomm_param_info(int index, const char **name, const char **type,
                                                const char **default_value, const char **value,
                                                const char **doc);

#ifdef __cplusplus
}
#endif

#endif /* SYMCOMM_H */
