#!/usr/bin/env bash
# kill -9 of one rank of a running job: symcomm-run stops the others and
# returns non-zero, no process of the job is left, and nothing of it remains
# in /dev/shm (device memory on the simulated backend is memfd memory, which
# dies with its last process).
set -u
B=${B:-${1:-build}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

shm_before=$(ls /dev/shm 2>/dev/null | sort)
"$B/bin/symcomm-run" -n 4 --timeout 60 -- "$B/tests/mp/hold_window" >"$tmp/out" 2>"$tmp/err" &
launcher=$!
for _ in $(seq 200); do
  [ "$(grep -c '^ready' "$tmp/out")" -eq 4 ] && break
  sleep 0.1
done
[ "$(grep -c '^ready' "$tmp/out")" -eq 4 ] || fail "the job did not start: $(cat "$tmp/err")"
pids=$(awk '/^ready/ {print $3}' "$tmp/out")
victim=$(awk '/^ready 2 / {print $3}' "$tmp/out")
# The job's memory is there now (memfd mappings), and not in /dev/shm.
grep -q "memfd:symcomm" /proc/"$victim"/maps || fail "no symcomm memfd mapping in rank 2"
kill -9 "$victim"
start=$(date +%s)
wait $launcher
rc=$?
[ $rc -ne 0 ] || fail "symcomm-run returned 0 after a rank was killed"
[ $(($(date +%s) - start)) -le 10 ] || fail "symcomm-run took too long to stop the job"
for p in $pids; do
  [ ! -e /proc/"$p" ] || fail "rank process $p is still there"
done
shm_after=$(ls /dev/shm 2>/dev/null | sort)
[ "$shm_before" = "$shm_after" ] || fail "/dev/shm changed: $(diff <(echo "$shm_before") <(echo "$shm_after"))"
echo "ok: killed rank 2; symcomm-run exited $rc; no process, nothing in /dev/shm"
