/* The barrier of the collective program (device/coll.h): block b of this rank
 * meets block b of every other rank through the sync blocks at the end of the
 * ranks' scratch windows (sc_coll_sync_t), never another block of its own
 * launch. Include after the backend's runtime.
 *
 * Arriving at barrier e (the block's epoch, which only grows) is one store of
 * e into arrive[b][me] of every rank's sync block: each word has one writer
 * (two GPUs never write parts of one word). A rank waits until every rank's
 * word in its own block reached e.
 *
 * A rank that gives up (its wait timed out, its communicator stopped, a rank
 * it needs left) writes its mark (device/status.h's relay
 * mark: why, and whom it waited for) into fail[me] of every rank's sync block,
 * once. Every barrier not yet complete on any rank then fails at once, now or
 * whenever a rank gets there, with the sentence of the rank that gave up; a
 * barrier that every rank reached still completes. */
#ifndef SC_DEVICE_BARRIER_H
#define SC_DEVICE_BARRIER_H

#include "device/ll_layout.h"
#include "device/runtime.h"
#include "device/status.h"

/* This rank gave up on the collectives: its mark for every rank, unless an
 * earlier failure here left one (the first cause is the one to relay). */
SC_DEV_FN void sc_coll_mark(const sc_coll_desc_t *d, uint64_t mark) {
  if (sc_dev_load(&d->sync[d->me]->fail[d->me]) != 0)
    return;
  for (int r = 0; r < d->nranks; r++) {
    sc_dev_store(&d->sync[r]->fail[d->me], mark);
    sc_dev_ring(&d->sync[r]->bell);
  }
}

/* Whether block b of every rank reached epoch e (the loads all in flight
 * at once; sc_dev_acquire after the wait). `mine`: this rank's sync block
 * (the args' copy of d->sync[d->me], as below: no wait for the descriptor). */
SC_DEV_FN int sc_coll_all_arrived(const sc_coll_desc_t *d, const sc_coll_sync_t *mine, uint32_t b,
                                  uint64_t e) {
  int all = 1;
  for (int s = 0; s < d->nranks; s++)
    all &= sc_dev_load_poll(&mine->arrive[b][s]) >= e;
  return all;
}

/* The lowest rank that gave up, with its mark; -1 if none did. The first
 * pass has no early exit, so that its loads are all in flight at once. */
SC_DEV_FN int sc_coll_marked(const sc_coll_desc_t *d, const sc_coll_sync_t *mine, uint64_t *mark) {
  uint64_t any = 0;
  for (int s = 0; s < d->nranks; s++)
    any |= sc_dev_load_poll(&mine->fail[s]);
  if (any == 0)
    return -1;
  for (int s = 0; s < d->nranks; s++) {
    *mark = sc_dev_load_poll(&mine->fail[s]);
    if (*mark != 0)
      return s;
  }
  return -1;
}

/* Whether mark m says its rank timed out waiting for rank me. */
SC_DEV_FN int sc_coll_mark_waits_for(uint64_t m, int me) {
  /* Whoever timed out (sc_dev_relay_pack's `named` field, bits 24-47, left
   * out of the comparison), waiting for rank me. */
  uint64_t want = sc_dev_relay_pack(SC_RELAY_TIMED_OUT, -1, me), named = 0xffffffull << 24;
  return (m & ~named) == want;
}

/* A rank that timed out waiting for this one (its mark names this rank as
 * the one it waited for), with its mark; -1 if none did. All marks are
 * loaded at once: it runs at every barrier. */
SC_DEV_FN int sc_coll_waited_for_me(const sc_coll_desc_t *d, const sc_coll_sync_t *mine,
                                    uint64_t *mark) {
  int found = -1;
  for (int s = d->nranks - 1; s >= 0; s--) {
    uint64_t m = sc_dev_load_poll(&mine->fail[s]);
    if (sc_coll_mark_waits_for(m, d->me)) {
      found = s;
      *mark = m;
    }
  }
  return found;
}

/* This rank's wait for barrier e of block b gave up (`why`): who had not
 * arrived goes into err, then the mark that tells the others. */
SC_DEV_FN void sc_coll_give_up(sc_dev_ctx_t *ctx, const sc_coll_desc_t *d, uint32_t b, uint64_t e,
                               int why, sc_dev_error_t *err) {
  int64_t left = why == SC_DEV_PEER_LEFT ? err->e : -1;
  const sc_coll_sync_t *mine = d->sync[d->me];
  err->kind = why == SC_DEV_TIMEOUT ? SC_DEV_BARRIER_TIMEOUT : why;
  err->a = -1;
  err->b = 0;
  for (int r = 0; r < d->nranks; r++)
    if (sc_dev_load(&mine->arrive[b][r]) < e) {
      if (err->a < 0)
        err->a = r;
      err->b++;
    }
  err->e = left;
  err->c = d->guard.timeout_ms;
  err->d = (int64_t)e;
  sc_dev_publish_early(ctx, err);
  sc_coll_mark(d, sc_dev_relay_mark(err, d->me, (int)err->a));
}

/* Rank s gave up (its mark): the same sentence here. */
SC_DEV_FN void sc_coll_heard(int s, uint64_t mark, sc_dev_error_t *err) {
  err->kind = SC_DEV_COLL_FAILED;
  err->a = s;
  err->b = -1;
  int timed_out, waited_for;
  if (!sc_dev_relay_read(mark, err, &timed_out, &waited_for))
    err->b = waited_for;
}

/* The mark another block of this rank leaves when it found that the ranks
 * disagree (sc_coll_barrier_wait): that block reports it; a block that
 * stops for it has no failure of its own to tell (and must not turn a
 * disagreement, which leaves the communicator usable, into a failure). */
SC_DEV_FN int sc_coll_own_disagree(const sc_coll_desc_t *d, int s, uint64_t mark) {
  return s == d->me && mark == sc_dev_relay_pack(0, d->me, -1);
}

/* Rank r called this collective with tag `theirs`, this rank with `mine`:
 * DISAGREE in err. No mark for the others: a rank that sees another tag
 * than its own says so itself, while a mark could reach a rank that has not
 * seen every arrival yet and turn its sentence into another. A mark in this
 * rank's own sync block only (the one sc_coll_own_disagree knows): its other
 * blocks, which may wait for namesakes that never come (ranks that disagree
 * on the number of blocks, or on the protocol), stop at once instead of at
 * the timeout. */
SC_DEV_FN int sc_coll_disagree(const sc_coll_desc_t *d, int r, uint64_t theirs, uint64_t mine,
                               sc_dev_error_t *err) {
  err->kind = SC_DEV_DISAGREE;
  err->a = r;
  err->b = (int64_t)theirs;
  err->c = (int64_t)mine;
  uint64_t *own = &d->sync[d->me]->fail[d->me];
  if (sc_dev_load(own) == 0)
    sc_dev_store(own, sc_dev_relay_pack(0, d->me, -1));
  return SC_DEV_DISAGREE;
}

/* Barrier e of block b fails because rank s marked the collectives failed:
 * with this rank's own stop (its abort) if it has one, even when a peer
 * that heard of it marked first, else with the mark's sentence (none for a
 * disagreement found by another block here: SC_DEV_DISAGREE, err left
 * alone). */
SC_DEV_FN int sc_coll_fail_marked(sc_dev_ctx_t *ctx, const sc_coll_desc_t *d, uint32_t b,
                                  uint64_t e, int s, uint64_t mark, sc_dev_error_t *err) {
  int why = sc_dev_stopped(ctx);
  if (why != 0)
    sc_coll_give_up(ctx, d, b, e, why, err);
  else if (sc_coll_own_disagree(d, s, mark))
    return SC_DEV_DISAGREE;
  else
    sc_coll_heard(s, mark, err);
  return err->kind;
}

/* Block b arrives at barrier e: thread r of the block tells rank r (its
 * tag first at a call's first barrier), all in parallel; each release
 * covers what the block wrote before its sync. */
SC_DEV_FN void sc_coll_arrive(sc_dev_ctx_t *ctx, const sc_coll_desc_t *d, uint32_t b, uint64_t e,
                              uint64_t tag) {
  for (uint32_t r = sc_dev_thread(ctx); r < (uint32_t)d->nranks; r += sc_dev_threads(ctx)) {
    sc_coll_sync_t *theirs = d->sync[r];
    if (tag != 0)
      sc_dev_store_relaxed(&theirs->tag[b][d->me][e % 2], tag); /* seen with the arrival */
    sc_dev_store(&theirs->arrive[b][d->me], e);
    sc_dev_ring(&theirs->bell);
  }
}

/* The leader of block b, before its block arrives at barrier e: a rank that
 * gave up before this one got here (it was stopped, say) did not reach this
 * barrier, so it fails here too, never completes behind the back of a rank
 * that reported it failed. 0, or the error kind with err filled. */
SC_DEV_FN int sc_coll_barrier_open(sc_dev_ctx_t *ctx, const sc_coll_desc_t *d,
                                   const sc_coll_sync_t *mine, uint32_t b, uint64_t e,
                                   sc_dev_error_t *err) {
  uint64_t mark;
  int s = sc_coll_marked(d, mine, &mark);
  return s >= 0 ? sc_coll_fail_marked(ctx, d, b, e, s, mark, err) : 0;
}

/* At a call's first barrier (seq: the call's number), a rank that has not
 * arrived but pushed the LL tag line of this call runs an LL collective
 * where this rank runs another collective: DISAGREE, with its tag. */
SC_DEV_FN int sc_coll_elsewhere(const sc_coll_desc_t *d, uint32_t b, uint64_t e, uint64_t seq,
                                uint64_t tag, sc_dev_error_t *err) {
  if (d->ll[d->me] == 0 || d->nranks > SC_LL_MAX_RANKS)
    return 0;
  uint32_t flag = sc_ll_flag(seq);
  for (int r = 0; r < d->nranks; r++) {
    uint64_t theirs;
    if (r != d->me && sc_dev_load_poll(&d->sync[d->me]->arrive[b][r]) < e &&
        sc_ll_read(sc_ll_line(d, d->me, (int)(seq % 2), r, b), flag, &theirs))
      return sc_coll_disagree(d, r, theirs, tag, err);
  }
  return 0;
}

/* The leader of block b, once its block arrived at barrier e: waits for
 * block b of every rank. A non-zero tag is the call's (number seq), at its
 * first barrier: compared with every rank's once all arrived (slots
 * alternate with the epoch's parity: see sc_coll_sync_t), and with the LL
 * tag lines of ranks that do not come (sc_coll_elsewhere, looked at when
 * the bell rang and every 64 polls). `rung`: the bell read before this
 * block arrived, which its own arrival rings, so that the first miss looks
 * at those lines too: they may have rung the bell before, and their ranks,
 * waiting for this one's lines, would not ring it again (the simulated
 * backend's sleep waits for a ring: this wait would last the timeout). 0,
 * or the error kind with err filled (and marked for the others where the
 * failure starts here). */
SC_DEV_FN int sc_coll_barrier_wait(sc_dev_ctx_t *ctx, const sc_coll_desc_t *d, sc_coll_sync_t *mine,
                                   uint32_t b, uint64_t e, uint64_t tag, uint64_t seq, uint32_t rung,
                                   sc_dev_error_t *err) {
  int n = d->nranks;
  uint64_t departed = 0, mark = 0; /* ranks that left, once a sleep said so */
  uint32_t polls = 0, last = rung;
  for (;;) {
    uint32_t seen = sc_dev_bell_read(&mine->bell);
    if (sc_coll_all_arrived(d, mine, b, e))
      break;
    int s = sc_coll_marked(d, mine, &mark);
    if (s >= 0) {
      /* A mark made after everyone arrived here (the rank that made it saw
       * them, so they are visible now): this barrier is done all the same. */
      sc_dev_acquire();
      if (sc_coll_all_arrived(d, mine, b, e))
        break;
      return sc_coll_fail_marked(ctx, d, b, e, s, mark, err);
    }
    if (tag != 0 && (departed != 0 || seen != last || (++polls & 63) == 0)) {
      last = seen;
      if (sc_coll_elsewhere(d, b, e, seq, tag, err) != 0)
        return err->kind;
    }
    /* Checked after the arrivals: a rank that arrived before leaving has. */
    for (int r = 0; r < n && departed != 0; r++)
      if ((departed >> r & 1) && sc_dev_load(&mine->arrive[b][r]) < e) {
        err->e = r;
        sc_coll_give_up(ctx, d, b, e, SC_DEV_PEER_LEFT, err);
        return err->kind;
      }
    int why = sc_dev_sleep(ctx, &mine->bell, seen);
    if (why == SC_DEV_PEER_LEFT) {
      departed = sc_dev_departed(ctx); /* look at the arrivals once more, then at these */
      continue;
    }
    if (why != 0) {
      sc_coll_give_up(ctx, d, b, e, why, err);
      return err->kind;
    }
  }
  /* Every rank arrived, yet one timed out waiting for this one: it did not
   * see this rank's arrival in time (this rank was stopped between its
   * arrival stores, say) and reported the call failed, so this rank must not
   * complete it behind its back. */
  int late = sc_coll_waited_for_me(d, mine, &mark);
  if (late >= 0)
    return sc_coll_fail_marked(ctx, d, b, e, late, mark, err);
  sc_dev_acquire(); /* what the peers wrote before arriving, the tags among it */
  sc_dev_progress(ctx); /* the timeout counts from the last barrier passed */
  if (tag == 0)
    return 0;
  /* After the acquire, relaxed loads with no test between them: all in
   * flight at once; which rank differs is looked for only when one does. */
  uint64_t differ = 0;
  for (int r = 0; r < n; r++)
    differ |= sc_dev_load_poll(&mine->tag[b][r][e % 2]) ^ tag;
  for (int r = 0; r < n && differ != 0; r++) {
    uint64_t theirs = sc_dev_load_poll(&mine->tag[b][r][e % 2]);
    if (theirs != tag) /* every rank passed this barrier and sees it too */
      return sc_coll_disagree(d, r, theirs, tag, err);
  }
  return 0;
}

#endif
