#!/usr/bin/env bash
# Jobs at once on one host (issue 7: every launcher job's first session had
# the same id, so window creation of two jobs collided on the same socket
# names). Runs JOBS jobs of RANKS ranks at once, ROUNDS times, each job
# through init, windows with checked data, send/recv and destroy; first
# under symcomm-run, then with torchrun's variables by hand (every job with
# TORCHELASTIC_RUN_ID=none, torchrun's default, and its own MASTER_PORT).
#   test_concurrent_jobs.sh [JOBS [ROUNDS [TORCH_ROUNDS]]]
set -u
B=${B:-build}
JOBS=${1:-4}
ROUNDS=${2:-3}
TORCH_ROUNDS=${3:-2}
RANKS=4
WINDOWS=6
prog="$B/tests/mp/job_windows"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failed=0
report() { # NAME: prints the job's output when it failed
  echo "FAIL: $1 (exit $(cat "$tmp/$1.rc"))"
  sed 's/^/    | /' "$tmp/$1.out" | tail -n 15
  failed=$((failed + 1))
}

for round in $(seq "$ROUNDS"); do
  for j in $(seq "$JOBS"); do
    ( "$B/bin/symcomm-run" -n $RANKS --timeout 100 -- "$prog" $((round * 100 + j)) $WINDOWS \
        >"$tmp/run.$round.$j.out" 2>&1; echo $? >"$tmp/run.$round.$j.rc" ) &
  done
  wait
  for j in $(seq "$JOBS"); do
    [ "$(cat "$tmp/run.$round.$j.rc")" = 0 ] || report "run.$round.$j"
  done
done
echo "symcomm-run: $((JOBS * ROUNDS - failed)) of $((JOBS * ROUNDS)) jobs passed ($JOBS at once, $ROUNDS rounds)"
run_failed=$failed

# By hand with torchrun's variables: each job's ranks meet at MASTER_PORT + 1
# (TORCHELASTIC_RUN_ID says torchrun's agent holds MASTER_PORT itself).
torch_job() { # NAME PORT SEED
  local name=$1 port=$2 seed=$3 r pids=()
  for r in $(seq 0 $((RANKS - 1))); do
    env RANK=$r WORLD_SIZE=$RANKS LOCAL_RANK=$r LOCAL_WORLD_SIZE=$RANKS MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=$port TORCHELASTIC_RUN_ID=none SYMCOMM_TIMEOUT=30 \
      timeout 100 "$prog" "$seed" $WINDOWS >"$tmp/$name.$r.out" 2>&1 &
    pids+=($!)
  done
  local rc=0
  for r in "${!pids[@]}"; do wait "${pids[$r]}" || rc=$?; done
  cat "$tmp/$name".*.out >"$tmp/$name.out"
  echo $rc >"$tmp/$name.rc"
}
failed=0
torch_total=0
for round in $(seq "$TORCH_ROUNDS"); do
  base=$((20000 + (RANDOM * 7 + $$ + round * 97) % 12000)) # below the ephemeral ports (32768 on)
  for j in $(seq "$JOBS"); do
    torch_job "torch.$round.$j" $((base + 2 * j)) $((round * 1000 + j)) &
  done
  wait
  for j in $(seq "$JOBS"); do
    name="torch.$round.$j"
    torch_total=$((torch_total + 1))
    if [ "$(cat "$tmp/$name.rc")" != 0 ] && grep -q "Address already in use" "$tmp/$name.out" &&
       ! grep -q "memory handles" "$tmp/$name.out"; then
      echo "note: $name: its port was taken by another program; not counted"
      torch_total=$((torch_total - 1))
      continue
    fi
    [ "$(cat "$tmp/$name.rc")" = 0 ] || report "$name"
  done
done
echo "torchrun variables: $((torch_total - failed)) of $torch_total jobs passed ($JOBS at once, $TORCH_ROUNDS rounds)"
[ $run_failed -eq 0 ] && [ $failed -eq 0 ] || exit 1
echo "ok: concurrent jobs"
