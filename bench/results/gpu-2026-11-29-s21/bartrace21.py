# Session 21: session 19's bartrace.py for trees from c065081 on (barriers take a->sync).
# Stamps (%globaltimer, block 0's thread 0) through the COLL program's barrier paths; averages printed every 2048 calls.
import sys
def edit(p, pairs):
    s = open(p).read()
    for a, b in pairs:
        assert s.count(a) == 1, (p, a[:70])
        s = s.replace(a, b)
    open(p, 'w').write(s)
edit('src/backend/cuda/cuda_runtime.cuh', [(
'''  sc_cuda_record_t *record;            /* the stream's failure record (may be 0) */
} sc_dev_ctx_t;
''','''  sc_cuda_record_t *record;            /* the stream's failure record (may be 0) */
#ifdef SC_BAR_TRACE
  uint64_t tr[24];
  uint32_t tr_bar, tr_polls;
#endif
} sc_dev_ctx_t;
#ifdef SC_BAR_TRACE
#define SC_TR(ctx, i) do { if (threadIdx.x == 0 && blockIdx.x == 0) (ctx)->tr[i] = sc_cuda_now_ns(); } while (0)
#define SC_TRB(ctx, j) do { if (threadIdx.x == 0 && blockIdx.x == 0 && (ctx)->tr_bar < 2) (ctx)->tr[4 + 4 * (ctx)->tr_bar + (j)] = sc_cuda_now_ns(); } while (0)
#define SC_TRB_NEXT(ctx) do { (ctx)->tr_bar++; } while (0)
#define SC_TR_POLL(ctx) do { (ctx)->tr_polls++; } while (0)
#else
#define SC_TR(ctx, i) do { } while (0)
#define SC_TRB(ctx, j) do { } while (0)
#define SC_TRB_NEXT(ctx) do { } while (0)
#define SC_TR_POLL(ctx) do { } while (0)
#endif
''')])
edit('src/backend/cuda/kernels/kernel.cuh', [(
'''static __device__ __forceinline__ void sc_cuda_error_clear(sc_dev_error_t *err) {''',
'''#ifdef SC_BAR_TRACE
__device__ unsigned long long sc_tr_sum[24], sc_tr_n, sc_tr_exit, sc_tr_polls;
static __device__ __forceinline__ void sc_tr_done(sc_dev_ctx_t *ctx) {
  if (threadIdx.x != 0 || blockIdx.x != 0)
    return;
  uint64_t end = sc_cuda_now_ns();
  ctx->tr[23] = end;
  if (sc_tr_exit != 0 && ctx->tr[0] > sc_tr_exit && ctx->tr[0] - sc_tr_exit < 200000 && ctx->tr[12] != 0) {
    sc_tr_sum[0] += ctx->tr[0] - sc_tr_exit;
    uint64_t prev = ctx->tr[0];
    for (int i = 1; i < 24; i++)
      if (ctx->tr[i] != 0) {
        sc_tr_sum[i] += ctx->tr[i] - prev;
        prev = ctx->tr[i];
      }
    sc_tr_polls += ctx->tr_polls;
    if (++sc_tr_n == 2048) {
      double n = (double)sc_tr_n;
      printf("BARTR gap %.0f init %.0f loads %.0f begin %.0f | b1 open %.0f arrive %.0f wait %.0f share %.0f | "
             "data1 %.0f data2 %.0f | b2 open %.0f arrive %.0f wait %.0f share %.0f | sync %.0f finish %.0f end %.0f | polls %.1f (ns, %d blocks)\\n",
             sc_tr_sum[0] / n, sc_tr_sum[1] / n, sc_tr_sum[2] / n, sc_tr_sum[3] / n, sc_tr_sum[4] / n,
             sc_tr_sum[5] / n, sc_tr_sum[6] / n, sc_tr_sum[7] / n, sc_tr_sum[16] / n, sc_tr_sum[17] / n,
             sc_tr_sum[8] / n, sc_tr_sum[9] / n, sc_tr_sum[10] / n, sc_tr_sum[11] / n, sc_tr_sum[18] / n,
             sc_tr_sum[19] / n, sc_tr_sum[23] / n, sc_tr_polls / n, (int)gridDim.x);
      for (int i = 0; i < 24; i++)
        sc_tr_sum[i] = 0;
      sc_tr_n = sc_tr_polls = 0;
    }
  }
  sc_tr_exit = sc_cuda_now_ns();
}
#define SC_TR_ENTRY() uint64_t tr_entry_ = sc_cuda_now_ns()
#define SC_TR_INIT(ctx) do { for (int i_ = 0; i_ < 24; i_++) (ctx).tr[i_] = 0; (ctx).tr[0] = tr_entry_; (ctx).tr_bar = (ctx).tr_polls = 0; } while (0)
#define SC_TR_END(ctx) sc_tr_done(&(ctx))
#else
#define SC_TR_ENTRY() do { } while (0)
#define SC_TR_INIT(ctx) do { } while (0)
#define SC_TR_END(ctx) do { } while (0)
#endif

static __device__ __forceinline__ void sc_cuda_error_clear(sc_dev_error_t *err) {'''),
('''    sc_dev_ctx_t ctx;                                                                              \\
    if (threadIdx.x == 0)                                                                          \\
      sc_cuda_error_clear(&err);                                                                   \\
    __syncthreads();                                                                               \\
    sc_cuda_ctx_init(&ctx, &err, &share, status, record);                                          \\
    if (EARLY_STOP)                                                                                \\
      sc_cuda_read_stop_early(&ctx, status);                                                       \\
    RUN(&ctx, (const ARGS_T *)&args, &err);                                                        \\
    __syncthreads();                                                                               \\
    if (threadIdx.x == 0)                                                                          \\
      sc_cuda_finish(&ctx, &err, status, record);                                                  \\
  }''','''    sc_dev_ctx_t ctx;                                                                              \\
    SC_TR_ENTRY();                                                                                 \\
    if (threadIdx.x == 0)                                                                          \\
      sc_cuda_error_clear(&err);                                                                   \\
    __syncthreads();                                                                               \\
    sc_cuda_ctx_init(&ctx, &err, &share, status, record);                                          \\
    SC_TR_INIT(ctx);                                                                               \\
    if (EARLY_STOP)                                                                                \\
      sc_cuda_read_stop_early(&ctx, status);                                                       \\
    SC_TR(&ctx, 1);                                                                                \\
    RUN(&ctx, (const ARGS_T *)&args, &err);                                                        \\
    __syncthreads();                                                                               \\
    if (threadIdx.x == 0)                                                                          \\
      sc_cuda_finish(&ctx, &err, status, record);                                                  \\
    SC_TR_END(ctx);                                                                                \\
  }''')])
edit('src/device/coll.h', [
('''  if (sc_dev_leader(ctx)) {
    /* Before arriving, which rings it: see sc_coll_barrier_wait. */
    rung = sc_dev_bell_read(&run->a->sync->bell);
    why = sc_coll_barrier_open(ctx, run->d, run->a->sync, run->block, e, err);
  }
  why = sc_dev_share(ctx, why); /* also orders the block's writes before the arrivals */
  if (why != 0)
    return why;
  sc_coll_arrive(ctx, run->d, run->block, e, tag);
  if (sc_dev_leader(ctx))
    why = sc_coll_barrier_wait(ctx, run->d, run->a->sync, run->block, e, tag, run->seq, rung, err);
  return sc_dev_share(ctx, why);''','''  if (sc_dev_leader(ctx)) {
    /* Before arriving, which rings it: see sc_coll_barrier_wait. */
    rung = sc_dev_bell_read(&run->a->sync->bell);
    why = sc_coll_barrier_open(ctx, run->d, run->a->sync, run->block, e, err);
  }
  why = sc_dev_share(ctx, why); /* also orders the block's writes before the arrivals */
  SC_TRB(ctx, 0);
  if (why != 0)
    return why;
  sc_coll_arrive(ctx, run->d, run->block, e, tag);
  SC_TRB(ctx, 1);
  if (sc_dev_leader(ctx))
    why = sc_coll_barrier_wait(ctx, run->d, run->a->sync, run->block, e, tag, run->seq, rung, err);
  SC_TRB(ctx, 2);
  why = sc_dev_share(ctx, why);
  SC_TRB(ctx, 3);
  SC_TRB_NEXT(ctx);
  return why;'''),
('''  sc_coll_reduce(ctx, run, out, srcs, shi - slo);
  sc_dev_sync(ctx); /* the block's result, read back by other threads */
  for (int k = 1; k < d->nranks; k++)
    sc_coll_copy(ctx, a, SC_COLL_AT(a->peer_out[sc_coll_peer(d, k)], lo + slo, e), out, shi - slo);''',
'''  sc_coll_reduce(ctx, run, out, srcs, shi - slo);
  sc_dev_sync(ctx); /* the block's result, read back by other threads */
  SC_TR(ctx, 16);
  for (int k = 1; k < d->nranks; k++)
    sc_coll_copy(ctx, a, SC_COLL_AT(a->peer_out[sc_coll_peer(d, k)], lo + slo, e), out, shi - slo);
  SC_TR(ctx, 17);'''),
('''  uint32_t path = sc_coll_path(a->algo, a->kind);
  if (!counted''','''  uint32_t path = sc_coll_path(a->algo, a->kind);
  SC_TR(ctx, 2);
  if (!counted'''),
('''  why = sc_dev_share(ctx, why);
  if (why == 0) {
    /* Each test of `paths` is a constant''','''  why = sc_dev_share(ctx, why);
  SC_TR(ctx, 3);
  if (why == 0) {
    /* Each test of `paths` is a constant'''),
('''  sc_dev_sync(ctx);
  if (sc_dev_leader(ctx))
    sc_coll_finish(ctx, &run, seq, why);
}''','''  sc_dev_sync(ctx);
  SC_TR(ctx, 18);
  if (sc_dev_leader(ctx))
    sc_coll_finish(ctx, &run, seq, why);
  SC_TR(ctx, 19);
}'''),
])
edit('src/device/barrier.h', [('''    int why = sc_dev_sleep(ctx, &mine->bell, seen);
    if (why == SC_DEV_PEER_LEFT) {
      departed = sc_dev_departed(ctx); /* look at the arrivals once more, then at these */''','''    SC_TR_POLL(ctx);
    int why = sc_dev_sleep(ctx, &mine->bell, seen);
    if (why == SC_DEV_PEER_LEFT) {
      departed = sc_dev_departed(ctx); /* look at the arrivals once more, then at these */''')])
