#!/usr/bin/env bash
# SYMCOMM_COLL_MAX_BLOCKS: all-reduces from 8 B to 8 MiB on 3 ranks (LL and
# two-shot, every result checked by symcomm-perf) run on at most that many
# blocks, as the INFO lines of the choices say, and reach it; unset, some run
# on more (so the sizes test the cap). A rank alone with another cap fails
# the call as a disagreement, on every rank; a value out of range is refused.
#   bash tests/scripts/test_coll_max_blocks.sh
set -u
B=${B:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
sweep=(-o allreduce -b 8 -e 8M -f 4 -n 2 -w 1 -c 1)

# blocks_of LOGPREFIX: the block counts rank 0 logged, one a line.
blocks_of() { grep -o "COLL allreduce of .*, [0-9]* blocks\?" "$1.0" | awk '{print $(NF-1)}'; }

for cap in "" 2; do
  env ${cap:+SYMCOMM_COLL_MAX_BLOCKS=$cap} SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=COLL \
    SYMCOMM_DEBUG_FILE="$tmp/log$cap.%r" "$B/bin/symcomm-run" -n 3 --timeout 100 -- \
    "$B/bin/symcomm-perf" "${sweep[@]}" >"$tmp/out$cap.txt" 2>&1 ||
    fail "the sweep with SYMCOMM_COLL_MAX_BLOCKS='$cap' failed: $(tail -5 "$tmp/out$cap.txt")"
  grep -q "Out of bounds values : 0 OK" "$tmp/out$cap.txt" || fail "wrong results with cap '$cap'"
  most=$(blocks_of "$tmp/log$cap" | sort -n | tail -1)
  [ -n "$most" ] || fail "no choices logged with cap '$cap'"
  if [ -z "$cap" ]; then
    [ "$most" -gt 2 ] || fail "unset, no size ran on more than 2 blocks (most $most): the sweep does not test the cap"
    # The lines give what ran: the simulated backend's rules, a block per 8 KiB
    # of LL (up to 8), a block per MiB of two-shot (above the cap both).
    for want in "32768 bytes on 3 ranks (FULLY_CONNECTED): ll, 4 blocks" \
      "8388608 bytes on 3 ranks (FULLY_CONNECTED): twoshot, 8 blocks"; do
      grep -q "COLL allreduce of $want\$" "$tmp/log.0" ||
        fail "rank 0 did not log 'allreduce of $want': $(grep "COLL allreduce of" "$tmp/log.0" | tail -4)"
    done
  else
    [ "$most" -eq "$cap" ] || fail "with SYMCOMM_COLL_MAX_BLOCKS=$cap the most blocks logged were $most"
  fi
done

# Rank 0 alone caps at 1: the first call on more blocks elsewhere fails, named.
env SYMCOMM_CHECK=0 "$B/bin/symcomm-run" -n 3 --timeout 100 -- bash -c \
  '[ "$SYMCOMM_RANK" = 0 ] && export SYMCOMM_COLL_MAX_BLOCKS=1; exec "$0" "$@"' \
  "$B/bin/symcomm-perf" -o allreduce -b 64K -e 64K -n 2 -w 1 -c 1 >"$tmp/differ.txt" 2>&1 &&
  fail "ranks with different caps ran: $(tail -5 "$tmp/differ.txt")"
grep -q "ranks disagree on a collective" "$tmp/differ.txt" ||
  fail "the disagreement is not named: $(tail -5 "$tmp/differ.txt")"
grep -q "SYMCOMM_COLL_MAX_BLOCKS" "$tmp/differ.txt" || fail "the sentence does not name SYMCOMM_COLL_MAX_BLOCKS"

SYMCOMM_COLL_MAX_BLOCKS=129 "$B/bin/symcomm-run" -n 2 --timeout 60 -- "$B/bin/symcomm-perf" -b 8 -e 8 \
  >"$tmp/bad.txt" 2>&1 && fail "SYMCOMM_COLL_MAX_BLOCKS=129 was accepted"
grep -q "SYMCOMM_COLL_MAX_BLOCKS=129" "$tmp/bad.txt" || fail "129 refused without naming it: $(tail -3 "$tmp/bad.txt")"
echo "ok: the cap holds ($most blocks at most), reached, differing caps fail named, 129 refused"
