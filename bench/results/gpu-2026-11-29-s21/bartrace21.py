# Session 21: session 19's bartrace.py (the barrier stamps) for trees from c065081 on, whose barriers take
# this rank's sync block from the arguments: its patterns of coll.h rewritten to match, then run as it is.
# Run in the tree to patch, as bartrace.py.
import os
here = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(here, "..", "gpu-4x-2026-11-28-s19", "bartrace.py")).read()
for old, new in (
        ("rung = sc_dev_bell_read(&run->d->sync[run->d->me]->bell);", "rung = sc_dev_bell_read(&run->a->sync->bell);"),
        ("sc_coll_barrier_open(ctx, run->d, run->block, e, err)", "sc_coll_barrier_open(ctx, run->d, run->a->sync, run->block, e, err)"),
        ("sc_coll_barrier_wait(ctx, run->d, run->block, e, tag, run->seq, rung, err)",
         "sc_coll_barrier_wait(ctx, run->d, run->a->sync, run->block, e, tag, run->seq, rung, err)")):
    assert src.count(old) == 2, old
    src = src.replace(old, new)
exec(compile(src, "bartrace.py (session 21)", "exec"))
