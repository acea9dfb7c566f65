/* The CUDA backend's ops table and the one symbol libsymcomm_cuda.so exports. */
#include "backend/cuda/cuda_internal.h"

/* cuda_services.c: what libsymcomm.so lends this object. */
void sc_cuda_services_set(const sc_backend_services_t *services);

static sc_result_t sc_cuda_available(char *why, size_t len) {
  if (sc_cuda_driver(why, len) != NULL)
    return SYMCOMM_OK;
  return SYMCOMM_ERR_UNSUPPORTED; /* quiet: backend_select words it */
}

/* A block per 4 KiB, 4 to 128: where 2 H200s moved an all-reduce fastest
 * (docs/PERFORMANCE.md, issue 9); blocks are nearly free once no block reads
 * host memory at the start (the stop word's device copy instead). */
static uint32_t sc_cuda_coll_blocks(size_t bytes) {
  size_t blocks = bytes >> 12;
  return blocks < 4 ? 4 : blocks > 128 ? 128 : (uint32_t)blocks;
}

/* LL on 2 GPUs: one block below 8 KiB a rank pushes (2 blocks for 4 KiB
 * took 0.3-0.6 us more than one), then a block per 2 KiB, up to 64, and 128
 * from 512 KiB; LL up to 1 MiB. 2 H200s, -R 1, against the rule before (a
 * block per 8 KiB, up to 8; LL to 64 KiB): all-gather of 256 KiB 17.6 us ->
 * 9.2, all-reduce of 32 KiB 12.1 -> 9.3, broadcast of 128 KiB 13.1 -> 7.6,
 * reduce-scatter of 512 KiB 18.9 -> 11.8; 64 blocks against 32 from 128 KiB
 * a rank up: 0.4-3.6 us less (docs/PERFORMANCE.md, session 16); LL on 128
 * blocks against the barrier paths from 512 KiB a peer: all-reduce of 1 MiB
 * 19.5 -> 15.0, all-gather of 2 MiB 20.1 -> 14.2, reduce of 1 MiB 18.0 ->
 * 10.9 (session 19).
 * On 3 and 4 GPUs: one block below 16 KiB, a block per 2 KiB up to 32, then
 * a block per 4 KiB up to 128 from 256 KiB; LL up to 512 KiB. 4 H200s,
 * against the rule before (a block per 8 KiB, up to 8; LL to 64 KiB):
 * all-reduce of 16 KiB 9.4 -> 7.2 us, of 128 KiB 21.3 -> 10.3, of 512 KiB
 * 24.6 -> 18.2; all-gather of 2 MiB 26.3 -> 18.5; reduce-scatter of 1 MiB
 * 25.0 -> 13.0 (session 19). More ranks keep the rule measured on 4 before:
 * each line goes to every peer, so LL's traffic grows with them. */
static uint32_t sc_cuda_ll_blocks(size_t bytes, int nranks) {
  size_t b, most;
  if (nranks <= 2) {
    b = bytes < (8 << 10) ? 1 : bytes >> 11;
    most = bytes >= (512 << 10) ? 128 : 64;
  } else if (nranks <= 4) {
    b = bytes < (16 << 10) ? 1 : bytes < (256 << 10) ? bytes >> 11 : bytes >> 12;
    most = bytes < (256 << 10) ? 32 : 128;
  } else {
    b = bytes >> 13;
    most = 8;
  }
  return b < 1 ? 1 : b > most ? (uint32_t)most : (uint32_t)b;
}

static size_t sc_cuda_ll_max_bytes(int nranks) {
  return nranks <= 2 ? 1 << 20 : nranks <= 4 ? 512 << 10 : 64 << 10;
}

static const sc_backend_ops_t sc_backend_cuda = {
    .size = sizeof(sc_backend_ops_t),
    .name = "cuda",
    .coll_blocks = sc_cuda_coll_blocks,
    /* 32 MiB rounds: each round costs barriers. 4 H200s, all-reduce of
     * plain buffers, 512 MiB: 2487 us against 2675 with 64 MiB (NCCL 2308),
     * 128 MiB 672 against 700 (611); 256 MiB no better (docs/PERFORMANCE.md,
     * session 12). Every communicator, splits too, maps this much. */
    .scratch_bytes = 128 << 20,
    /* 4 H200s: one-shot beat two-shot up to 1 MiB a rank (24 us against 38
     * at 128 KiB: one barrier fewer), two-shot won from 2 MiB */
    .oneshot_max_bytes = 4 << 20,
    .pair_oneshot = true,
    .ll_blocks = sc_cuda_ll_blocks,
    .ll_max_bytes = sc_cuda_ll_max_bytes,
    /* One block copies a peer's message at a few tens of GB/s over NVLink
     * (docs/PERFORMANCE.md): a large message runs in up to 32 parts at
     * once (fewer where the 128 blocks of a launch must go round more
     * peers: 21 on 4 ranks, 9 on 8), each lane with two slots of the ring
     * (sc_p2p_params raises the slots to 64, 42, 32). 2 H200s, sendrecv
     * into a window, session 26 (k4, one host): 512 MiB 1497-1524 us with
     * 32 lanes against 1617-1624 with 16 (NCCL 1483), 64 MiB 206-211
     * against 218-222 (203); alike below 4 MiB. Eagerly up to 64 KiB: 15.7-
     * 15.9 us there against 17.8-17.9 through the rendezvous (k1; 32 KiB and
     * less unchanged). */
    .blocks_at_once = true,
    .p2p_chunk_bytes = 256 << 10,
    .p2p_slots = 32,
    .p2p_lanes = 32,
    .p2p_lane_bytes = 64 << 10,
    .p2p_eager_bytes = 64 << 10,

    .available = sc_cuda_available,
    .device_open = sc_cuda_device_open,
    .device_close = sc_cuda_device_close,
    .granularity = sc_cuda_granularity,
    .device_busid = sc_cuda_device_busid,
    .ptr_check = sc_cuda_ptr_check,

    .mem_alloc = sc_cuda_mem_alloc,
    .mem_export = sc_cuda_mem_export,
    .mem_import = sc_cuda_mem_import,
    .mem_ptr = sc_cuda_mem_ptr,
    .mem_size = sc_cuda_mem_size,
    .mem_free = sc_cuda_mem_free,

    .host_alloc = sc_cuda_host_alloc,
    .host_free = sc_cuda_host_free,

    .dev_alloc = sc_cuda_dev_alloc,
    .dev_free = sc_cuda_dev_free,
    .upload = sc_cuda_upload,
    .copy_word = sc_cuda_copy_word,
    .copy_word_settle = sc_cuda_copy_word_settle,

    .stream_create = sc_cuda_stream_create,
    .stream_wrap = sc_cuda_stream_wrap,
    .stream_capturing = sc_cuda_stream_capturing,
    .stream_destroy = sc_cuda_stream_destroy,
    .stream_drain = sc_cuda_stream_drain,
    .stream_synchronize = sc_cuda_stream_synchronize,
    .stream_query = sc_cuda_stream_query,
    .stream_error = sc_cuda_stream_error,

    .event_create = sc_cuda_event_create,
    .event_destroy = sc_cuda_event_destroy,
    .event_record = sc_cuda_event_record,
    .stream_wait_event = sc_cuda_stream_wait_event,
    .event_query = sc_cuda_event_query,
    .event_synchronize = sc_cuda_event_synchronize,

    .copy = sc_cuda_copy,
    .launch = sc_cuda_launch,

    .bell_ring = sc_cuda_bell_ring,
    .host_reaches_buffers = sc_cuda_reaches_buffers,
};

__attribute__((visibility("default"))) const sc_backend_ops_t *
symcomm_cuda_backend(const sc_backend_services_t *services) {
  if (services == NULL || services->size != sizeof(sc_backend_services_t) ||
      services->abi != SC_BACKEND_ABI)
    return NULL; /* another build: shared layouts may differ */
  sc_cuda_services_set(services);
  return &sc_backend_cuda;
}
