#!/usr/bin/env bash
# Logging: SYMCOMM_DEBUG levels, SYMCOMM_DEBUG_SUBSYS filters, and one
# SYMCOMM_DEBUG_FILE per rank.
set -u
B=${B:-${1:-build}}
run="$B/bin/symcomm-run"
prog="$B/examples/tp_dp"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# INFO to one file per rank (%r), nothing of it on stderr.
SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_FILE="$tmp/log.%h.%r" "$run" -n 4 --hosts 2 --timeout 30 -- "$prog" \
  >"$tmp/out" 2>"$tmp/err" || fail "job failed: $(cat "$tmp/err")"
[ "$(ls "$tmp"/log.* | wc -l)" -eq 4 ] || fail "expected 4 log files, got: $(ls "$tmp")"
for r in 0 1 2 3; do
  f=$(ls "$tmp"/log.*."$r")
  grep -q "\[$r\] SYMCOMM INFO INIT .*rank $r nranks 4 .* - Init COMPLETE" "$f" ||
    fail "rank $r's file lacks its Init COMPLETE line"
  grep -q "split 0: comm\|split 1: comm" "$f" || fail "rank $r's file lacks the split lines"
done
grep -q "SYMCOMM INFO" "$tmp/err" && fail "INFO lines went to stderr despite SYMCOMM_DEBUG_FILE"
echo "ok: one log file per rank"

# Subsystem filters: only BOOT; everything but BOOT.
SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=BOOT "$run" -n 2 --timeout 30 -- "$prog" >/dev/null 2>"$tmp/boot" ||
  fail "BOOT-only job failed"
grep -q "SYMCOMM INFO BOOT" "$tmp/boot" || fail "no BOOT lines with SYMCOMM_DEBUG_SUBSYS=BOOT"
grep -q "SYMCOMM INFO INIT" "$tmp/boot" && fail "INIT lines with SYMCOMM_DEBUG_SUBSYS=BOOT"
SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=^BOOT "$run" -n 2 --timeout 30 -- "$prog" >/dev/null 2>"$tmp/noboot" ||
  fail "^BOOT job failed"
grep -q "SYMCOMM INFO BOOT" "$tmp/noboot" && fail "BOOT lines with SYMCOMM_DEBUG_SUBSYS=^BOOT"
grep -q "SYMCOMM INFO INIT" "$tmp/noboot" || fail "no INIT lines with SYMCOMM_DEBUG_SUBSYS=^BOOT"
echo "ok: subsystem filters"

# The default level is WARN: a clean job prints nothing of symcomm's.
"$run" -n 2 --timeout 30 -- "$prog" >/dev/null 2>"$tmp/quiet" || fail "quiet job failed"
[ ! -s "$tmp/quiet" ] || fail "a clean job logged: $(head -3 "$tmp/quiet")"
SYMCOMM_DEBUG=NONE SYMCOMM_TIMEOUT=bogus "$run" -n 1 --timeout 30 -- "$prog" >/dev/null 2>"$tmp/none" &&
  fail "a bad SYMCOMM_TIMEOUT was accepted"
grep -q "SYMCOMM WARN" "$tmp/none" && fail "SYMCOMM_DEBUG=NONE still warned"
grep -q "SYMCOMM_TIMEOUT='bogus'" "$tmp/none" || fail "the program's own report lacks the sentence"
echo "ok: levels"
