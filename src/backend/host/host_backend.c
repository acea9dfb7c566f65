/* The simulated-GPU backend: "device" memory is shared host memory (memfd),
 * a stream is a worker thread, a device program is a function call on it,
 * and waits sleep on futexes: they poll first only for SYMCOMM_SPIN_US, which
 * is 0 unless every rank has a core for each of its threads (many ranks often
 * share few cores), then yield a few times (host_runtime.h). */
#include "backend/host/host_internal.h"

/* A block per MiB, at most 32: blocks run one after another here, so each
 * adds its barriers and nothing else. */
static uint32_t sc_host_coll_blocks(size_t bytes) {
  size_t b = bytes >> 20;
  return b < 1 ? 1 : b > 32 ? 32 : (uint32_t)b;
}

/* A block per 1024 lines (8 KiB), up to 8: blocks run one after another
 * here, each waiting for its own lines. */
static uint32_t sc_host_ll_blocks(size_t bytes, int nranks) {
  (void)nranks;
  size_t b = bytes >> 13;
  return b < 1 ? 1 : b > 8 ? 8 : (uint32_t)b;
}

static size_t sc_host_ll_max_bytes(int nranks) {
  (void)nranks;
  return 64 << 10;
}

const sc_backend_ops_t sc_backend_host = {
    .size = sizeof(sc_backend_ops_t),
    .name = "host",
    .coll_blocks = sc_host_coll_blocks,
    .ll_blocks = sc_host_ll_blocks,
    .ll_max_bytes = sc_host_ll_max_bytes,
    .scratch_bytes = 16 << 20,
    .oneshot_max_bytes = 128 << 10,
    /* Blocks run one after another here: lanes only cost launches. */
    .p2p_chunk_bytes = 512 << 10,
    .p2p_slots = 4,
    .p2p_lanes = 1,
    .p2p_lane_bytes = 1 << 20,
    /* A rendezvous costs two futex wakes: 16 KiB copied line by line costs less. */
    .p2p_eager_bytes = 16 << 10,

    .available = sc_host_available,
    .device_open = sc_host_device_open,
    .device_close = sc_host_device_close,
    .granularity = sc_host_granularity,
    .device_busid = sc_host_device_busid,
    .ptr_check = sc_host_ptr_check,

    .mem_alloc = sc_host_mem_alloc,
    .mem_export = sc_host_mem_export,
    .mem_import = sc_host_mem_import,
    .mem_ptr = sc_host_mem_ptr,
    .mem_size = sc_host_mem_size,
    .mem_free = sc_host_mem_free,

    .host_alloc = sc_host_host_alloc,
    .host_free = sc_host_host_free,

    .dev_alloc = sc_host_dev_alloc,
    .dev_free = sc_host_dev_free,
    .upload = sc_host_upload,
    .copy_word = sc_host_copy_word,
    .copy_word_settle = sc_host_copy_word_settle,

    .stream_create = sc_host_stream_create,
    .stream_wrap = sc_host_stream_wrap,
    .stream_capturing = sc_host_stream_capturing,
    .stream_destroy = sc_host_stream_destroy,
    .stream_drain = sc_host_stream_drain,
    .stream_synchronize = sc_host_stream_synchronize,
    .stream_query = sc_host_stream_query,
    .stream_error = sc_host_stream_error,

    .event_create = sc_host_event_create,
    .event_destroy = sc_host_event_destroy,
    .event_record = sc_host_event_record,
    .stream_wait_event = sc_host_stream_wait_event,
    .event_query = sc_host_event_query,
    .event_synchronize = sc_host_event_synchronize,

    .copy = sc_host_copy,
    .launch = sc_host_launch,

    .bell_ring = sc_host_bell_ring,
    .host_reaches_buffers = sc_host_reaches_buffers,
};
