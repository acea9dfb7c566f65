#!/usr/bin/env bash
# A running 4-rank job under symcomm-run, and someone else who can reach its
# root (issue 7, "the launcher root trusts anyone who can reach it"):
#   1. strangers say hello claiming rank 1: with the session id the launcher
#      root used to give every job, and with a random one: refused
#   2. a client that knows the job's key joins the job's next world before
#      its rank 3 does and SETs 1 MiB values 1,000 times: refused past the
#      session's limit (rank 0's resident memory stays bounded), then dropped
#      for saying nothing while the world waits to form, freeing rank 3's place
#   3. 1,100 silent connections while the job splits and makes windows, with
#      rank 0 limited to 1,024 descriptors: the root keeps few of them open
# The job must finish every step with checked data. Rank 0's resident memory
# (VmRSS, and its peak VmHWM) is printed at each stage.
set -u
B=${B:-${1:-build}}
tmp=$(mktemp -d)
hostile="$B/tests/unit/hostile_client"
launcher=
cleanup() {
  [ -n "$launcher" ] && kill "$launcher" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$tmp"/*.out; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done
  exit 1
}
wait_file() { # FILE SECONDS
  for _ in $(seq $(($2 * 20))); do [ -e "$1" ] && return 0; sleep 0.05; done
  return 1
}
kib() { awk -v k="$1" '$1 == k":" {print $2}' /proc/"$pid"/status; }
memory() { echo "rank 0 memory $1: VmRSS $(($(kib VmRSS) / 1024)) MiB, VmHWM $(($(kib VmHWM) / 1024)) MiB"; }

# Under AddressSanitizer, freed memory waits in a quarantine (256 MiB by
# default) before reuse; a small one keeps rank 0's memory a measure of what
# the root holds.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4"
hard=$(ulimit -Hn)
limit=1024
[ "$hard" != unlimited ] && [ "$hard" -lt $limit ] && limit=$hard
( ulimit -Sn $limit && exec "$B/bin/symcomm-run" -n 4 --timeout 110 -- \
    "$B/tests/mp/job_windows" steps "$tmp" ) >"$tmp/job.out" 2>&1 &
launcher=$!
for r in 0 1 2 3; do wait_file "$tmp/ready.$r" 30 || fail "rank $r never got ready"; done
read -r addr key pid <"$tmp/root"
export SYMCOMM_ADDR=$addr
echo "job up: root $addr, rank 0 is pid $pid, descriptor limit $limit"
memory "at the start"
rss0=$(kib VmRSS)

# 1. Strangers.
"$hostile" hello a8c7f832281a39c5 1 4 >"$tmp/hello.out" 2>&1 ||
  fail "the root let in a stranger with the old first-session id"
"$hostile" hello "$(printf '%04x%04x%04x%04x' $RANDOM $RANDOM $RANDOM $RANDOM)" 1 4 \
  >>"$tmp/hello.out" 2>&1 || fail "the root let in a stranger with a random session id"
[ "$(grep -c "refused: this root does not serve" "$tmp/hello.out")" -eq 2 ] ||
  fail "the root did not refuse both as sessions it does not serve"
echo "ok: strangers' hellos claiming rank 1 refused"

# 2. A client with the key, storing without end, then idle.
keyvar=SYMCOMM_JOB_KEY=$key
[ "$key" = - ] && keyvar= # a symcomm-run that gives no key
env $keyvar SYMCOMM_RANK=3 SYMCOMM_WORLD_SIZE=4 "$hostile" store 1000 \
  >"$tmp/store.out" 2>&1 || fail "the storing client failed"
grep "^store:" "$tmp/store.out"
memory "after 1,000 SETs of 1 MiB"
stored=$(sed -n 's/^store: \([0-9]*\) of.*/\1/p' "$tmp/store.out")
[ -n "$stored" ] && [ "$stored" -le 16 ] || fail "the root stored $stored values of 1 MiB"
grep -q "dropped the idle connection" "$tmp/store.out" || fail "the root kept an idle connection"
grown=$((($(kib VmHWM) - rss0) / 1024))
[ $grown -lt 64 ] || fail "rank 0 grew by $grown MiB"
echo "ok: stored $stored of 1,000 values, rank 0 grew by at most $grown MiB; idle client dropped"

# 3. A flood of silent connections while the job splits and makes windows.
"$hostile" flood 1100 "$tmp/step1.0" >"$tmp/flood.out" 2>&1 &
flooder=$!
for _ in $(seq 400); do grep -q "^open\|^SKIP" "$tmp/flood.out" && break; sleep 0.05; done
if grep -q "^SKIP" "$tmp/flood.out"; then
  cat "$tmp/flood.out"
  touch "$tmp/go1"
else
  grep -q "^open 1100" "$tmp/flood.out" || fail "the flood did not open its connections"
  sleep 0.5
  fds=$(ls /proc/"$pid"/fd | wc -l)
  echo "rank 0 holds $fds descriptors with 1,100 connections to its root open"
  [ "$fds" -lt 300 ] || fail "rank 0 holds $fds descriptors"
  touch "$tmp/go1"
fi
for r in 0 1 2 3; do wait_file "$tmp/step1.$r" 60 || fail "rank $r did not finish its split and windows"; done
wait $flooder
grep "^flood:" "$tmp/flood.out"
echo "ok: the job split and made windows during the flood"
memory "after the flood"

touch "$tmp/go2"
wait $launcher
rc=$?
launcher=
[ $rc -eq 0 ] || fail "the job exited $rc"
grep -q "every step passed" "$tmp/job.out" || fail "the job did not finish its steps"
echo "ok: the job finished every step (its world 1 formed after the idle client was dropped)"
