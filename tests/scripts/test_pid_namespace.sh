#!/usr/bin/env bash
# Ranks of one job in different PID namespaces on one network namespace, as
# containers of one pod or `docker run --network=host` have them (issue 7):
# they must create windows and send/recv. The fd exchange used to check each
# sender's pid, which differs between namespaces ("handles never arrived").
# Two 2-rank jobs started by hand: rank 1 alone in a new PID namespace, then
# both ranks each in its own (both are pid 1 there). Needs `unshare --pid`
# (root, or user namespaces); where it is not permitted the test says SKIP.
set -u
B=${B:-${1:-build}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prog="$B/tests/mp/job_windows"
fail() { echo "FAIL: $*"; for f in "$tmp"/*.out; do echo "--- $f"; cat "$f"; done; exit 1; }

if ! command -v unshare >/dev/null; then
  echo "SKIP: unshare(1) is not installed"
  exit 0
fi
if ! why=$(unshare --pid --fork true 2>&1); then
  echo "SKIP: unshare --pid is not permitted here: $why"
  exit 0
fi

# The child in the namespace dies with unshare, where unshare can do that.
kill_child=--fork
unshare --help 2>&1 | grep -q -- --kill-child && kill_child=--kill-child

# rank R's command; in a new PID namespace when $2 is 1. The shell prints
# its pid as the namespace sees it before it becomes the rank.
rank_cmd() {
  local r=$1 isolated=$2
  if [ "$isolated" = 1 ]; then
    echo "unshare --pid $kill_child sh -c 'echo rank $r runs as pid \$\$; exec \"\$0\" \"\$@\"' $prog"
  else
    echo "sh -c 'echo rank $r runs as pid \$\$; exec \"\$0\" \"\$@\"' $prog"
  fi
}

run_job() { # NAME ISOLATE_RANK0 ISOLATE_RANK1
  local name=$1 attempt port key rc0 rc1
  key=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  for attempt in 1 2 3; do
    port=$((20000 + (RANDOM * 7 + $$ + attempt) % 40000))
    for r in 0 1; do
      local isolated=$2
      [ $r -eq 1 ] && isolated=$3
      env SYMCOMM_RANK=$r SYMCOMM_WORLD_SIZE=2 SYMCOMM_ADDR=127.0.0.1:$port SYMCOMM_JOB_KEY=$key \
        SYMCOMM_TIMEOUT=20 timeout 60 bash -c "$(rank_cmd $r "$isolated") $port 4" \
        >"$tmp/$name.$r.out" 2>&1 &
      eval "pid$r=\$!"
    done
    wait "$pid0"; rc0=$?
    if [ $rc0 -ne 0 ] && grep -q "Address already in use" "$tmp/$name.0.out" &&
       ! grep -q "memory handles" "$tmp/$name.0.out"; then
      kill "$pid1" 2>/dev/null; wait "$pid1" 2>/dev/null
      continue # the port was taken: another one
    fi
    wait "$pid1"; rc1=$?
    [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] || fail "$name: exit codes $rc0 / $rc1"
    grep -q "windows and a send/recv ring checked" "$tmp/$name.0.out" || fail "$name: no result"
    for r in 0 1; do
      local isolated=$2
      [ $r -eq 1 ] && isolated=$3
      if [ "$isolated" = 1 ]; then
        grep -q "rank $r runs as pid 1$" "$tmp/$name.$r.out" || fail "$name: rank $r not in a new PID namespace"
      fi
    done
    echo "ok: $name"
    return
  done
  fail "$name: no free port in 3 tries"
}

run_job "rank 1 in its own PID namespace" 0 1
run_job "each rank in its own PID namespace (both pid 1)" 1 1
