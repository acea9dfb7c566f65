import sys
p='src/device/coll_ll.h'; s=open(p).read()
def rep(a,b):
    global s
    assert s.count(a)==1, a[:80]
    s=s.replace(a,b)
rep('''#include "device/reduce.h"
''','''#include "device/reduce.h"

#ifndef SC_LL_TR
#define SC_LL_TR(ctx, i) do { } while (0)
#endif
#ifdef SC_LL_FIX_KIND
#define SC_LLK SC_LL_FIX_KIND
#define SC_LLD SC_LL_FIX_DTYPE
#define SC_LLO SC_LL_FIX_OP
#else
#define SC_LLK a->kind
#define SC_LLD a->dtype
#define SC_LLO a->op
#endif
''')
start=s.index('SC_DEV_FN void sc_coll_ll_call(')
body=s[start:]
body=body.replace('a->kind','SC_LLK').replace('a->dtype','SC_LLD').replace('a->op,','SC_LLO,')
body=body.replace('sc_coll_path(a->algo, SC_LLK)','sc_coll_path(a->algo, a->kind)')
s=s[:start]+body
rep("""  sc_coll_state_t *st = a->state;
  const sc_coll_sync_t *mine = a->sync;
  const sc_coll_desc_t *d = a->desc;
  uint32_t block = sc_dev_block(ctx), blocks""","""  SC_LL_TR(ctx, 1);
  sc_coll_state_t *st = a->state;
  const sc_coll_sync_t *mine = a->sync;
  const sc_coll_desc_t *d = a->desc;
  uint32_t block = sc_dev_block(ctx), blocks""")
rep("""  sc_coll_run_t run;
  run.a = a;
  run.d = d;
  run.block = block;
  run.blocks = blocks;""","""  SC_LL_TR(ctx, 2);
  sc_coll_run_t run;
  run.a = a;
  run.d = d;
  run.block = block;
  run.blocks = blocks;""")
rep("""  sc_dev_enter(ctx, &guard);
  int stop = stopped""","""  SC_LL_TR(ctx, 3);
  sc_dev_enter(ctx, &guard);
  int stop = stopped""")
rep("""  int marked = 0;
  for (uint32_t s = t; s < SC_LL_MAX_RANKS; s += nt)
    marked |= sc_dev_load_poll(&mine->fail[s]) != 0;
""","""  SC_LL_TR(ctx, 9);
  int marked = 0;
  for (uint32_t s = t; s < SC_LL_MAX_RANKS; s += nt)
    marked |= sc_dev_load_poll(&mine->fail[s]) != 0;
  SC_LL_TR(ctx, 10);
""")
rep("""    if (why != 0)
      break;
    SC_DEV_UNROLL for (int r = 0; r < SC_LL_MAX_RANKS; r++)
      if (r == me)
        w[r] = own;""","""    SC_LL_TR(ctx, 11);
    if (why != 0)
      break;
    SC_DEV_UNROLL for (int r = 0; r < SC_LL_MAX_RANKS; r++)
      if (r == me)
        w[r] = own;""")
rep("""    sc_ll_give(a->recvbuf, l, bytes, sc_dev_reduce_line(w, n, SC_LLD, SC_LLO, n));
  }""","""    uint64_t out_ = sc_dev_reduce_line(w, n, SC_LLD, SC_LLO, n);
    SC_LL_TR(ctx, 12);
    sc_ll_give(a->recvbuf, l, bytes, out_);
  }
  SC_LL_TR(ctx, 4);""")
rep("""  /* A wait's own failure or a differing tag says more than a mark. */
""","""  SC_LL_TR(ctx, 5);
  /* A wait's own failure or a differing tag says more than a mark. */
""")
rep("""  if (why != 0 && sc_dev_leader(ctx)) {
    uint64_t mark;
    if ((why & 255) == SC_LL_REFUSED) {""","""  SC_LL_TR(ctx, 6);
  if (why != 0 && sc_dev_leader(ctx)) {
    uint64_t mark;
    if ((why & 255) == SC_LL_REFUSED) {""")
rep("""  if (sc_dev_leader(ctx))
    sc_coll_finish(ctx, &run, seq, why);
}""","""  if (sc_dev_leader(ctx))
    sc_coll_finish(ctx, &run, seq, why);
  SC_LL_TR(ctx, 7);
}""")
open(p,'w').write(s)
