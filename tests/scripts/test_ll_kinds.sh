#!/usr/bin/env bash
# All-gather, reduce-scatter, all-to-all, broadcast and reduce by LL: `test_coll
# matrix` (every collective, type and op at many counts, every result
# checked) on NRANKS ranks with the choices logged at INFO; small calls of
# each must show `ll` on every rank and larger ones `direct` (reduce:
# `oneshot`; the counts straddle SYMCOMM_LL_MAX_BYTES), so the matrix's
# checks covered both.
#   bash tests/scripts/test_ll_kinds.sh NRANKS
set -u
B=${B:-build}
n=${1:?usage: test_ll_kinds.sh NRANKS}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
env SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=COLL SYMCOMM_DEBUG_FILE="$tmp/log.%r" \
  "$B/bin/symcomm-run" -n "$n" --timeout 170 -- "$B/tests/mp/test_coll" matrix ||
  fail "test_coll matrix failed"
for ((r = 0; r < n; r++)); do
  log="$tmp/log.$r"
  [ -f "$log" ] || fail "rank $r wrote no log"
  for k in allgather reducescatter alltoall broadcast reduce; do
    large=direct
    [ "$k" = reduce ] && large=oneshot
    for a in ll $large; do
      grep -q "COLL $k of .*: $a, [0-9]* blocks\?$" "$log" || fail "rank $r never ran a $k by $a: $(grep "COLL $k of" "$log" | head -3)"
    done
  done
done
echo "ok: $n ranks, all-gather, reduce-scatter, all-to-all, broadcast and reduce by ll and by direct (reduce: oneshot)"
