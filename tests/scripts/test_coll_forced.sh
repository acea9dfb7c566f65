#!/usr/bin/env bash
# Which all-reduce algorithm runs: `test_coll algos` (all-reduce in every type
# and op, at counts on both sides of the LL and one-shot limits, every result
# checked) with SYMCOMM_ALGO=allreduce=ALGO, and the choice that symcomm logs
# at INFO (with its block count, whenever that changes) must show ALGO on
# every rank and never another; with SYMCOMM_COLL_BLOCKS set, that count.
# With ALGO=auto nothing is forced, and LL and two-shot must both show (the
# counts straddle the limits: with the default limits one-shot has no room
# on 3 ranks), so a forced run that shows one algorithm proves the forcing.
# LL applies only to calls its region holds: run ll with a larger
# SYMCOMM_LL_MAX_BYTES.
#   bash tests/scripts/test_coll_forced.sh ll|oneshot|twoshot|auto NRANKS
set -u
B=${B:-build}
algo=${1:?usage: test_coll_forced.sh ll|oneshot|twoshot|auto NRANKS}
n=${2:?usage: test_coll_forced.sh ll|oneshot|twoshot|auto NRANKS}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

forced=()
[ "$algo" = auto ] || forced=(SYMCOMM_ALGO="allreduce=$algo")
env "${forced[@]}" SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=COLL SYMCOMM_DEBUG_FILE="$tmp/log.%r" \
  "$B/bin/symcomm-run" -n "$n" --timeout 170 -- "$B/tests/mp/test_coll" algos ||
  fail "test_coll algos failed with SYMCOMM_ALGO=allreduce=$algo"
for ((r = 0; r < n; r++)); do
  log="$tmp/log.$r"
  [ -f "$log" ] || fail "rank $r wrote no log"
  # "allreduce of N bytes on R ranks (CLASS): ALGO, B block(s)[ (forced by SYMCOMM_ALGO)]"
  line='COLL allreduce of [0-9]* bytes on [0-9]* ranks ([A-Z_]*): [a-z ,]*, [1-9][0-9]* blocks\?\( (forced by SYMCOMM_ALGO)\)\?$'
  if grep "COLL allreduce of" "$log" | grep -v -q "$line"; then
    fail "rank $r logged a choice in another form: $(grep "COLL allreduce of" "$log" | grep -v "$line" | head -2)"
  fi
  for a in ll oneshot twoshot; do
    if grep -q "COLL allreduce of .*: $a, [0-9]* blocks\?\( (forced by SYMCOMM_ALGO)\)\?$" "$log"; then ran=yes; else ran=no; fi
    case "$algo/$a/$ran" in
    auto/oneshot/no) ;;
    auto/*/no) fail "rank $r never chose $a on its own: the counts do not straddle the limits" ;;
    "$a/$a/no") fail "rank $r never logged a $a all-reduce with SYMCOMM_ALGO=allreduce=$a" ;;
    */yes) [ "$algo" = auto ] || [ "$algo" = "$a" ] ||
      fail "rank $r ran $a although SYMCOMM_ALGO=allreduce=$algo: $(grep "allreduce of" "$log" | head -3)" ;;
    esac
  done
  # SYMCOMM_COLL_BLOCKS: the log says the count that every call ran on.
  if [ -n "${SYMCOMM_COLL_BLOCKS:-}" ] && grep "COLL allreduce of" "$log" | grep -v -q ", $SYMCOMM_COLL_BLOCKS blocks\?\( (\|$\)"; then
    fail "rank $r logged another block count than SYMCOMM_COLL_BLOCKS=$SYMCOMM_COLL_BLOCKS: $(grep "COLL allreduce of" "$log" | head -2)"
  fi
  if [ "$algo" != auto ]; then
    grep -q ": $algo, [0-9]* blocks\? (forced by SYMCOMM_ALGO)$" "$log" || fail "rank $r's log does not say the choice was forced"
  fi
done
echo "ok: $n ranks, all-reduce algorithm $algo$([ "$algo" = auto ] && echo ": ll and twoshot chosen")"
