#!/usr/bin/env bash
# Which path collectives on window buffers take: `test_coll window_any_offset`
# (buffers at offsets that differ from rank to rank in a window registered
# with SYMCOMM_WINDOW_ANY_OFFSET, every element checked) must log all-reduce
# by two-shot and all-gather, reduce-scatter and all-to-all by direct, and
# never "on the windows" (a run on the windows at those offsets would fail
# with "disagree" anyway; the log shows it staged); `test_coll
# window_same_offset` (a window registered without flags, every rank at the
# same offset) must log all four on the windows, so that the first run's
# sizes were ones that take the windows when they may.
#   bash tests/scripts/test_window_offsets.sh NRANKS
set -u
B=${B:-build}
n=${1:?usage: test_window_offsets.sh NRANKS}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for mode in any same; do
  env SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=COLL SYMCOMM_DEBUG_FILE="$tmp/$mode.%r" \
    "$B/bin/symcomm-run" -n "$n" --timeout 170 -- "$B/tests/mp/test_coll" "window_${mode}_offset" ||
    fail "test_coll window_${mode}_offset failed"
  for ((r = 0; r < n; r++)); do
    log="$tmp/$mode.$r"
    [ -f "$log" ] || fail "rank $r wrote no log ($mode)"
    for k in allreduce allgather reducescatter alltoall; do
      staged=direct
      [ $k = allreduce ] && staged=twoshot
      if [ $mode = any ]; then
        grep -q "COLL $k of .*: $staged, [0-9]* blocks\?$" "$log" || fail "rank $r never staged a $k by $staged: $(grep "COLL $k of" "$log" | head -3)"
      else
        grep -q "COLL $k of .*: on the windows, nothing staged, [0-9]* blocks\?$" "$log" ||
          fail "rank $r never ran a $k on the windows: $(grep "COLL $k of" "$log" | head -3)"
      fi
    done
    if [ $mode = any ] && grep -q "on the windows" "$log"; then
      fail "rank $r ran on an any-offset window: $(grep "on the windows" "$log" | head -3)"
    fi
  done
done
echo "ok: $n ranks, collectives on an any-offset window staged, on a symmetric one straight on it"
