/* The COLL program: a whole collective in one launch (program.h's
 * sc_coll_args_t). Include after the backend's runtime.
 *
 * The paths that push (one-shot, two-shot, direct: all-gather,
 * reduce-scatter, all-to-all) store what each peer needs into that peer's
 * scratch, in an inbox per source rank (program.h's sc_coll_inbox_bytes),
 * then meet at a barrier, after which each rank reads only its own scratch:
 * on NVLink a GPU's stores to its peers carry more than its loads from them
 * when every GPU moves data at once (bench/gpu_probe/all_pairs.cu: 347
 * against 314 GB/s on 4 H200s), and nothing waits on a remote load's round
 * trip. Broadcast and split stage in their own scratch (the root's chunk;
 * split reduce: every rank's) and the others read it; the all-reduce on windows reduces from the peers'
 * inputs and pushes the result into their outputs. The scratch has two
 * halves used by alternate rounds of a call, each a staging and a result
 * area; large calls run in chunks of `per` elements, one per round.
 *
 * Blocks: block b handles slice b of every chunk (of every rank's part of it
 * for reduce-scatter and all-to-all), cut at 64-byte multiples, and meets
 * only block b of the other ranks, which handle the same slice: what it reads
 * of a peer, the peer's block b wrote before arriving at the barrier it waits
 * for. A block's barriers advance its epoch in device memory (the rank's
 * sc_coll_state_t, read when the block starts, written back when it ends), so
 * the same arguments launched again wait for the peers again; the count of
 * calls and rounds there is read by every block when it starts and advanced
 * by the last to end.
 *
 * Reuse: rounds alternate halves, within a call and from one call to the
 * next (the count of rounds is in device memory too). A half is written again
 * two rounds later, after the first barrier of the round in between, which a
 * rank passes only once every rank arrived there, done reading that half: in
 * the same call, the block's namesakes; across calls, whole launches, since a
 * rank starts a launch only once its previous one has ended (stream order),
 * so any of its blocks arriving in the new call says the rank read all it
 * will of the old one, whatever the blocks of either. What a round writes
 * before its first barrier goes to the half the previous round did not use,
 * its own or, pushed, a peer's. Before the barrier that checks a call's tag
 * a rank writes only to that half: a peer that disagrees reads nothing it
 * pushed.
 *
 * A kernel that returns leaves no peer reading or writing its caller's
 * buffers: the staged and pushed algorithms' peers touch only the scratch
 * (guarded as above, by the next call's first barrier); the paths on windows,
 * whose peers read the inputs (all-reduce, reduce-scatter) or write the
 * outputs (all-reduce, all-gather, all-to-all), end with a closing barrier
 * after their last load and store. */
#ifndef SC_DEVICE_COLL_H
#define SC_DEVICE_COLL_H

#include "device/barrier.h"
#include "device/reduce.h"

/* One block's run of a collective. */
typedef struct sc_coll_run {
  const sc_coll_args_t *a;
  const sc_coll_desc_t *d;
  uint32_t block, blocks;
  uint64_t epoch;  /* of the last barrier this block passed */
  uint64_t rounds; /* rounds of the communicator's collectives before this call */
  uint64_t round;  /* this call's rounds so far */
  uint64_t seq;    /* the communicator's collectives before this call */
  int tagged;      /* the call's tag went out (at its first barrier) */
  uint64_t inbox;  /* bytes of an inbox, on the paths that push */
} sc_coll_run_t;

/* Block b's barrier, run by every thread of the block (the leader checks
 * and waits, the first threads arrive): 0, or the error kind (err filled by
 * the leader). */
SC_DEV_FN int sc_coll_barrier(sc_dev_ctx_t *ctx, sc_coll_run_t *run, sc_dev_error_t *err) {
  uint64_t tag = run->tagged ? 0 : run->a->tag;
  run->tagged = 1;
  uint64_t e = ++run->epoch;
  int why = 0;
  uint32_t rung = 0;
  if (sc_dev_leader(ctx)) {
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
  return sc_dev_share(ctx, why);
}

/* n * i / parts without the product (which can pass 2^64). */
SC_DEV_FN uint64_t sc_coll_cut(uint64_t n, uint64_t i, uint64_t parts) {
  return n / parts * i + n % parts * i / parts;
}

/* Part i of `parts` of n elements, [lo, hi), in whole 64-byte units of
 * `elem`-byte elements (the last part may end short): balanced, in order. */
SC_DEV_FN void sc_coll_part(uint64_t n, uint64_t i, uint64_t parts, uint32_t elem, uint64_t *lo,
                            uint64_t *hi) {
  uint64_t unit = 64 / elem, units = (n + unit - 1) / unit;
  *lo = sc_coll_cut(units, i, parts) * unit;
  *hi = sc_coll_cut(units, i + 1, parts) * unit;
  if (*lo > n)
    *lo = n;
  if (*hi > n)
    *hi = n;
}

/* This block's slice of a chunk of n elements, in a call whose first (and
 * largest) chunk is `full`: its part of the full chunk, cut short by the
 * chunk. So a block stages to and reads from the same places in every round
 * of a call, which only its namesakes' barriers guard (the last, shorter
 * chunk may leave the last blocks nothing). */
SC_DEV_FN void sc_coll_slice(const sc_coll_run_t *run, uint64_t full, uint64_t n, uint64_t *lo,
                             uint64_t *hi) {
  sc_coll_part(full, run->block, run->blocks, run->a->elem, lo, hi);
  if (*lo > n)
    *lo = n;
  if (*hi > n)
    *hi = n;
}

/* The chunk of the round starting at element `off`. */
SC_DEV_FN uint64_t sc_coll_chunk(const sc_coll_args_t *a, uint64_t off) {
  return a->count - off < a->per ? a->count - off : a->per;
}

/* The half of the scratch the block's current round uses: rounds alternate,
 * within a call and from one call to the next. */
SC_DEV_FN int sc_coll_half(const sc_coll_run_t *run) { return (int)((run->rounds + run->round) % 2); }

/* Rank r's staging area of a half, as mapped here; its result area follows. */
SC_DEV_FN char *sc_coll_stage(const sc_coll_desc_t *d, int r, int half) {
  return d->scratch[r] + (uint64_t)half * 2 * d->area;
}

SC_DEV_FN char *sc_coll_result(const sc_coll_desc_t *d, int r, int half) {
  return sc_coll_stage(d, r, half) + d->area;
}

/* Elements, by every thread of the block. */
SC_DEV_FN void sc_coll_copy(sc_dev_ctx_t *ctx, const sc_coll_args_t *a, void *dst, const void *src,
                            uint64_t n) {
  if (n > 0 && dst != src)
    sc_dev_copy(ctx, dst, src, (size_t)(n * a->elem));
}

/* dst = every rank's source in rank order, n elements, by every thread. */
SC_DEV_FN void sc_coll_reduce(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, void *dst,
                              const void *const *srcs, uint64_t n) {
  if (n > 0)
    sc_dev_reduce(ctx, dst, srcs, run->d->nranks, (size_t)n, run->a->dtype, run->a->op,
                  run->d->nranks);
}

#define SC_COLL_AT(p, i, elem) ((char *)(p) + (uint64_t)(i) * (elem))

/* A round of a call as a block sees it: where its chunk starts, the block's
 * slice of it, and the half of the scratch it uses. */
typedef struct sc_coll_round {
  uint64_t off, lo, hi;
  int half;
} sc_coll_round_t;

/* Starts a round of broadcast or split (the paths that stage and pull) at
 * element `off`: the block's slice and half; then, when `stage`, its slice
 * of this rank's input into the staging area; then the round's first
 * barrier. 0, or the error kind. */
SC_DEV_FN int sc_coll_round(sc_dev_ctx_t *ctx, sc_coll_run_t *run, sc_dev_error_t *err, uint64_t off,
                            int stage, sc_coll_round_t *rd) {
  const sc_coll_args_t *a = run->a;
  const sc_coll_desc_t *d = run->d;
  uint32_t e = a->elem;
  rd->off = off;
  sc_coll_slice(run, sc_coll_chunk(a, 0), sc_coll_chunk(a, off), &rd->lo, &rd->hi);
  rd->half = sc_coll_half(run);
  if (stage)
    sc_coll_copy(ctx, a, SC_COLL_AT(sc_coll_stage(d, d->me, rd->half), rd->lo, e),
                 SC_COLL_AT(a->sendbuf, off + rd->lo, e), rd->hi - rd->lo);
  return sc_coll_barrier(ctx, run, err);
}

/* The k-th rank after this one: pushes to every peer go in this order, so
 * that the ranks, which push at the same pace, each start on another peer
 * instead of all on rank 0 (whose links would carry every rank's first
 * part at once). */
SC_DEV_FN int sc_coll_peer(const sc_coll_desc_t *d, int k) { return (d->me + k) % d->nranks; }

/* Rank `to`'s inbox for what rank `from` pushes in a half (the push paths:
 * program.h's sc_coll_inbox_bytes). */
SC_DEV_FN char *sc_coll_inbox(const sc_coll_run_t *run, int to, int from, int half) {
  return sc_coll_stage(run->d, to, half) + (uint64_t)from * run->inbox;
}

/* All-reduce one-shot, and reduce to a root: each rank pushes its chunk into
 * the inbox for it of every rank that reduces (all-reduce: every peer;
 * reduce: the root); after the barrier those reduce their own input and
 * their inboxes, in rank order. */
SC_DEV_FN int sc_coll_oneshot(sc_dev_ctx_t *ctx, sc_coll_run_t *run, sc_dev_error_t *err) {
  const sc_coll_args_t *a = run->a;
  const sc_coll_desc_t *d = run->d;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  uint32_t e = a->elem;
  int all = a->kind == SC_COLL_ALLREDUCE;
  for (uint64_t off = 0; off < a->count; off += a->per, run->round++) {
    uint64_t lo, hi;
    sc_coll_slice(run, sc_coll_chunk(a, 0), sc_coll_chunk(a, off), &lo, &hi);
    int half = sc_coll_half(run);
    const char *mine = SC_COLL_AT(a->sendbuf, off + lo, e);
    for (int k = 1; k < d->nranks; k++) {
      int q = sc_coll_peer(d, k);
      if (all || q == a->root)
        sc_coll_copy(ctx, a, SC_COLL_AT(sc_coll_inbox(run, q, d->me, half), lo, e), mine, hi - lo);
    }
    int why = sc_coll_barrier(ctx, run, err);
    if (why != 0)
      return why;
    if (!all && d->me != a->root)
      continue;
    for (int r = 0; r < d->nranks; r++)
      srcs[r] = r == d->me ? (const void *)mine : SC_COLL_AT(sc_coll_inbox(run, d->me, r, half), lo, e);
    sc_coll_reduce(ctx, run, SC_COLL_AT(a->recvbuf, off + lo, e), srcs, hi - lo);
  }
  return 0;
}

/* Two-shot: a chunk is cut into a share per rank, each share into a piece
 * per block. Piece `block` of share q of a chunk of n elements (the call's
 * first chunk: `full`), [*lo, *hi) of the chunk; *slo: where the share
 * starts. Cut from the full chunk, cut short by this one: a block pushes to
 * and reads from the same places in every round, as sc_coll_slice. */
SC_DEV_FN void sc_coll_piece(const sc_coll_run_t *run, uint64_t full, uint64_t n, int q,
                             uint64_t *slo, uint64_t *lo, uint64_t *hi) {
  uint64_t shi;
  sc_coll_part(full, (uint64_t)q, (uint64_t)run->d->nranks, run->a->elem, slo, &shi);
  sc_coll_part(shi - *slo, run->block, run->blocks, run->a->elem, lo, hi);
  *lo += *slo;
  *hi += *slo;
  if (*lo > n)
    *lo = n;
  if (*hi > n)
    *hi = n;
}

/* Two-shot's first step of the round at `off`: this block's piece of every
 * other rank's share of this rank's input, into that rank's inbox for it. */
SC_DEV_FN void sc_coll_twoshot_push(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, uint64_t off,
                                    int half) {
  const sc_coll_args_t *a = run->a;
  uint64_t full = sc_coll_chunk(a, 0), n = sc_coll_chunk(a, off), slo, lo, hi;
  for (int k = 1; k < run->d->nranks; k++) {
    int q = sc_coll_peer(run->d, k);
    sc_coll_piece(run, full, n, q, &slo, &lo, &hi);
    sc_coll_copy(ctx, a, SC_COLL_AT(sc_coll_inbox(run, q, run->d->me, half), lo - slo, a->elem),
                 SC_COLL_AT(a->sendbuf, off + lo, a->elem), hi - lo);
  }
}

/* Two-shot's last step of the round at `off`: the other ranks' reduced
 * pieces, from this rank's result area into the output. */
SC_DEV_FN void sc_coll_twoshot_drain(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, uint64_t off,
                                     int half) {
  const sc_coll_args_t *a = run->a;
  uint64_t full = sc_coll_chunk(a, 0), n = sc_coll_chunk(a, off), slo, lo, hi;
  for (int r = 0; r < run->d->nranks; r++) {
    if (r == run->d->me)
      continue;
    sc_coll_piece(run, full, n, r, &slo, &lo, &hi);
    sc_coll_copy(ctx, a, SC_COLL_AT(a->recvbuf, off + lo, a->elem),
                 SC_COLL_AT(sc_coll_result(run->d, run->d->me, half), lo, a->elem), hi - lo);
  }
}

/* Two-shot all-reduce, round by round: push the shares (barrier); reduce
 * this rank's share from its input and its inboxes into its output and push
 * the result into every other rank's result area (barrier); the next
 * round's shares go out before this round's results are copied from the
 * result area into the output, so that the links stay busy. Halves: what a
 * round pushes lands in the half its receivers last read two rounds before,
 * and they finished that before the barriers this rank has passed since. */
SC_DEV_FN int sc_coll_twoshot(sc_dev_ctx_t *ctx, sc_coll_run_t *run, sc_dev_error_t *err) {
  const sc_coll_args_t *a = run->a;
  const sc_coll_desc_t *d = run->d;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  uint32_t e = a->elem;
  uint64_t prev = 0, slo, lo, hi;
  int prev_half = -1;
  for (uint64_t off = 0; off < a->count; off += a->per, run->round++) {
    int half = sc_coll_half(run);
    sc_coll_twoshot_push(ctx, run, off, half);
    if (prev_half >= 0)
      sc_coll_twoshot_drain(ctx, run, prev, prev_half);
    int why = sc_coll_barrier(ctx, run, err);
    if (why != 0)
      return why;
    sc_coll_piece(run, sc_coll_chunk(a, 0), sc_coll_chunk(a, off), d->me, &slo, &lo, &hi);
    for (int r = 0; r < d->nranks; r++)
      srcs[r] = r == d->me ? SC_COLL_AT(a->sendbuf, off + lo, e)
                           : SC_COLL_AT(sc_coll_inbox(run, d->me, r, half), lo - slo, e);
    char *out = SC_COLL_AT(a->recvbuf, off + lo, e);
    sc_coll_reduce(ctx, run, out, srcs, hi - lo);
    sc_dev_sync(ctx); /* the block's result, read back by other threads */
    for (int k = 1; k < d->nranks; k++)
      sc_coll_copy(ctx, a, SC_COLL_AT(sc_coll_result(d, sc_coll_peer(d, k), half), lo, e), out, hi - lo);
    why = sc_coll_barrier(ctx, run, err);
    if (why != 0)
      return why;
    prev = off;
    prev_half = half;
  }
  if (prev_half >= 0)
    sc_coll_twoshot_drain(ctx, run, prev, prev_half);
  return 0;
}

/* Two-shot straight on the ranks' buffers (windows): after the first barrier
 * (every input ready, every output free) each rank reduces its share of the
 * block's slice from every rank's input into its output and pushes it into
 * the others' outputs; the closing barrier says every share arrived. */
SC_DEV_FN int sc_coll_windows(sc_dev_ctx_t *ctx, sc_coll_run_t *run, sc_dev_error_t *err) {
  const sc_coll_args_t *a = run->a;
  const sc_coll_desc_t *d = run->d;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  uint32_t e = a->elem;
  uint64_t lo, hi, slo, shi;
  sc_coll_slice(run, a->count, a->count, &lo, &hi);
  sc_coll_part(hi - lo, (uint64_t)d->me, (uint64_t)d->nranks, e, &slo, &shi);
  int why = sc_coll_barrier(ctx, run, err);
  if (why != 0)
    return why;
  for (int r = 0; r < d->nranks; r++)
    srcs[r] = SC_COLL_AT(a->peer[r].in, lo + slo, e);
  char *out = SC_COLL_AT(a->recvbuf, lo + slo, e);
  sc_coll_reduce(ctx, run, out, srcs, shi - slo);
  sc_dev_sync(ctx); /* the block's result, read back by other threads */
  for (int k = 1; k < d->nranks; k++)
    sc_coll_copy(ctx, a, SC_COLL_AT(a->peer[sc_coll_peer(d, k)].out, lo + slo, e), out, shi - slo);
  /* The caller may use its buffers once this returns: every peer is done
   * reading its input and writing its output. */
  return sc_coll_barrier(ctx, run, err);
}

/* All-gather, reduce-scatter and all-to-all straight on windows: after the
 * first barrier (every input ready, every output free) all-gather and
 * all-to-all push this rank's part for each rank into that rank's output
 * (the rank's block me; in place, see sc_coll_on_windows), reduce-scatter reduces this rank's block from every
 * rank's input (rank order); the closing barrier says every part arrived
 * and no rank reads an input any more. Nothing staged, no rounds. */
SC_DEV_FN int sc_coll_windows_direct(sc_dev_ctx_t *ctx, sc_coll_run_t *run, sc_dev_error_t *err) {
  const sc_coll_args_t *a = run->a;
  const sc_coll_desc_t *d = run->d;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  uint32_t e = a->elem;
  uint64_t lo, hi, mine = (uint64_t)d->me * a->count;
  sc_coll_slice(run, a->count, a->count, &lo, &hi);
  /* All-gather: this rank's part into its own block of its output first (no
   * peer writes that block), pushed from there after the barrier: its input
   * may lie in another block of the output (sendbuf == recvbuf), which that
   * block's rank writes once it passed the barrier. */
  char *own = SC_COLL_AT(a->peer[d->me].out, mine + lo, e);
  if (a->kind == SC_COLL_ALLGATHER)
    sc_coll_copy(ctx, a, own, SC_COLL_AT(a->sendbuf, lo, e), hi - lo);
  int why = sc_coll_barrier(ctx, run, err); /* its sync also orders the copy before the pushes */
  if (why != 0)
    return why;
  if (a->kind == SC_COLL_REDUCESCATTER) {
    for (int r = 0; r < d->nranks; r++)
      srcs[r] = SC_COLL_AT(a->peer[r].in, mine + lo, e);
    sc_coll_reduce(ctx, run, SC_COLL_AT(a->recvbuf, lo, e), srcs, hi - lo);
  } else {
    int blockwise = a->kind == SC_COLL_ALLTOALL;
    for (int k = blockwise ? 0 : 1; k < d->nranks; k++) {
      int q = sc_coll_peer(d, k);
      sc_coll_copy(ctx, a, SC_COLL_AT(a->peer[q].out, mine + lo, e),
                   blockwise ? SC_COLL_AT(a->sendbuf, (uint64_t)q * a->count + lo, e) : own, hi - lo);
    }
  }
  return sc_coll_barrier(ctx, run, err);
}

/* Broadcast: the root stages; after the barrier every other rank copies from
 * the root's staging area, and the root from its input. */
SC_DEV_FN int sc_coll_broadcast(sc_dev_ctx_t *ctx, sc_coll_run_t *run, sc_dev_error_t *err) {
  const sc_coll_args_t *a = run->a;
  const sc_coll_desc_t *d = run->d;
  uint32_t e = a->elem;
  int root = d->me == a->root;
  sc_coll_round_t rd;
  for (uint64_t off = 0; off < a->count; off += a->per, run->round++) {
    int why = sc_coll_round(ctx, run, err, off, root, &rd);
    if (why != 0)
      return why;
    const void *from = root ? SC_COLL_AT(a->sendbuf, off + rd.lo, e)
                            : SC_COLL_AT(sc_coll_stage(d, a->root, rd.half), rd.lo, e);
    sc_coll_copy(ctx, a, SC_COLL_AT(a->recvbuf, off + rd.lo, e), from, rd.hi - rd.lo);
  }
  return 0;
}

/* Split broadcast and reduce: the block's slice of each round is cut into
 * one part per rank other than the root (helper h: the h-th of them), so
 * that the root's link carries the slice once instead of once per peer.
 * Rank r's part, [*plo, *phi) of the slice [lo, hi); -1 for the root. */
SC_DEV_FN int sc_coll_helper_part(const sc_coll_run_t *run, int r, uint64_t lo, uint64_t hi,
                                  uint64_t *plo, uint64_t *phi) {
  int root = run->a->root;
  if (r == root)
    return -1;
  int h = r < root ? r : r - 1;
  sc_coll_part(hi - lo, (uint64_t)h, (uint64_t)(run->d->nranks - 1), run->a->elem, plo, phi);
  *plo += lo;
  *phi += lo;
  return h;
}

/* Split broadcast and reduce, round by round: the root stages (reduce:
 * every rank); after the barrier each other rank puts its part into its own
 * result area (broadcast: copied from the root's staging area; reduce:
 * reduced from every rank's); after a second barrier the parts are gathered
 * from the result areas (its own locally) by every other rank (broadcast)
 * or by the root (reduce), while a broadcast's root copies its input. */
SC_DEV_FN int sc_coll_split(sc_dev_ctx_t *ctx, sc_coll_run_t *run, sc_dev_error_t *err) {
  const sc_coll_args_t *a = run->a;
  const sc_coll_desc_t *d = run->d;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  uint32_t e = a->elem;
  int reduce = a->kind == SC_COLL_REDUCE, root = d->me == a->root;
  uint64_t plo, phi;
  sc_coll_round_t rd;
  for (uint64_t off = 0; off < a->count; off += a->per, run->round++) {
    int why = sc_coll_round(ctx, run, err, off, reduce || root, &rd);
    if (why != 0)
      return why;
    if (sc_coll_helper_part(run, d->me, rd.lo, rd.hi, &plo, &phi) >= 0) {
      char *part = SC_COLL_AT(sc_coll_result(d, d->me, rd.half), plo, e);
      for (int r = 0; reduce && r < d->nranks; r++)
        srcs[r] = SC_COLL_AT(sc_coll_stage(d, r, rd.half), plo, e);
      if (reduce)
        sc_coll_reduce(ctx, run, part, srcs, phi - plo);
      else
        sc_coll_copy(ctx, a, part, SC_COLL_AT(sc_coll_stage(d, a->root, rd.half), plo, e),
                     phi - plo);
    }
    why = sc_coll_barrier(ctx, run, err);
    if (why != 0)
      return why;
    if (root && !reduce)
      sc_coll_copy(ctx, a, SC_COLL_AT(a->recvbuf, off + rd.lo, e),
                   SC_COLL_AT(a->sendbuf, off + rd.lo, e), rd.hi - rd.lo);
    for (int r = 0; root == reduce && r < d->nranks; r++)
      if (sc_coll_helper_part(run, r, rd.lo, rd.hi, &plo, &phi) >= 0)
        sc_coll_copy(ctx, a, SC_COLL_AT(a->recvbuf, off + plo, e),
                     SC_COLL_AT(sc_coll_result(d, r, rd.half), plo, e), phi - plo);
  }
  return 0;
}

/* All-gather, all-to-all and reduce-scatter, the round at `off` (the
 * block's slice [lo, hi) of the chunk): what this rank sends each peer (its
 * input; all-to-all and reduce-scatter: the peer's block of it) into the
 * peer's inbox for it; all-gather and all-to-all copy their own part into
 * the output. */
SC_DEV_FN void sc_coll_direct_push(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, uint64_t off,
                                   uint64_t lo, uint64_t hi, int half) {
  const sc_coll_args_t *a = run->a;
  int me = run->d->me, blockwise = a->kind != SC_COLL_ALLGATHER;
  uint32_t e = a->elem;
  for (int k = 0; k < run->d->nranks; k++) {
    int q = sc_coll_peer(run->d, k);
    const char *from = SC_COLL_AT(a->sendbuf, (blockwise ? (uint64_t)q * a->count : 0) + off + lo, e);
    if (q != me)
      sc_coll_copy(ctx, a, SC_COLL_AT(sc_coll_inbox(run, q, me, half), lo, e), from, hi - lo);
    else if (a->kind != SC_COLL_REDUCESCATTER)
      sc_coll_copy(ctx, a, SC_COLL_AT(a->recvbuf, (uint64_t)me * a->count + off + lo, e), from,
                   hi - lo);
  }
}

/* ... and once every rank pushed: all-gather and all-to-all copy each
 * peer's part from its inbox into that peer's block of the output;
 * reduce-scatter reduces this rank's block of its input with the inboxes,
 * in rank order. */
SC_DEV_FN void sc_coll_direct_drain(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, uint64_t off,
                                    uint64_t lo, uint64_t hi, int half) {
  const sc_coll_args_t *a = run->a;
  const sc_coll_desc_t *d = run->d;
  const void *srcs[SC_MAX_LOCAL_RANKS];
  uint32_t e = a->elem;
  if (a->kind == SC_COLL_REDUCESCATTER) {
    for (int r = 0; r < d->nranks; r++)
      srcs[r] = r == d->me ? SC_COLL_AT(a->sendbuf, (uint64_t)r * a->count + off + lo, e)
                           : SC_COLL_AT(sc_coll_inbox(run, d->me, r, half), lo, e);
    sc_coll_reduce(ctx, run, SC_COLL_AT(a->recvbuf, off + lo, e), srcs, hi - lo);
    return;
  }
  for (int r = 0; r < d->nranks; r++)
    if (r != d->me)
      sc_coll_copy(ctx, a, SC_COLL_AT(a->recvbuf, (uint64_t)r * a->count + off + lo, e),
                   SC_COLL_AT(sc_coll_inbox(run, d->me, r, half), lo, e), hi - lo);
}

/* All-gather, all-to-all and reduce-scatter, round by round: push, barrier,
 * drain; the next round's pushes go out before this round's drain, so that
 * the links stay busy (halves: see sc_coll_twoshot). */
SC_DEV_FN int sc_coll_direct(sc_dev_ctx_t *ctx, sc_coll_run_t *run, sc_dev_error_t *err) {
  const sc_coll_args_t *a = run->a;
  uint64_t prev = 0, plo = 0, phi = 0;
  int prev_half = -1;
  for (uint64_t off = 0; off < a->count; off += a->per, run->round++) {
    uint64_t lo, hi;
    sc_coll_slice(run, sc_coll_chunk(a, 0), sc_coll_chunk(a, off), &lo, &hi);
    int half = sc_coll_half(run);
    sc_coll_direct_push(ctx, run, off, lo, hi, half);
    if (prev_half >= 0)
      sc_coll_direct_drain(ctx, run, prev, plo, phi, prev_half);
    int why = sc_coll_barrier(ctx, run, err);
    if (why != 0)
      return why;
    prev = off;
    plo = lo;
    phi = hi;
    prev_half = half;
  }
  if (prev_half >= 0)
    sc_coll_direct_drain(ctx, run, prev, plo, phi, prev_half);
  return 0;
}

/* What every path checks of its arguments, given the descriptor's rank
 * count, rank and state pointer (read by the caller). Loads first, then
 * one expression with no branch: a chain of `||` between loads of the
 * descriptor made each load wait for the one before (the LL call's SASS). */
SC_DEV_FN int sc_coll_common_ok(const sc_coll_args_t *a, uint32_t blocks, int n, int me,
                                const sc_coll_state_t *state) {
  int reduces = a->kind == SC_COLL_ALLREDUCE || a->kind == SC_COLL_REDUCE ||
                a->kind == SC_COLL_REDUCESCATTER;
  int rooted = a->kind == SC_COLL_REDUCE || a->kind == SC_COLL_BROADCAST;
  return (n >= 1) & (n <= SC_MAX_LOCAL_RANKS) & (me >= 0) & (me < n) & (a->state == state) &
         (blocks >= 1) & (blocks <= SC_COLL_MAX_BLOCKS) & (a->kind >= 0) &
         (a->kind < SC_COLL_KIND_COUNT) &
         ((a->elem == 1) | (a->elem == 2) | (a->elem == 4) | (a->elem == 8)) &
         ((reduces == 0) | sc_dev_reduce_ok(n, a->dtype, a->op, n)) &
         ((rooted == 0) | ((a->root >= 0) & (a->root < n)));
}

/* The LL path's own rules: this rank has an LL region (ll_me), at most
 * SC_LL_MAX_RANKS ranks, and the call's lines fit a source's part (no
 * division: elem is 1, 2, 4 or 8, sc_coll_common_ok). */
SC_DEV_FN int sc_coll_ll_fits(const sc_coll_args_t *a, const uint64_t *ll_me, int n, uint64_t lines) {
  uint32_t shift = a->elem == 8 ? 3 : a->elem == 4 ? 2 : a->elem == 2 ? 1 : 0;
  return (ll_me != 0) & (n <= SC_LL_MAX_RANKS) & (lines > SC_COLL_MAX_BLOCKS) &
         (a->count <= ((lines - SC_COLL_MAX_BLOCKS) * SC_LL_LINE_DATA) >> shift);
}

/* Arguments this program can run with (the host made them; a check, not a
 * filter of user input). */
SC_DEV_FN int sc_coll_args_ok(const sc_coll_args_t *a, uint32_t blocks) {
  const sc_coll_desc_t *d = a->desc;
  if (d == 0)
    return 0;
  int n = d->nranks, me = d->me;
  if (!sc_coll_common_ok(a, blocks, n, me, d->state))
    return 0;
  if (a->algo == SC_ALGO_WINDOWS)
    return a->npeers == (uint32_t)n &&
           (a->kind == SC_COLL_ALLREDUCE || a->kind == SC_COLL_ALLGATHER ||
            a->kind == SC_COLL_REDUCESCATTER || a->kind == SC_COLL_ALLTOALL);
  if (a->algo == SC_ALGO_SPLIT && ((a->kind != SC_COLL_REDUCE && a->kind != SC_COLL_BROADCAST) ||
                                   d->nranks < 2))
    return 0;
  if (a->algo == SC_ALGO_LL)
    return sc_coll_ll_fits(a, d->ll[me], n, d->ll_lines);
  return a->count == 0 ||
         (a->per >= 1 && a->per <= sc_coll_per_max(d->area, d->nranks, sc_coll_path(a->algo, a->kind), a->elem));
}

/* The leader at the end of a block: on success the block's epoch, and the
 * call and its rounds counted once its last block ends (all blocks run the
 * same rounds); on failure, every later collective
 * of this rank fails on entry (and the host refuses them: `failed`). */
SC_DEV_FN void sc_coll_finish(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, uint64_t seq, int why) {
  sc_coll_state_t *st = run->a->state;
  if (why != 0) {
    if (sc_dev_load_own(&st->broken) == 0) {
      sc_dev_store_own(&st->broken, seq + 1);
      sc_dev_store(run->d->failed, seq + 1);
    }
    return;
  }
  sc_dev_store_own(&st->block[run->block].epoch, run->epoch);
  uint32_t ended = sc_dev_blocks(ctx) > 1 ? sc_dev_count_own32(&st->exits) : 0;
  if (ended + 1 == sc_dev_blocks(ctx)) { /* every block read the counts when it started */
    if (ended > 0)
      sc_dev_store32(&st->exits, 0);
    sc_dev_store_own(&st->rounds, run->rounds + run->round);
    sc_dev_store_own(&st->calls, seq + 1);
  }
}

#include "device/coll_ll.h" /* after sc_coll_args_ok and sc_coll_finish, which it uses */

/* A collective, on a kernel that holds the paths `paths`: a constant on
 * CUDA; on the simulated backend the one path whose kernel the CUDA backend
 * would pick. A call whose path is not among them fails (BAD_ARGS). */
SC_DEV_FN void sc_dev_coll_run_on(sc_dev_ctx_t *ctx, const sc_coll_args_t *a, sc_dev_error_t *err,
                                  uint32_t paths) {
  if (paths == SC_COLL_PATH_LL) { /* its own start and end (coll_ll.h) */
    sc_coll_ll_call(ctx, a, err, a->kind, -1, -1);
    return;
  }
  /* The counters first, read while the descriptor that the check below
   * needs is on its way (a chain of dependent loads is what a small call
   * waits for). */
  sc_coll_state_t *st = a->state;
  uint32_t block = sc_dev_block(ctx);
  int counted = st != 0 && block < SC_COLL_MAX_BLOCKS;
  uint64_t epoch = counted ? sc_dev_load_own(&st->block[block].epoch) : 0;
  uint64_t rounds = counted ? sc_dev_load_own(&st->rounds) : 0;
  uint64_t seq = counted ? sc_dev_load_own(&st->calls) : 0;
  /* The stop word's copy in device memory, as the LL path reads it: block
   * 0's read of the word itself, in host memory, put 0.8 us into every
   * call of these paths (4 H200s, docs/PERFORMANCE.md, session 19). */
  uint32_t stop_copy = counted && a->stopped != 0 ? sc_dev_load_poll32(a->stopped) : 0;
  uint32_t path = sc_coll_path(a->algo, a->kind);
  if (!counted || (path & paths) == 0 || !sc_coll_args_ok(a, sc_dev_blocks(ctx))) {
    if (sc_dev_leader(ctx)) {
      err->kind = SC_DEV_BAD_ARGS;
      err->a = SC_PROGRAM_COLL;
    }
    return;
  }
  const sc_coll_desc_t *d = a->desc;
  sc_coll_run_t run;
  run.a = a;
  run.d = d;
  run.block = block;
  run.blocks = sc_dev_blocks(ctx);
  run.epoch = epoch; /* written back after the barriers */
  run.rounds = rounds;
  run.round = 0;
  run.tagged = 0;
  run.seq = seq;
  run.inbox = sc_coll_inbox_bytes(d->area, d->nranks, path);
  sc_guard_t guard = d->guard;
  guard.call = SC_CALL_COLL + a->kind;
  guard.seq = seq;
  /* A launch that starts between the stop and its copy's arrival runs as
   * one that started before the stop: its waits look at the word itself. */
  sc_dev_enter(ctx, &guard);
  int why = stop_copy != 0 && sc_dev_leader(ctx) ? sc_dev_stopped(ctx) : 0;
  if (sc_dev_leader(ctx)) {
    err->kind = SC_DEV_OK;
    uint64_t broken = sc_dev_load_own(&st->broken);
    if (why != 0) { /* the communicator stopped: do not arrive, and keep the others out */
      sc_coll_give_up(ctx, d, run.block, run.epoch + 1, why, err);
    } else if (broken != 0) { /* the ranks are out of step since then */
      err->kind = SC_DEV_OUT_OF_STEP;
      err->a = (int64_t)(broken - 1);
    }
    why = err->kind;
  }
  why = sc_dev_share(ctx, why);
  if (why == 0) {
    /* Each test of `paths` is a constant: the paths left out are no code. */
    if (path == SC_COLL_PATH_WINDOWS && (paths & SC_COLL_PATH_WINDOWS))
      why = a->kind == SC_COLL_ALLREDUCE ? sc_coll_windows(ctx, &run, err)
                                         : sc_coll_windows_direct(ctx, &run, err);
    else if (path == SC_COLL_PATH_SPLIT && (paths & SC_COLL_PATH_SPLIT))
      why = sc_coll_split(ctx, &run, err);
    else if (path == SC_COLL_PATH_ONESHOT && (paths & SC_COLL_PATH_ONESHOT))
      why = sc_coll_oneshot(ctx, &run, err);
    else if (path == SC_COLL_PATH_TWOSHOT && (paths & SC_COLL_PATH_TWOSHOT))
      why = sc_coll_twoshot(ctx, &run, err);
    else if (path == SC_COLL_PATH_BROADCAST && (paths & SC_COLL_PATH_BROADCAST))
      why = sc_coll_broadcast(ctx, &run, err);
    else if (paths & SC_COLL_PATH_DIRECT)
      why = sc_coll_direct(ctx, &run, err);
  }
  /* The tag goes out at a call's first barrier even when it has no rounds. */
  if (why == 0 && !run.tagged)
    why = sc_coll_barrier(ctx, &run, err);
  sc_dev_sync(ctx);
  if (sc_dev_leader(ctx))
    sc_coll_finish(ctx, &run, seq, why);
}

/* A launch queued on a stream that stopped before it ran (the simulated
 * backend discards it): the peers it would have met fail at once, and so does
 * every later collective of this rank, which would be a step behind. */
SC_DEV_FN void sc_dev_coll_abandon(const sc_coll_args_t *a) {
  const sc_coll_desc_t *d = a->desc;
  if (d == 0 || d->me < 0 || d->me >= d->nranks || d->nranks > SC_MAX_LOCAL_RANKS)
    return;
  sc_coll_mark(d, sc_dev_relay_pack(0, d->me, -1));
  sc_coll_state_t *st = d->state;
  uint64_t seq = sc_dev_load(&st->calls);
  if (sc_dev_load(&st->broken) == 0) {
    sc_dev_store(&st->broken, seq + 1);
    sc_dev_store(d->failed, seq + 1);
  }
}

#endif
