/* The LL protocol (SC_ALGO_LL) of the collectives, for small sizes, where
 * the round trips of a barrier cost more than moving the data. Included by
 * device/coll.h.
 *
 * Every rank (a broadcast: its root alone; a reduce: every rank but the
 * root, to the root alone) pushes its input (reduce-scatter and all-to-all:
 * block r of it to rank r) to every peer, 8 bytes to a 16-byte line (each 4 data bytes in one word with
 * the call's flag: sc_dev_ll_store), into its own part of the peer's LL
 * region; then it waits for each line it needs (every peer's; a broadcast's:
 * the root's; a reduce's other ranks: none) to carry the flag, and reduces
 * the lines in rank order, its own from its input (all-gather and
 * all-to-all: puts each rank's line in that rank's block of the output;
 * broadcast: the root's line in the output). No barrier and no fence: a word
 * whose flag is the call's holds the call's data, because flag and data
 * travel in one store.
 *
 * Calls alternate halves of the region, by the call's number (the rank's
 * count of collectives, which every rank advances alike). Rank p writes into
 * half h of rank q again two calls later: p has then finished the call in
 * between, which needed q's lines of it, which q pushed only once it had
 * finished the call that read half h (a launch may start before the one
 * ahead of it on the stream ended, but pushes nothing before it waited for
 * it: sc_dev_wait_previous). The call in between needed q's tag line at least,
 * which every rank pushes and waits for, also in a broadcast or a reduce,
 * whose ranks other than the one with the data need nothing else. The flag, the
 * call's number plus one, tells this call's lines from those of two calls
 * before.
 *
 * The tag: block b pushes the call's tag in tag line b to every peer with
 * the data, and its last threads check every peer's while the others wait
 * for data (one thread a block, as on the simulated backend: after its
 * data); a wait for a line that is not there yet looks at that peer's tag
 * line too, so that ranks calling different things fail with DISAGREE
 * instead of waiting for lines that never come. So a disagreement may be
 * found once lines of the other call were put in the output: a call that
 * fails leaves its output undefined (a round of tags before any data wait
 * took 1.4 us a call on 4 H200s: the trace in docs/PERFORMANCE.md). A wait
 * gives up as a barrier's does (this communicator stopped, a rank left, no
 * progress for the timeout, another rank's mark), marks the others, and the
 * leader writes one failure of its block.
 *
 * A reduce's ranks other than the root need nothing but the tags: they end
 * once their lines are out, without waiting for the root to have them all.
 * So where the root fails (it waited past the timeout for a rank that was
 * stopped, say), the others have already reported the call done: their part
 * of it was, and the root's mark fails their next collective. Making them
 * wait for a word from the root would make a loop of reduces as slow as one
 * of barriers (two trips between ranks a call instead of one). The same
 * holds for every collective where a rank's stop or another rank's mark is
 * what fails the call: both are looked at once the rank's lines are out, so
 * the others may have what they need and finish the call; the mark this
 * rank leaves fails their next. A rank whose wait for a line gives up fails
 * the call, and its mark fails the others' (this call where they still
 * wait, else their next). A stopped rank itself never finishes a call the
 * others reported failed (the mark read after its pushes).
 *
 * The flag repeats after 2^32 - 1 calls, so a line of a half that no call
 * wrote for a multiple of 2 x (2^32 - 1) calls (some 8.6 billion: hours of
 * back-to-back calls, with a larger call before them all) would pass for
 * the current call's if the peer's push had not landed yet: accepted, and
 * noted as a follow-up (clear the region at the wrap). The line's format:
 * device/ll_line.h. */
#ifndef SC_DEVICE_COLL_LL_H
#define SC_DEVICE_COLL_LL_H

#include "device/barrier.h"
#include "device/ll_layout.h"
#include "device/reduce.h"

/* A failed wait: the error kind and the rank it waited for, in one int that
 * sc_dev_any can pass around. */
#define SC_LL_WHY(kind, rank) ((kind) | (rank) << 8)
/* A kind of SC_LL_WHY that is no error kind: the rank's tag line holds
 * another tag than this call's. */
#define SC_LL_TAG_DIFFERS 250
/* Another: a rank's mark was there once this rank's lines were out. */
#define SC_LL_MARKED 251
/* Another: an earlier collective failed here, so this one is refused. */
#define SC_LL_REFUSED 252

/* What a rank pushes to rank r: block r of its input for reduce-scatter and
 * all-to-all (blockwise), all of it otherwise. */
SC_DEV_FN const void *sc_ll_input(const sc_coll_args_t *a, int blockwise, int r) {
  return blockwise ? SC_COLL_AT(a->sendbuf, (uint64_t)r * a->count, a->elem) : a->sendbuf;
}

/* Waits until `line`, from rank src, carries `flag`; its 8 data bytes go to
 * *v. 0, or SC_LL_WHY of the failure. Looked at on the first miss, when the
 * bell rang (the simulated backend's marks, arrivals and pushes ring it)
 * and every 64 polls: another rank's mark; src arriving at a barrier of
 * this call, which says it runs another collective than this one
 * (DISAGREE), unless its line is there after all (it arrived at the next
 * call's, having pushed this one's lines first); src's tag line holding
 * another tag. */
SC_DEV_FN int sc_ll_wait(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, const uint64_t *line, int src,
                         uint32_t flag, uint64_t *v) {
  const sc_coll_desc_t *d = run->d;
  sc_coll_sync_t *mine = run->a->sync;
  const uint64_t *tag_line = sc_ll_line(d, d->me, (int)(run->seq % 2), src, run->block);
  uint64_t departed = 0, mark;
  uint32_t polls = 0, last = sc_dev_bell_read(&mine->bell);
  int elsewhere = 0;
  for (;;) {
    uint32_t seen = sc_dev_bell_read(&mine->bell);
    if (sc_ll_read(line, flag, v))
      return 0;
    if (elsewhere)
      return SC_LL_WHY(SC_DEV_DISAGREE, src);
    int gone = departed >> src & 1; /* checked after its arrival: it may have left from there */
    /* Also at the first miss: what rang the bell before this wait read it
     * (a mark, src's tag) would not ring it again. */
    if (gone || seen != last || (polls++ & 63) == 0) {
      last = seen;
      /* The loads all in flight at once: the marks, src's arrival at a
       * barrier of this block, src's tag line. */
      uint64_t marks = 0, tw0, tw1, theirs;
      for (int s = 0; s < d->nranks; s++)
        marks |= sc_dev_load_poll(&mine->fail[s]);
      uint64_t arrived = sc_dev_load_poll(&mine->arrive[run->block][src]);
      sc_dev_ll_load(tag_line, &tw0, &tw1);
      int s = marks != 0 ? sc_coll_marked(d, mine, &mark) : -1;
      if (s >= 0) {
        sc_dev_acquire(); /* what the marking rank saw: the line, if it came */
        if (sc_ll_read(line, flag, v))
          return 0;
        return SC_LL_WHY(SC_DEV_COLL_FAILED, s);
      }
      if (arrived > run->epoch) {
        sc_dev_acquire(); /* then one more look at the line */
        elsewhere = 1;
        continue;
      }
      /* src runs another call of this number, whose lines may never
       * include this one: its tag line says so. */
      if (sc_ll_decode(tw0, tw1, flag, &theirs) && theirs != run->a->tag)
        return SC_LL_WHY(SC_LL_TAG_DIFFERS, src);
      if (gone)
        return SC_LL_WHY(SC_DEV_PEER_LEFT, src);
    }
    int why = sc_dev_sleep(ctx, &mine->bell, seen);
    if (why == SC_DEV_PEER_LEFT)
      departed = sc_dev_departed(ctx); /* one more look at the line, then at these */
    else if (why != 0)
      return SC_LL_WHY(why, src);
  }
}

/* Line `line` from rank src: a look, SC_DEV_QUICK_POLLS more at once (a
 * line pushed at the same time as this rank's lands a little later; the
 * simulated backend sleeps on its bell instead), then sc_ll_wait. 0 with
 * the line's data in *v, or SC_LL_WHY of the failed wait. */
SC_DEV_FN int sc_ll_get(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, const uint64_t *line, int src,
                        uint32_t flag, uint64_t *v) {
  for (int i = 0; i <= SC_DEV_QUICK_POLLS; i++)
    if (sc_ll_read(line, flag, v))
      return 0;
  return sc_ll_wait(ctx, run, line, src, flag, v);
}

/* The ranks in the mask `from` (never this rank): line l of each, from this
 * rank's region (`mine`, parts of `lines` lines, half h), in w[r]. First one
 * load of each, all in flight at once, then a wait for those not there yet.
 * 0, or SC_LL_WHY of the first failed wait. Every index of w is a constant
 * once the loops are unrolled, so that the caller's w stays in registers. */
SC_DEV_FN int sc_ll_gather(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, uint64_t *mine, uint64_t lines,
                           int h, uint64_t l, uint32_t flag, uint64_t *w, uint32_t from) {
  int n = run->d->nranks;
  uint64_t w0[SC_LL_MAX_RANKS] = {0}, w1[SC_LL_MAX_RANKS] = {0};
  SC_DEV_UNROLL for (int r = 0; r < SC_LL_MAX_RANKS; r++)
    if (from >> r & 1)
      sc_dev_ll_load(sc_ll_at(mine, n, lines, h, r, l), &w0[r], &w1[r]);
  uint32_t missing = 0;
  SC_DEV_UNROLL for (int r = 0; r < SC_LL_MAX_RANKS; r++)
    if ((from >> r & 1) && !sc_ll_decode(w0[r], w1[r], flag, &w[r]))
      missing |= 1u << r;
  for (int r = 0; missing != 0; r++) {
    if ((missing >> r & 1) == 0)
      continue;
    missing &= ~(1u << r);
    uint64_t v = 0;
    int why = sc_ll_get(ctx, run, sc_ll_at(mine, n, lines, h, r, l), r, flag, &v);
    if (why != 0)
      return why;
    SC_DEV_UNROLL for (int k = 0; k < SC_LL_MAX_RANKS; k++)
      if (k == r)
        w[k] = v;
  }
  return 0;
}

/* Entry r of a (r < SC_LL_MAX_RANKS, else 0) with constant indices only. */
SC_DEV_FN uint64_t sc_ll_pick(const uint64_t *a, int r) {
  uint64_t v = 0;
  SC_DEV_UNROLL for (int k = 0; k < SC_LL_MAX_RANKS; k++)
    if (k == r)
      v = a[k];
  return v;
}

SC_DEV_FN uint64_t *sc_ll_pick_region(uint64_t *const *ll, int r) {
  uint64_t *v = 0;
  SC_DEV_UNROLL for (int k = 0; k < SC_LL_MAX_RANKS; k++)
    if (k == r)
      v = ll[k];
  return v;
}

/* The leader, after a wait of its block failed (SC_LL_WHY): the error, and
 * the mark for the others where the failure starts here. */
SC_DEV_FN void sc_ll_fail(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, int why, sc_dev_error_t *err) {
  const sc_coll_desc_t *d = run->d;
  int kind = why & 255, rank = why >> 8;
  if (kind == SC_DEV_COLL_FAILED && sc_dev_stopped(ctx) == 0) {
    uint64_t mark = sc_dev_load(&d->sync[d->me]->fail[rank]);
    if (!sc_coll_own_disagree(d, rank, mark)) /* else another block reports it */
      sc_coll_heard(rank, mark, err);
    return;
  }
  if (kind == SC_DEV_DISAGREE) { /* rank is at a barrier of this call: its tag is there */
    uint64_t theirs = sc_dev_load(&d->sync[d->me]->tag[run->block][rank][(run->epoch + 1) % 2]);
    sc_coll_disagree(d, rank, theirs, run->a->tag, err);
    return;
  }
  if (kind == SC_DEV_COLL_FAILED)
    kind = SC_DEV_ABORTED; /* this rank's own stop (noted in err) comes first */
  err->kind = kind == SC_DEV_TIMEOUT ? SC_DEV_BARRIER_TIMEOUT : kind;
  err->a = rank;
  err->b = 1;
  err->c = d->guard.timeout_ms;
  err->d = 0; /* no barrier: the sentence says the rank never sent its part */
  err->e = kind == SC_DEV_PEER_LEFT ? rank : -1;
  sc_dev_publish_early(ctx, err);
  sc_coll_mark(d, sc_dev_relay_mark(err, d->me, rank));
}

/* The leader: rank s's mark (s >= 0) fails this call here too; the
 * SC_LL_WHY, or 0 when s < 0. */
SC_DEV_FN int sc_ll_heard(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, int s, sc_dev_error_t *err) {
  if (s < 0)
    return 0;
  int why = SC_LL_WHY(SC_DEV_COLL_FAILED, s);
  sc_ll_fail(ctx, run, why, err);
  return why;
}

/* Lines whose wait gave up, a tag that differs (SC_LL_WHY's kind): the
 * leader fills err with what happened and, where the failure starts here,
 * marks the others. */
SC_DEV_FN void sc_ll_report(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, int h, int why,
                            sc_dev_error_t *err) {
  const sc_coll_desc_t *d = run->d;
  int rank = why >> 8;
  if ((why & 255) == SC_LL_TAG_DIFFERS) {
    uint64_t w0, w1, theirs = 0;
    sc_dev_ll_load(sc_ll_line(d, d->me, h, rank, run->block), &w0, &w1);
    sc_ll_decode(w0, w1, sc_ll_flag(run->seq), &theirs);
    sc_coll_disagree(d, rank, theirs, run->a->tag, err);
    return;
  }
  sc_ll_fail(ctx, run, why, err);
}

/* The leader, once a thread of its block found that a collective failed
 * here (`broken`: SC_LL_REFUSED): the call fails with this rank's stop if
 * it has one (as at a barrier: the others are kept out), else OUT_OF_STEP
 * naming the failed call. The kind. */
SC_DEV_FN int sc_ll_refuse(sc_dev_ctx_t *ctx, const sc_coll_run_t *run, sc_dev_error_t *err) {
  int why = sc_dev_stopped(ctx);
  if (why != 0) {
    sc_coll_give_up(ctx, run->d, run->block, run->epoch + 1, why, err);
    return err->kind;
  }
  /* Another thread of the block read the word, which never goes back to
   * 0: this load sees it too, at the latest a few loads later. */
  uint64_t broken = 0;
  for (int i = 0; broken == 0 && i < 4096; i++)
    broken = sc_dev_load_own(&run->a->state->broken);
  err->kind = SC_DEV_OUT_OF_STEP;
  err->a = (int64_t)(broken != 0 ? broken - 1 : run->seq);
  return err->kind;
}

/* A whole collective on the LL path, from the checks at its start to the
 * counters at its end (sc_dev_coll_run_on's for the other paths, the same
 * checks). A small call waits for chains of loads, each link a trip to
 * memory (to another GPU, to the host), so the steps are arranged for the
 * fewest links: the loads the pushes need (the counters, the descriptor,
 * the first line of input) are in flight at once, and nothing else comes
 * before the pushes: no block-wide vote (each thread checks the counters it
 * read itself), and the stop word and the marks are looked at once the
 * lines are out (below); the tag lines are waited for by other threads
 * than the data. Thread r pushes the tag to
 * rank r. Nothing here is out of line: with its two failure paths as
 * __noinline__ functions the kernel's stack frame grew from 368 to 1656
 * bytes and every call took 10 us more on 4 H200s (docs/PERFORMANCE.md).
 * Nothing is on the stack either (the lines, the regions: registers), which
 * is cold memory at a kernel's start.
 *
 * kind: the call's, which the caller may know before the call (a GPU's
 * kernel per kind: a constant here, and none of the branches on it is
 * left); dtype and op: the reduction's, likewise, or -1 for the
 * arguments' (a GPU picks a reduction at run time through jump tables in
 * cold constant memory). A call of another kind or reduction fails
 * (BAD_ARGS). */
SC_DEV_FN void sc_coll_ll_call(sc_dev_ctx_t *ctx, const sc_coll_args_t *a, sc_dev_error_t *err,
                               int kind, int dtype, int op) {
  sc_coll_state_t *st = a->state;
  const sc_coll_sync_t *mine = a->sync;
  const sc_coll_desc_t *d = a->desc;
  uint32_t block = sc_dev_block(ctx), blocks = sc_dev_blocks(ctx);
  uint32_t t = sc_dev_thread(ctx), nt = sc_dev_threads(ctx);
  int counted = st != 0 && mine != 0 && d != 0 && block < SC_COLL_MAX_BLOCKS;
  uint64_t bytes = a->count * a->elem, lines = (bytes + SC_LL_LINE_DATA - 1) / SC_LL_LINE_DATA;
  /* One block (the smallest calls): no division on the path. */
  uint64_t lo = blocks == 1 ? 0 : sc_coll_cut(lines, block, blocks);
  uint64_t hi = blocks == 1 ? lines : sc_coll_cut(lines, block + 1, blocks);
  /* This thread's first line of input, read right after the counters and
   * the descriptor (the SASS had it stored to the stack before their loads
   * went out, waiting for it first): it is the caller's buffer of count x
   * elem bytes whatever the checks below find, and its load is on its way
   * with theirs. (A broadcast's: below, once this rank
   * is known to be the root; the others may pass no input.) */
  uint64_t first = lo + t, v0 = 0;
  uint64_t seq = 0, epoch = 0, rounds = 0, broken = 0, lines_part = 0;
  uint32_t stopped = 0;
  int n = 0, me = 0;
  const sc_coll_state_t *owner = 0;
  /* The ranks' regions, read with the rest: in registers, where each line's
   * address read them from the descriptor again (every flag's asm clobbers
   * memory), one more load before each push. */
  uint64_t *ll[SC_LL_MAX_RANKS] = {0};
  /* This call waits for the one ahead of it on the stream (a GPU may have
   * started it early: sc_dev_start_next below) only once its descriptor's
   * loads are on their way: the descriptor never changes; the counters, the
   * stop's copy and the input are written by earlier work on the stream. */
  if (counted) { /* no comparison of a loaded value between these loads: all in flight at once */
    n = d->nranks;
    me = d->me;
    owner = d->state;
    lines_part = d->ll_lines;
    SC_DEV_UNROLL for (int r = 0; r < SC_LL_MAX_RANKS; r++)
      ll[r] = d->ll[r];
  }
  sc_dev_wait_previous(ctx);
  if (counted) {
    seq = sc_dev_load_own(&st->calls);
    epoch = sc_dev_load_own(&st->block[block].epoch);
    rounds = sc_dev_load_own(&st->rounds);
    broken = sc_dev_load_own(&st->broken);
    if (a->stopped != 0)
      stopped = sc_dev_load_poll32(a->stopped);
  }
  int early = kind == SC_COLL_ALLREDUCE || kind == SC_COLL_ALLGATHER ||
              kind == SC_COLL_REDUCE;
  if (early && first < hi)
    v0 = sc_ll_take(a->sendbuf, first, bytes);
  uint64_t *ll_me = sc_ll_pick_region(ll, me); /* 0 past SC_LL_MAX_RANKS: refused below */
  if (!counted || sc_coll_path(a->algo, a->kind) != SC_COLL_PATH_LL ||
      !(sc_coll_common_ok(a, blocks, n, me, owner) & sc_coll_ll_fits(a, ll_me, n, lines_part) &
        (a->kind == kind) & ((dtype < 0) | ((a->dtype == dtype) & (a->op == op))))) {
    if (sc_dev_leader(ctx)) {
      err->kind = SC_DEV_BAD_ARGS;
      err->a = SC_PROGRAM_COLL;
    }
    return;
  }
  sc_coll_run_t run;
  run.a = a;
  run.d = d;
  run.block = block;
  run.blocks = blocks;
  run.epoch = epoch; /* no barrier moves it: written back as read */
  run.rounds = rounds;
  run.round = 0;
  run.tagged = 1; /* in the tag lines, not at a barrier */
  run.seq = seq;
  int h = (int)(seq % 2);
  uint32_t flag = sc_ll_flag(seq);
  /* A broadcast's data comes from the root alone, a reduce's goes to the
   * root alone (to: -1, every peer); the others send their tag. Reduce-scatter
   * and all-to-all send rank r block r of their input. */
  int reduce = kind == SC_COLL_REDUCE, to = reduce ? a->root : -1;
  uint64_t pushed = kind == SC_COLL_BROADCAST ? (me == a->root ? hi : lo)
                    : reduce                  ? (me != a->root ? hi : lo)
                                              : hi;
  int blockwise = kind == SC_COLL_REDUCESCATTER || kind == SC_COLL_ALLTOALL;
  if (kind == SC_COLL_BROADCAST && first < pushed)
    v0 = sc_ll_take(a->sendbuf, first, bytes);
  sc_guard_t guard = d->guard;
  guard.call = SC_CALL_COLL + kind;
  guard.seq = seq;
  /* A collective failed here (sc_coll_finish stored its number + 1 in
   * `broken`, and left `calls` as it was: a later launch looks like another
   * block of that one, and both are refused). Each thread decides from the
   * word it read itself, with no vote before the pushes; another block of
   * this launch that fails may store it between two warps' loads, so a
   * thread that refuses takes no other path: it skips the pushes and the
   * waits and meets the others at the vote below, the block's one sync. */
  int refused = broken != 0;
  for (int r = (int)t; !refused && r < n; r += (int)nt)
    if (r != me)
      sc_ll_push(sc_ll_at(sc_ll_pick_region(ll, r), n, lines_part, h, me, block), a->tag, flag);
  for (uint64_t l = first; !refused && l < pushed; l += nt) {
    uint64_t v = l == first ? v0 : blockwise ? 0 : sc_ll_take(a->sendbuf, l, bytes);
    SC_DEV_UNROLL for (int r = 0; r < SC_LL_MAX_RANKS; r++)
      if (r < n && r != me && (to < 0 || r == to))
        sc_ll_push(sc_ll_at(ll[r], n, lines_part, h, me, SC_COLL_MAX_BLOCKS + l),
                   blockwise ? sc_ll_take(sc_ll_input(a, 1, r), l, bytes) : v, flag);
  }
  /* After this thread's pushes: a rank asleep on its bell looks again (the
   * simulated backend; a GPU polls). */
  for (int r = 0; r < n; r++)
    if (r != me)
      sc_dev_ring(&d->sync[r]->bell);
  /* The stop (its word's copy in device memory, read with the counters;
   * the word itself is host memory, whose read alone made a call 0.8-1.2 us
   * longer on 2 H200s, docs/PERFORMANCE.md) and the marks, looked at once
   * the pushes are out: a stopped communicator, or a rank that gave up,
   * fails the call here even if every line comes, and a rank that timed
   * out waiting for this one's lines reported the call failed. Before the
   * pushes, their loads and a block-wide vote on them held the pushes back;
   * so the others may finish a call that fails here, and fail at their
   * next, which this rank's mark stops. The copy comes a little after the
   * word (the host queues it when it stops the communicator): a call that
   * starts in between runs as one that started before the stop, and its
   * waits look at the word itself. */
  sc_dev_enter(ctx, &guard);
  int stop = stopped != 0 && sc_dev_leader(ctx) ? sc_dev_stopped(ctx) : 0;
  int why = refused ? SC_LL_WHY(SC_LL_REFUSED, 0) : stop;
  int marked = 0;
  for (uint32_t s = t; s < SC_LL_MAX_RANKS; s += nt)
    marked |= sc_dev_load_poll(&mine->fail[s]) != 0;
  /* Whose lines this rank needs: a broadcast's root's, everyone's else (a
   * reduce's ranks but the root need none: `needed`). n <= SC_LL_MAX_RANKS
   * (sc_coll_ll_fits). */
  int from = kind == SC_COLL_BROADCAST ? a->root : -1;
  uint32_t peers = ((1u << n) - 1) & ~(1u << me);
  uint32_t wanted = from < 0 ? peers : from != me ? 1u << from : 0;
  uint64_t needed = reduce && me != a->root ? lo : hi;
  for (uint64_t l = first; l < needed && why == 0; l += nt) {
    uint64_t w[SC_LL_MAX_RANKS] = {0}, own = 0;
    if (from < 0 || from == me) /* a broadcast's other ranks may have no input */
      own = l == first && !blockwise ? v0 : sc_ll_take(sc_ll_input(a, blockwise, me), l, bytes);
    if (wanted != 0)
      why = sc_ll_gather(ctx, &run, ll_me, lines_part, h, SC_COLL_MAX_BLOCKS + l, flag, w, wanted);
    if (why != 0)
      break;
    SC_DEV_UNROLL for (int r = 0; r < SC_LL_MAX_RANKS; r++)
      if (r == me)
        w[r] = own;
    if (kind == SC_COLL_BROADCAST) {
      sc_ll_give(a->recvbuf, l, bytes, sc_ll_pick(w, from));
      continue;
    }
    if (kind == SC_COLL_ALLGATHER || kind == SC_COLL_ALLTOALL) {
      /* each rank's line l into its block of the output */
      SC_DEV_UNROLL for (int r = 0; r < SC_LL_MAX_RANKS; r++)
        if (r < n)
          sc_ll_give((char *)a->recvbuf + (uint64_t)r * bytes, l, bytes, w[r]);
      continue;
    }
    sc_ll_give(a->recvbuf, l, bytes, sc_dev_reduce_line(w, n, dtype < 0 ? a->dtype : dtype, op < 0 ? a->op : op, n));
  }
  /* The peers' tags, checked by the block's last threads, which a small
   * call gives no lines: their waits overlap those for the data. */
  for (uint32_t k = nt - 1 - t; k < (uint32_t)n && why == 0; k += nt) {
    int r = (int)k;
    if (r == me)
      continue;
    uint64_t theirs = 0;
    why = sc_ll_get(ctx, &run, sc_ll_at(ll_me, n, lines_part, h, r, block), r, flag, &theirs);
    if (why == 0 && theirs != a->tag)
      why = SC_LL_WHY(SC_LL_TAG_DIFFERS, r);
  }
  /* The next call's kernel may start (a GPU: its launch and its
   * descriptor's loads overlap this call's end) once every block of this
   * one is past its waits: one started earlier would hold its SMs while this
   * call waits for its peers, which, with another communicator's calls on
   * another stream taking the rest, may leave a peer's block no SM to run. */
  sc_dev_start_next(ctx);
  /* A wait's own failure or a differing tag says more than a mark. */
  why = sc_dev_any_but(ctx, why != 0 ? why : marked ? SC_LL_WHY(SC_LL_MARKED, 0) : 0,
                       SC_LL_WHY(SC_LL_MARKED, 0));
  if (why != 0 && sc_dev_leader(ctx)) {
    uint64_t mark;
    if ((why & 255) == SC_LL_REFUSED) {
      why = sc_ll_refuse(ctx, &run, err);
    } else if (stop != 0) { /* this rank's own stop first, as where a barrier's call starts */
      sc_coll_give_up(ctx, d, block, epoch + 1, stop, err);
      why = err->kind;
    } else if ((why & 255) == SC_LL_MARKED) {
      why = sc_ll_heard(ctx, &run, sc_coll_marked(d, a->sync, &mark), err);
    } else {
      sc_ll_report(ctx, &run, h, why, err);
    }
  }
  if (sc_dev_leader(ctx))
    sc_coll_finish(ctx, &run, seq, why);
}

#endif
