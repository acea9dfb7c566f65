#!/usr/bin/env bash
# Ranks started by hand with the variables of each launcher form a job, and
# symcomm-topo run under them prints it: torchrun (RANK, WORLD_SIZE,
# MASTER_ADDR, MASTER_PORT), Open MPI (OMPI_COMM_WORLD_* + SYMCOMM_ADDR, also
# over IPv6), Slurm (SLURM_* + MASTER_ADDR/PORT), and a job missing a rank.
set -u
B=${B:-${1:-build}}
topo="$B/bin/symcomm-topo"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.out; do echo "--- $f"; cat "$f"; done; exit 1; }

# A port unlikely to be in use; a clash only makes one case retry.
pick_port() { echo $((20000 + (RANDOM * 7 + $$) % 40000)); }

# run_pair NAME "VARS for rank 0" "VARS for rank 1": two ranks of symcomm-topo.
# @PORT@ in the variables is replaced by a port; on a clash, another is tried.
run_pair() {
  local name=$1 attempt port rc0 rc1
  for attempt in 1 2 3; do
    port=$(pick_port)
    local vars0=${2//@PORT@/$port} vars1=${3//@PORT@/$port}
    env -i PATH="$PATH" SYMCOMM_TIMEOUT=20 $vars1 "$topo" >"$tmp/$name.1.out" 2>&1 &
    local pid1=$!
    env -i PATH="$PATH" SYMCOMM_TIMEOUT=20 $vars0 "$topo" >"$tmp/$name.0.out" 2>&1
    rc0=$?
    if [ $rc0 -ne 0 ] && grep -q "Address already in use" "$tmp/$name.0.out"; then
      kill $pid1 2>/dev/null; wait $pid1 2>/dev/null
      continue
    fi
    wait $pid1
    rc1=$?
    [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] || fail "$name: exit codes $rc0 / $rc1"
    grep -q "2 ranks on 1 host" "$tmp/$name.0.out" || fail "$name: rank 0 did not print the job"
    grep -q "class: FULLY_CONNECTED" "$tmp/$name.0.out" || fail "$name: no classification"
    LAST_PORT=$port
    echo "ok: $name"
    return
  done
  fail "$name: no free port in 3 tries"
}

run_pair torchrun "RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=@PORT@" \
                  "RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=@PORT@"

# Under torchrun's agent the root moves to MASTER_PORT+1 (the agent holds MASTER_PORT).
run_pair torchelastic "RANK=0 WORLD_SIZE=2 MASTER_ADDR=localhost MASTER_PORT=@PORT@ TORCHELASTIC_RUN_ID=j SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=ENV" \
                      "RANK=1 WORLD_SIZE=2 MASTER_ADDR=localhost MASTER_PORT=@PORT@ TORCHELASTIC_RUN_ID=j"
grep -q "root at localhost:$((LAST_PORT + 1))" "$tmp/torchelastic.0.out" || fail "torchelastic: root not on MASTER_PORT+1"

run_pair openmpi "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2 SYMCOMM_ADDR=127.0.0.1:@PORT@" \
                 "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2 SYMCOMM_ADDR=127.0.0.1:@PORT@"

run_pair openmpi_ipv6 "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 SYMCOMM_ADDR=[::1]:@PORT@" \
                      "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 SYMCOMM_ADDR=[::1]:@PORT@"

run_pair slurm "SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_LOCALID=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=@PORT@" \
               "SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_LOCALID=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=@PORT@"

# Open MPI gives no address: without SYMCOMM_ADDR the error says what to set.
env -i PATH="$PATH" OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 "$topo" >"$tmp/noaddr.out" 2>&1 &&
  fail "noaddr: succeeded without an address"
grep -q "set SYMCOMM_ADDR" "$tmp/noaddr.out" || fail "noaddr: no hint to set SYMCOMM_ADDR"
echo "ok: missing address explained"

# A rank that never comes: the others time out within SYMCOMM_TIMEOUT, naming it.
# A port clash (another job holds it) only makes this case try another port.
for attempt in 1 2 3; do
  P=$(pick_port)
  start=$(date +%s)
  env -i PATH="$PATH" SYMCOMM_TIMEOUT=1 RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$P \
    "$topo" >"$tmp/missing.out" 2>&1 && fail "missing: succeeded with a rank missing"
  grep -q "Address already in use" "$tmp/missing.out" || break
done
grep -q "SYMCOMM_ERR_TIMEOUT" "$tmp/missing.out" || fail "missing: not a timeout"
grep -q "never connected to the root: rank 1" "$tmp/missing.out" || fail "missing: rank 1 not named"
[ $(($(date +%s) - start)) -le 6 ] || fail "missing: took longer than the timeout allows"
echo "ok: missing rank times out"
