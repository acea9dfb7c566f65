#!/usr/bin/env bash
# Tests of symcomm-run, the local launcher: the environment of each rank, the root
# socket, exit statuses, stopping on failure / timeout / signals with nothing left
# behind, --tag-output, usage errors.
#   bash tests/scripts/test_symcomm_run.sh BUILD     (or with $B set, as tests/run.sh does)
# Ranks are small sh scripts that record their pids, so that the test can check
# afterwards that no process of a stopped job is still alive.
set -u
B=${B:-${1:?usage: test_symcomm_run.sh BUILD}}
RUN=$B/bin/symcomm-run
CHECK_ROOT_FD=$B/tests/mp/check_root_fd
for f in "$RUN" "$CHECK_ROOT_FD"; do
  [ -x "$f" ] || { echo "FAIL: $f is missing (build with make tests)"; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/symcomm-run-test.XXXXXX")
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
ok() { echo "ok:   $*"; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Pids from the given pid files that are still alive (zombies count as gone).
alive_pids() {
  local f p state
  for f in "$@"; do
    [ -s "$f" ] || continue
    p=$(cat "$f")
    state=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
    [ -n "$state" ] && [ "$state" != Z ] && echo "$p"
  done
}

# Checks that every process recorded in a case's pid files is gone (waiting up to 2 s
# for SIGKILLed ones to be torn down), and kills leftovers so they do not outlive us.
expect_none_left() {
  local what=$1 dir=$2 left i
  for i in $(seq 20); do
    left=$(alive_pids "$dir"/pid.*)
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  fail "$what: processes left running after symcomm-run exited: $(echo $left)"
  kill -9 $left 2>/dev/null
  return 1
}

# Waits (up to 10 s) until `count` pid files exist in dir.
wait_for_pids() {
  local dir=$1 count=$2 i
  for i in $(seq 200); do
    [ "$(ls "$dir" | grep -c '^pid\.')" -ge "$count" ] && return 0
    sleep 0.05
  done
  return 1
}

cleanup() {
  local left
  left=$(alive_pids "$work"/*/pid.* 2>/dev/null)
  [ -n "$left" ] && kill -9 $left 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# A case folder: $D for the ranks (exported, inherited through symcomm-run).
new_case() {
  D=$work/$1
  mkdir -p "$D"
  export D
}

# --- rank scripts -------------------------------------------------------------
cat >"$work/sleeper.sh" <<'EOF'
# Records its pid, then sleeps in the same process. Rank 1 also leaves a grandchild
# in its process group, which stopping the job must reach too.
echo $$ >"$D/pid.$SYMCOMM_RANK"
if [ "$SYMCOMM_RANK" = 1 ]; then
  sleep 30 &
  echo $! >"$D/pid.grandchild"
fi
exec sleep 30
EOF
cat >"$work/fail_one.sh" <<'EOF'
# Rank $FAIL_RANK waits until every other rank recorded its pid (and rank 1, when it
# sleeps, its grandchild's), then fails with $FAIL_HOW ("exit N" or a signal name to
# kill itself with); the others sleep.
if [ "$SYMCOMM_RANK" != "$FAIL_RANK" ]; then exec sh "$SLEEPER"; fi
want=$((SYMCOMM_WORLD_SIZE - 1))
[ "$FAIL_RANK" != 1 ] && want=$((want + 1))
i=0
while [ "$(ls "$D" | grep -c '^pid\.')" -lt $want ] && [ $i -lt 200 ]; do
  sleep 0.05; i=$((i + 1))
done
case "$FAIL_HOW" in
  exit*) exit ${FAIL_HOW#exit } ;;
  *) kill -s "$FAIL_HOW" $$ ;;
esac
EOF
cat >"$work/deaf.sh" <<'EOF'
# Ignores SIGINT and SIGTERM (sleep inherits that), so only SIGKILL stops it.
trap '' INT TERM
echo $$ >"$D/pid.$SYMCOMM_RANK"
exec sleep 30
EOF
export SLEEPER=$work/sleeper.sh

# --- environment of each rank -----------------------------------------------------
new_case env_hosts
# An outer job's values must not leak into the ranks; other variables must.
SYMCOMM_ROOT_FD=99 SYMCOMM_TEST_MARKER=kept "$RUN" -n 5 --hosts 2 -- \
  sh -c 'env | grep -E "^SYMCOMM_" | sort >"$D/env.$SYMCOMM_RANK"'
rc=$?
[ $rc -eq 0 ] || fail "env -n 5 --hosts 2: exit $rc, expected 0"
port=""
for r in 0 1 2 3 4; do
  f=$D/env.$r
  [ -f "$f" ] || { fail "env: rank $r did not run"; continue; }
  get() { sed -n "s/^$1=//p" "$f"; }
  if [ "$r" -lt 2 ]; then host=0 lr=$r ls=2; else host=1 lr=$((r - 2)) ls=3; fi
  for kv in "SYMCOMM_RANK=$r" "SYMCOMM_WORLD_SIZE=5" "SYMCOMM_HOSTID=$host" \
            "SYMCOMM_LOCAL_RANK=$lr" "SYMCOMM_LOCAL_SIZE=$ls" "SYMCOMM_TEST_MARKER=kept"; do
    grep -qx "$kv" "$f" || fail "env: rank $r should have $kv; has: $(tr '\n' ' ' <"$f")"
  done
  addr=$(get SYMCOMM_ADDR)
  [[ "$addr" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "env: rank $r SYMCOMM_ADDR='$addr', expected 127.0.0.1:<port>"
  [ -z "$port" ] && port=$addr
  [ "$addr" = "$port" ] || fail "env: rank $r SYMCOMM_ADDR=$addr differs from rank 0's $port"
  fd=$(get SYMCOMM_ROOT_FD)
  if [ "$r" = 0 ]; then
    [[ "$fd" =~ ^[0-9]+$ ]] && [ "$fd" != 99 ] || fail "env: rank 0 SYMCOMM_ROOT_FD='$fd', expected its own fd number"
  else
    [ -z "$fd" ] || fail "env: rank $r has SYMCOMM_ROOT_FD=$fd; only rank 0 may"
  fi
done
ok "environment of -n 5 --hosts 2"

new_case env_uneven
# 7 ranks on 3 hosts: [0,2) [2,4) [4,7).
"$RUN" -n 7 --hosts 3 -- sh -c \
  'echo "$SYMCOMM_HOSTID $SYMCOMM_LOCAL_RANK $SYMCOMM_LOCAL_SIZE" >"$D/place.$SYMCOMM_RANK"'
got=$(for r in 0 1 2 3 4 5 6; do echo "$r $(cat "$D/place.$r" 2>/dev/null)"; done | tr '\n' ',')
want="0 0 0 2,1 0 1 2,2 1 0 2,3 1 1 2,4 2 0 3,5 2 1 3,6 2 2 3,"
[ "$got" = "$want" ] || fail "env: -n 7 --hosts 3 placement (rank host local size) is '$got', expected '$want'"
ok "placement of -n 7 --hosts 3"

new_case env_one_host
SYMCOMM_HOSTID=7 "$RUN" -n 3 -- sh -c 'env | grep -E "^SYMCOMM_" | sort >"$D/env.$SYMCOMM_RANK"'
for r in 0 1 2; do
  f=$D/env.$r
  grep -q '^SYMCOMM_HOSTID=' "$f" && fail "env: without --hosts rank $r has $(grep '^SYMCOMM_HOSTID=' "$f")"
  grep -qx "SYMCOMM_LOCAL_RANK=$r" "$f" && grep -qx "SYMCOMM_LOCAL_SIZE=3" "$f" ||
    fail "env: without --hosts rank $r should have LOCAL_RANK=$r LOCAL_SIZE=3; has: $(tr '\n' ' ' <"$f")"
done
ok "environment without --hosts"

new_case stdin
got=$(echo hello | "$RUN" -n 2 -- sh -c 'read -r line; echo "$SYMCOMM_RANK:$line" >"$D/in.$SYMCOMM_RANK"'; cat "$D/in.0" "$D/in.1" | tr '\n' ' ')
[ "$got" = "0:hello 1: " ] || fail "stdin: rank 0 should read symcomm-run's stdin and rank 1 /dev/null; got '$got'"
ok "stdin goes to rank 0 only"

# --- the root socket -------------------------------------------------------------
out=$("$RUN" -n 4 -- "$CHECK_ROOT_FD" 2>&1) || fail "check_root_fd under -n 4 failed: $out"
out=$("$RUN" -n 4 --hosts 2 -- "$CHECK_ROOT_FD" 2>&1) || fail "check_root_fd under -n 4 --hosts 2 failed: $out"
ok "root socket contract (check_root_fd)"

# --- failures stop the job ---------------------------------------------------------
new_case fail_exit
t0=$(now_ms)
FAIL_RANK=2 FAIL_HOW="exit 3" "$RUN" -n 4 -- sh "$work/fail_one.sh" 2>"$D/stderr"
rc=$?
dt=$(($(now_ms) - t0))
[ $rc -eq 3 ] || fail "failing rank: exit $rc, expected 3 (rank 2's status)"
[ $dt -lt 6000 ] || fail "failing rank: took $dt ms to stop the job"
grep -qE '^symcomm-run: rank 2 \(pid [0-9]+\) exited with status 3; stopping the other 3 ranks$' "$D/stderr" ||
  fail "failing rank: expected the failure line on stderr, got: $(cat "$D/stderr")"
[ "$(ls "$D" | grep -c '^pid\.')" -eq 4 ] || fail "failing rank: sleepers did not all record their pids"
expect_none_left "failing rank" "$D"
ok "a failing rank's status comes out and stops the others ($dt ms)"

new_case fail_signal
FAIL_RANK=1 FAIL_HOW=KILL "$RUN" -n 3 -- sh "$work/fail_one.sh" 2>"$D/stderr"
rc=$?
[ $rc -eq 137 ] || fail "rank killed by SIGKILL: exit $rc, expected 137"
grep -qE 'rank 1 \(pid [0-9]+\) was killed by signal 9 \(Killed\); stopping the other 2 ranks' "$D/stderr" ||
  fail "rank killed by a signal: expected the failure line, got: $(cat "$D/stderr")"
expect_none_left "rank killed by a signal" "$D"
ok "a rank killed by a signal gives 128+signal"

# --- timeout -----------------------------------------------------------------------
new_case timeout
t0=$(now_ms)
"$RUN" -n 3 --timeout 1.5 -- sh "$SLEEPER" 2>"$D/stderr" &
run_pid=$!
sleep 1
# symcomm-run sleeps in poll: a second of waiting must cost it next to no CPU.
ticks=$(awk '{print $14 + $15}' "/proc/$run_pid/stat" 2>/dev/null || echo 0)
wait $run_pid
rc=$?
dt=$(($(now_ms) - t0))
[ $rc -eq 124 ] || fail "timeout: exit $rc, expected 124"
[ $dt -ge 1400 ] && [ $dt -lt 6000 ] || fail "timeout: --timeout 1.5 took $dt ms"
[ "${ticks:-0}" -le 20 ] || fail "timeout: symcomm-run used $ticks clock ticks of CPU in 1 s of waiting (busy loop?)"
grep -q 'timed out after 1.5 s with 3 of 3 ranks still running (0-2)' "$D/stderr" ||
  fail "timeout: expected the list of running ranks on stderr, got: $(cat "$D/stderr")"
expect_none_left "timeout" "$D"
ok "--timeout 1.5 stops the job with 124 ($dt ms, $ticks ticks of CPU)"

new_case grace
t0=$(now_ms)
"$RUN" -n 2 --timeout 0.3 -- sh "$work/deaf.sh" 2>"$D/stderr"
rc=$?
dt=$(($(now_ms) - t0))
[ $rc -eq 124 ] || fail "grace: exit $rc, expected 124"
[ $dt -ge 3000 ] && [ $dt -lt 8000 ] || fail "grace: ranks that ignore SIGTERM were killed after $dt ms, expected ~3.3 s"
grep -q '2 ranks still running 3 s after SIGTERM (0-1); killing them' "$D/stderr" ||
  fail "grace: expected the SIGKILL notice, got: $(cat "$D/stderr")"
expect_none_left "grace" "$D"
ok "ranks that ignore SIGTERM are SIGKILLed after the grace period ($dt ms)"

# --- signals sent to symcomm-run -------------------------------------------------------
new_case sigterm
"$RUN" -n 3 -- sh "$SLEEPER" 2>"$D/stderr" &
run_pid=$!
wait_for_pids "$D" 4 || fail "SIGTERM: the ranks did not start"
t0=$(now_ms)
kill -TERM $run_pid
wait $run_pid
rc=$?
dt=$(($(now_ms) - t0))
[ $rc -eq 143 ] || fail "SIGTERM: exit $rc, expected 143 (128+SIGTERM)"
[ $dt -lt 2500 ] || fail "SIGTERM: sleepers should die of the forwarded SIGTERM at once, took $dt ms"
grep -q 'received SIGTERM; forwarding it to the 3 running ranks' "$D/stderr" ||
  fail "SIGTERM: expected the forwarding notice, got: $(cat "$D/stderr")"
expect_none_left "SIGTERM" "$D"
ok "SIGTERM to symcomm-run stops the ranks ($dt ms)"

new_case sigint_twice
# Job control, so that the background job does not start with SIGINT ignored.
set -m
"$RUN" -n 2 -- sh "$work/deaf.sh" 2>"$D/stderr" &
run_pid=$!
set +m
wait_for_pids "$D" 2 || fail "second SIGINT: the ranks did not start"
t0=$(now_ms)
kill -INT $run_pid
# The second one only after the first was handled: two pending SIGINTs would merge.
for i in $(seq 100); do
  grep -q 'received SIGINT; forwarding' "$D/stderr" && break
  sleep 0.05
done
kill -INT $run_pid
wait $run_pid
rc=$?
dt=$(($(now_ms) - t0))
[ $rc -eq 130 ] || fail "second SIGINT: exit $rc, expected 130 (128+SIGINT)"
[ $dt -lt 2500 ] || fail "second SIGINT: should kill at once, took $dt ms"
grep -q 'received SIGINT while stopping; killing' "$D/stderr" ||
  fail "second SIGINT: expected the notice, got: $(cat "$D/stderr")"
expect_none_left "second SIGINT" "$D"
ok "a second SIGINT kills at once ($dt ms)"

new_case sigusr1
"$RUN" -n 3 -- sh -c 'trap "echo got >\"\$D/usr1.\$SYMCOMM_RANK\"; exit 0" USR1
  echo $$ >"$D/pid.$SYMCOMM_RANK"
  i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; exit 5' 2>"$D/stderr" &
run_pid=$!
wait_for_pids "$D" 3 || fail "SIGUSR1: the ranks did not start"
kill -USR1 $run_pid
wait $run_pid
rc=$?
[ $rc -eq 0 ] || fail "SIGUSR1: exit $rc, expected 0 (every rank handles it and exits 0); stderr: $(cat "$D/stderr")"
[ "$(ls "$D" | grep -c '^usr1\.')" -eq 3 ] || fail "SIGUSR1: not forwarded to every rank"
ok "SIGUSR1 is forwarded and does not stop the job"

new_case sigkill
"$RUN" -n 3 -- sh -c 'echo $$ >"$D/pid.$SYMCOMM_RANK"; exec sleep 30' &
run_pid=$!
wait_for_pids "$D" 3 || fail "SIGKILL: the ranks did not start"
kill -KILL $run_pid
wait $run_pid 2>/dev/null
expect_none_left "SIGKILL of symcomm-run" "$D"
ok "SIGKILL of symcomm-run leaves no rank behind"

# --- --tag-output --------------------------------------------------------------------
new_case tag
cat >"$D/talker.sh" <<'EOF'
# Each line is written in three pieces, so that ranks interleave mid-line.
i=0
while [ $i -lt 200 ]; do
  printf 'rank %s line %s ' "$SYMCOMM_RANK" $i
  printf 'aaaaaaaaaa'
  printf 'bbbbbbbbbb\n'
  printf 'err %s ' "$SYMCOMM_RANK" >&2
  printf 'line %s\n' $i >&2
  i=$((i + 1))
done
if [ "$SYMCOMM_RANK" = 0 ]; then head -c 70000 /dev/zero | tr '\0' x; echo; fi
printf 'last %s' "$SYMCOMM_RANK"
printf 'errlast %s' "$SYMCOMM_RANK" >&2
EOF
"$RUN" -n 4 --tag-output -- sh "$D/talker.sh" >"$D/out" 2>"$D/err"
rc=$?
[ $rc -eq 0 ] || fail "tag-output: exit $rc, expected 0"
bad=$(grep -cvE '^\[[0-3]\] ' "$D/out")
[ "$bad" -eq 0 ] || fail "tag-output: $bad stdout lines without a rank prefix, e.g. '$(grep -vE '^\[[0-3]\] ' "$D/out" | head -1 | cut -c1-80)'"
bad=$(grep -cvE '^\[[0-3]\] ' "$D/err")
[ "$bad" -eq 0 ] || fail "tag-output: $bad stderr lines without a rank prefix"
for r in 0 1 2 3; do
  n=$(grep -cxE "\[$r\] rank $r line [0-9]+ aaaaaaaaaabbbbbbbbbb" "$D/out")
  [ "$n" -eq 200 ] || fail "tag-output: rank $r has $n whole stdout lines, expected 200"
  n=$(grep -cxE "\[$r\] err $r line [0-9]+" "$D/err")
  [ "$n" -eq 200 ] || fail "tag-output: rank $r has $n whole stderr lines, expected 200"
  grep -qx "\[$r\] last $r" "$D/out" || fail "tag-output: rank $r's last stdout line (no newline) was not flushed"
  grep -qx "\[$r\] errlast $r" "$D/err" || fail "tag-output: rank $r's last stderr line (no newline) was not flushed"
done
# A line longer than 64 KiB is cut into tagged pieces rather than buffered forever.
long=$(grep -E '^\[0\] x+$' "$D/out" | awk '{print length($0)}' | tr '\n' ' ')
[ "$long" = "65540 4468 " ] || fail "tag-output: a 70000-byte line should come out as 65536 + 4464 bytes, got lengths '$long'"
ok "--tag-output prefixes both streams and keeps lines whole"

out=$("$RUN" -n 2 -- sh -c 'echo plain$SYMCOMM_RANK' | sort | tr '\n' ' ')
[ "$out" = "plain0 plain1 " ] || fail "without --tag-output ranks should write directly; got '$out'"

# --- a program that cannot run, usage --------------------------------------------------
new_case noexec
"$RUN" -n 2 -- "$work/no-such-program" 2>"$D/stderr"
rc=$?
[ $rc -eq 127 ] || fail "missing program: exit $rc, expected 127"
grep -q "symcomm-run: cannot execute '$work/no-such-program': No such file or directory" "$D/stderr" ||
  fail "missing program: expected 'cannot execute' on stderr, got: $(cat "$D/stderr")"
ok "a missing program gives 127"

usage_case() {
  local rc
  "$RUN" "$@" >/dev/null 2>"$work/usage.err"
  rc=$?
  [ $rc -eq 2 ] || fail "usage: 'symcomm-run $*' exited $rc, expected 2"
  grep -q '^usage: symcomm-run' "$work/usage.err" || fail "usage: 'symcomm-run $*' printed no usage"
}
usage_case
usage_case true
usage_case -n 0 true
usage_case -n -3 true
usage_case -n abc true
usage_case -n 2
usage_case -n 5 --hosts 0 true
usage_case -n 5 --hosts 6 true
usage_case -n 5 --hosts x true
usage_case -n 2 --timeout abc true
usage_case -n 2 --timeout -1 true
usage_case -n 2 --bogus true
usage_case -n
ok "usage errors give 2"

out=$("$RUN" --help)
rc=$?
[ $rc -eq 0 ] || fail "--help: exit $rc, expected 0"
for word in -n --hosts --timeout --tag-output SYMCOMM_RANK SYMCOMM_WORLD_SIZE SYMCOMM_LOCAL_RANK \
            SYMCOMM_LOCAL_SIZE SYMCOMM_HOSTID SYMCOMM_ADDR SYMCOMM_ROOT_FD; do
  grep -q -- "$word" <<<"$out" || fail "--help does not mention $word"
done
ok "--help"

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all symcomm-run checks passed"
