/* The device interface: everything symcomm asks of a GPU, as one const ops
 * table per backend, chosen when a communicator opens its device
 * (SYMCOMM_BACKEND; a stream is used only with communicators of its backend).
 * Layers above never call CUDA or the simulated device directly.
 *
 *   device     whether the backend can run here, opening a device, its bus id,
 *              whether a pointer is a buffer its programs may use
 *   memory     exportable allocations: allocate, export as an fd, import a
 *              peer's fd, free (unmap, then release); host memory the device
 *              reads and writes
 *   streams    ordered queues of work; events mark points in them
 *   work       stream-ordered: copy, and launch of a device program
 *              (src/device/program.h: SIGNAL, WAIT, P2P, COLL), each a
 *              whole protocol step in one launch
 *
 * Waits that run in a stream are bounded: by the communicator's abort word and
 * by a timeout; a wait that gives up stops its stream with a sentence that
 * stream_error() returns. */
#ifndef SC_BACKEND_BACKEND_H
#define SC_BACKEND_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/program.h"
#include "util/error.h"

typedef struct sc_device sc_device_t; /* the backend bound to this rank's device */
typedef struct sc_stream sc_stream_t;
typedef struct sc_event sc_event_t;
typedef struct sc_devmem sc_devmem_t; /* an exportable allocation, or a peer's, mapped here */

/* How a launch runs: its grid, and the communicator it belongs to. Each of
 * `blocks` blocks runs the program with its own block index
 * (sc_dev_block); a block synchronizes only with the block of the same
 * index on other ranks, never with another block of its own launch, so a
 * backend may run the blocks in parallel (CUDA) or one after another (the
 * simulated backend). */
typedef struct sc_launch {
  uint32_t blocks;               /* >= 1 */
  struct sc_dev_status *status;  /* the communicator's status block: where a failure of the
                                    launch is published (NULL: none) */
  bool early;                    /* the launch may start before the work ahead of it on the
                                    stream ends, where the backend's kernel for the program
                                    waits for it itself (sc_dev_wait_previous; CUDA: the LL
                                    collectives and the P2P program, programmatic dependent
                                    launch) */
  uint32_t threads;              /* threads a block, for work too small to use the program's
                                    own count (CUDA: its table's); 0: that count. Backends
                                    whose blocks are one thread ignore it */
} sc_launch_t;

/* One block, for a program that is a single protocol step. */
#define SC_LAUNCH_ONE(status) (&(sc_launch_t){1, (status), false, 0})

typedef struct sc_backend_ops {
  size_t size; /* sizeof(sc_backend_ops_t) the backend was built with */
  const char *name;
  /* ---- how the collectives use it (src/coll/coll_enqueue.c) */
  /* Blocks for a collective moving `bytes` in all, 1 to SC_COLL_MAX_BLOCKS,
   * where SYMCOMM_COLL_BLOCKS does not say: the simulated backend runs a
   * launch's blocks one after another, a GPU in parallel. */
  uint32_t (*coll_blocks)(size_t bytes);
  /* SYMCOMM_COLL_SCRATCH_BYTES when it is not set. */
  size_t scratch_bytes;
  /* SYMCOMM_ONESHOT_MAX_BYTES when it is not set (all-reduce size x ranks). */
  size_t oneshot_max_bytes;
  /* All-reduce between 2 ranks runs one-shot at every size: it reads what
   * two-shot reads of the peer, with one barrier fewer (measured on GPUs). */
  bool pair_oneshot;
  /* LL collectives (device/coll_ll.h) on a host's `nranks` ranks: the
   * blocks of a call whose ranks push `bytes` to each peer, 1 to
   * SC_COLL_MAX_BLOCKS (SYMCOMM_COLL_BLOCKS aside), and
   * SYMCOMM_LL_MAX_BYTES when it is not set. */
  uint32_t (*ll_blocks)(size_t bytes, int nranks);
  size_t (*ll_max_bytes)(int nranks);
  /* A launch's blocks run at the same time (CUDA), not one after another
   * (the simulated backend): send/recv gives each direction of a peer its
   * own group of blocks. */
  bool blocks_at_once;
  /* ---- send/recv within a host (src/transport/p2p.c): SYMCOMM_P2P_CHUNK_BYTES,
   * _SLOTS, _LANES, _LANE_BYTES and _EAGER_BYTES when they are not set */
  size_t p2p_chunk_bytes;
  uint32_t p2p_slots, p2p_lanes;
  size_t p2p_lane_bytes;
  size_t p2p_eager_bytes;

  /* ---- device */
  /* OK when this backend can run here; else UNSUPPORTED, quietly, with the
   * reason in `why` (no driver, no device, a driver too old). */
  sc_result_t (*available)(char *why, size_t len);
  /* device_index counts the devices this process sees (CUDA_VISIBLE_DEVICES). */
  sc_result_t (*device_open)(int device_index, sc_device_t **device);
  /* Releases the communicator's hold; the device lives on while a stream,
   * event or allocation made with it does. */
  void (*device_close)(sc_device_t *device);
  /* Sizes of exportable allocations are multiples of this. */
  size_t (*granularity)(sc_device_t *device);
  /* The PCI bus id of a real device, lower case "dddd:bb:dd.f"; "" for a
   * simulated one (its bus id comes from the host's topology). */
  sc_result_t (*device_busid)(sc_device_t *device, char *buf, size_t len);
  /* OK when [ptr, ptr + bytes) may be a data buffer of this device's
   * programs; else INVALID_ARGUMENT with a sentence naming `what` (CUDA: a
   * host pointer, or another device's memory, where the driver can tell). */
  sc_result_t (*ptr_check)(sc_device_t *device, const void *ptr, size_t bytes, const char *what);

  /* ---- exportable memory: zeroed when allocated; the host cannot read or
   * write it on CUDA (device memory) */
  sc_result_t (*mem_alloc)(sc_device_t *device, size_t bytes, sc_devmem_t **mem);
  /* A new fd naming the allocation, for another process of this host (sent
   * with SCM_RIGHTS); the caller closes it. */
  sc_result_t (*mem_export)(sc_devmem_t *mem, int *fd);
  /* Maps a peer's allocation from the fd it exported; fd stays the caller's. */
  sc_result_t (*mem_import)(sc_device_t *device, int fd, size_t bytes, sc_devmem_t **mem);
  void *(*mem_ptr)(sc_devmem_t *mem);
  size_t (*mem_size)(sc_devmem_t *mem);
  /* Unmaps, then releases: the order the device requires. */
  void (*mem_free)(sc_devmem_t *mem);

  /* ---- host memory the device can read and write (abort words, error records) */
  sc_result_t (*host_alloc)(sc_device_t *device, size_t bytes, void **ptr);
  void (*host_free)(sc_device_t *device, void *ptr);

  /* ---- device memory of this rank only (protocol state, descriptors that
   * programs read): zeroed when allocated; `upload` copies host data into it
   * and returns when done. Setup-time only: never on the enqueue path. */
  sc_result_t (*dev_alloc)(sc_device_t *device, size_t bytes, void **ptr);
  void (*dev_free)(sc_device_t *device, void *ptr);
  sc_result_t (*upload)(sc_device_t *device, void *dst, const void *src, size_t bytes);
  /* A 32-bit word of host memory from host_alloc copied into device memory
   * from dev_alloc, queued and not waited for: the stop word's device copy,
   * which the host writes when the communicator stops, maybe while programs
   * that wait for the stop fill the device. So on a queue of the backend's
   * own that nothing else waits in (CUDA: a non-blocking stream, the copy
   * engine); a failure is logged, not returned (the programs' waits read
   * the host word itself). A later dev_free waits for the copies in flight,
   * so dst and then src may be freed once nothing copies the word again. */
  void (*copy_word)(sc_device_t *device, uint32_t *dst, const uint32_t *src);
  /* Waits, a second at most, for the copies copy_word queued so far to
   * land, so that a program starting after it returns reads the stop
   * (symcomm_comm_abort: work queued before the abort and started after it
   * fails). Called under the communicators' watch lock, as copy_word is.
   * Logs, never fails. */
  void (*copy_word_settle)(sc_device_t *device);

  /* ---- streams and events */
  sc_result_t (*stream_create)(sc_device_t *device, sc_stream_t **stream);
  /* A stream of the caller's (a cudaStream_t) used without owning it:
   * destroy forgets it and leaves the native stream alone. UNSUPPORTED on a
   * backend without native streams. */
  sc_result_t (*stream_wrap)(sc_device_t *device, void *native, sc_stream_t **stream);
  /* Whether work queued on the stream now goes into a graph being captured
   * (CUDA stream capture) rather than running: legal to ask during capture. */
  bool (*stream_capturing)(sc_stream_t *stream);
  /* Waits for symcomm's work queued on it (as stream_drain) until the
   * deadline, then frees what is symcomm's. Work still running then (held
   * by the caller's own work on a wrapped stream, or a wait that keeps
   * seeing progress) is left to finish: a WARN names the stream and what
   * is pending, and what that work may still use is kept, never freed
   * under it (the simulated backend's worker frees itself when done; on
   * CUDA the device stays open). */
  void (*stream_destroy)(sc_stream_t *stream, int64_t deadline_ms);
  /* Waits until the work symcomm queued on the stream so far has ended: on
   * a stream of the caller's (stream_wrap), up to symcomm's own last launch
   * or copy there, not the caller's later work. OK or the stream's failure
   * once it ended; SYMCOMM_IN_PROGRESS at the deadline, quietly, with a
   * sentence that says what was still pending on which stream. */
  sc_result_t (*stream_drain)(sc_stream_t *stream, int64_t deadline_ms);
  /* OK when done; the stream's error if it stopped; TIMEOUT at the deadline
   * (ms since the monotonic epoch, SC_DEADLINE_NEVER for none). */
  sc_result_t (*stream_synchronize)(sc_stream_t *stream, int64_t deadline_ms);
  /* OK, SYMCOMM_IN_PROGRESS, or the error that stopped the stream. */
  sc_result_t (*stream_query)(sc_stream_t *stream);
  /* The sentence of the error that stopped the stream ("" if none). */
  const char *(*stream_error)(sc_stream_t *stream);

  sc_result_t (*event_create)(sc_device_t *device, sc_event_t **event);
  void (*event_destroy)(sc_event_t *event);
  /* The event completes when the stream's work queued so far is done. */
  sc_result_t (*event_record)(sc_event_t *event, sc_stream_t *stream);
  /* Work queued on stream afterwards waits for the event. */
  sc_result_t (*stream_wait_event)(sc_stream_t *stream, sc_event_t *event);
  sc_result_t (*event_query)(sc_event_t *event);
  sc_result_t (*event_synchronize)(sc_event_t *event, int64_t deadline_ms);

  /* ---- stream-ordered work */
  sc_result_t (*copy)(sc_stream_t *stream, void *dst, const void *src, size_t bytes);
  /* Runs a device program (src/device/program.h) with a copy of its
   * arguments (kernel parameters: at most SC_LAUNCH_ARGS_MAX bytes). */
  sc_result_t (*launch)(sc_stream_t *stream, sc_program_t program, const void *args,
                        size_t args_bytes, const sc_launch_t *how);

  /* ---- host threads that serve programs (the network's progress thread) */
  /* Rings a bell after the host wrote what programs wait for: the simulated
   * backend wakes its sleepers; on CUDA, whose kernels poll, nothing. */
  void (*bell_ring)(sc_device_t *device, sc_doorbell_t *bell);
  /* Whether the host can read and write this backend's buffers directly
   * (the simulated backend's "device" memory is host memory): then the
   * network sends from and receives into them without staging copies. */
  bool (*host_reaches_buffers)(sc_device_t *device);
} sc_backend_ops_t;

/* CUDA's limit on kernel parameters without a newer driver's extension. */
#define SC_LAUNCH_ARGS_MAX 4096

/* The backend built into the library. */
extern const sc_backend_ops_t sc_backend_host;

/* The CUDA backend is a shared object of its own, libsymcomm_cuda.so, loaded
 * at run time (backend_select.c): its one exported symbol, named here, takes
 * what it needs of this library (errors and logging, so that its sentences
 * become the caller's) and returns its ops table, or NULL when `services`
 * comes from another build. */
/* What the two objects must agree on beyond the ops table: the layouts the
 * host code and the kernels share (arguments, descriptors, counters, status
 * blocks, error records) and the programs' numbering. A backend built from
 * other sources refuses a library whose value differs. */
#define SC_BACKEND_ABI_MIX(h, v) (((h) ^ (uint64_t)(v)) * 0x100000001b3ull)
#define SC_BACKEND_ABI                                                                             \
  SC_BACKEND_ABI_MIX(                                                                              \
      SC_BACKEND_ABI_MIX(                                                                          \
          SC_BACKEND_ABI_MIX(                                                                      \
              SC_BACKEND_ABI_MIX(                                                                  \
                  SC_BACKEND_ABI_MIX(                                                              \
                      SC_BACKEND_ABI_MIX(SC_BACKEND_ABI_MIX(SC_BACKEND_ABI_MIX(                     \
                                                                0xcbf29ce484222325ull,             \
                                                                sizeof(sc_backend_ops_t)),         \
                                                            sizeof(sc_coll_args_t)),               \
                                         sizeof(sc_coll_desc_t)),                                  \
                      sizeof(sc_coll_sync_t)),                                                     \
                  sizeof(sc_coll_state_t)),                                                        \
              sizeof(sc_dev_status_t)),                                                            \
          sizeof(sc_dev_error_t)),                                                                 \
      SC_PROGRAM_COUNT * 1000 + SC_MAX_LOCAL_RANKS)

typedef struct sc_backend_services {
  size_t size; /* sizeof(sc_backend_services_t) */
  uint64_t abi; /* SC_BACKEND_ABI of the library */
  sc_result_t (*raise)(sc_result_t result, int subsys, const char *file, int line, const char *fmt,
                       ...) __attribute__((format(printf, 5, 6)));
  sc_result_t (*pass)(sc_result_t result, const char *text);
  void (*log)(sc_log_level_t level, int subsys, const char *file, int line, const char *fmt, ...)
      __attribute__((format(printf, 5, 6)));
  bool (*log_enabled)(sc_log_level_t level, int subsys);
} sc_backend_services_t;

#define SC_BACKEND_CUDA_LIBRARY "libsymcomm_cuda.so"
#define SC_BACKEND_CUDA_ENTRY "symcomm_cuda_backend"
typedef const sc_backend_ops_t *(*sc_backend_entry_t)(const sc_backend_services_t *services);

/* The backend `want` (a communicator's config.backend) or, when it is NULL,
 * SYMCOMM_BACKEND asks for (auto|host|cuda): auto is cuda when a
 * usable GPU is present, else host (and says why at INFO). UNSUPPORTED names
 * what is missing. */
sc_result_t sc_backend_select(const char *want, const sc_backend_ops_t **ops);

#endif
