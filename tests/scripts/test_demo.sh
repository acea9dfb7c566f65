#!/usr/bin/env bash
# `make run`, the first thing a newcomer runs, fits a screen and shows what it
# promises: the topology of 8 ranks on 2 simulated hosts, the TP/DP job with
# every element checked, one all-reduce sweep without a wrong element, and the
# command for the full sweep.
set -u
B=${B:-${1:-build}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

san=""
case "$B" in *san*) san="SAN=1" ;; esac
# Its own make, not the jobserver of a make that may have started this test.
unset MAKEFLAGS MFLAGS MAKELEVEL
make --no-print-directory run BUILD="$B" $san >"$tmp/out" 2>&1 || fail "make run: $(tail -5 "$tmp/out")"
lines=$(wc -l <"$tmp/out")
[ "$lines" -le 60 ] || fail "make run printed $lines lines, more than a screen"
grep -q "^symcomm [0-9.]*: 8 ranks on 2 hosts" "$tmp/out" || fail "no topology of 8 ranks on 2 hosts"
[ "$(grep -c 'class: FULLY_CONNECTED' "$tmp/out")" -eq 2 ] || fail "expected 2 host matrices"
[ "$(grep -c '^\[rank  [0-7]\] TP [0-3]/4 {.*}  DP [01]/2 {.*}  .*: checked$' "$tmp/out")" -eq 8 ] ||
  fail "expected a checked TP/DP line from each of 8 ranks"
grep -q "^# Out of bounds values : 0 OK" "$tmp/out" || fail "the all-reduce sweep is not all right"
[ "$(grep -c '^ *[0-9]\+ \+[0-9]\+ \+float32 \+sum' "$tmp/out")" -ge 4 ] || fail "fewer than 4 sizes swept"
grep -q "symcomm-perf -o all -d all" "$tmp/out" || fail "no command for the full sweep"
echo "ok: make run prints $lines lines: topology, TP/DP, an all-reduce sweep, the full sweep's command"
