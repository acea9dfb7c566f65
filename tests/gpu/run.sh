#!/usr/bin/env bash
# make test-gpu: the CUDA backend on a host with NVIDIA GPUs (made for 4; the
# steps that need 8 run where there are 8, else say SKIP).
#   bash tests/gpu/run.sh [BUILD]      (logs under $OUT, else BUILD/gpu-logs)
#   ONLY='^async_error|^fault_' bash tests/gpu/run.sh   runs only the steps whose
#   names match that bash regular expression (the others are not counted)
#   SHARE_GPU=N bash tests/gpu/run.sh   on a host with one GPU: runs the steps
#   of up to N ranks with every rank on that GPU (SYMCOMM_SHARE_DEVICE=1), for
#   the protocols' correctness only: the ranks' kernels take turns on the GPU
#   (one process's at a time), so waits between ranks are slow
# Needs a build with nvcc (BUILD/lib/libsymcomm_cuda.so). Refuses at once,
# touching nothing, where no GPU answers. Each step's log is OUT/<step>.log;
# one line per step (PASS/FAIL/SKIP, seconds, the log's last line), then the
# failures' tails. Steps that need more GPUs than the host has are skipped
# and said so. The data tests are the CI's programs (tests/mp/) with every
# buffer in GPU memory, on 2 and 4 GPUs, every result checked bit for bit.
set -u
# NVLink multicast (NVLS) stays off on the lent hosts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
B=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top" || exit 2
OUT=${OUT:-$B/gpu-logs}
mkdir -p "$OUT"
export B

echo "== environment" >"$OUT/environment.log"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >>"$OUT/environment.log" 2>&1; then
  echo "FAIL: no GPU here (nvidia-smi is missing or lists none): make test-gpu runs on a GPU host" |
    tee -a "$OUT/environment.log"
  exit 2
fi
ngpus=$(nvidia-smi -L | grep -c '^GPU')
if [ -n "${SHARE_GPU:-}" ]; then
  [[ $SHARE_GPU =~ ^[0-9]+$ ]] && [ "$SHARE_GPU" -ge 2 ] ||
    { echo "FAIL: SHARE_GPU=$SHARE_GPU: give the most ranks to share the GPU, 2 or more"; exit 2; }
  [ "$ngpus" -eq 1 ] || { echo "FAIL: SHARE_GPU is for a host with one GPU, this one has $ngpus"; exit 2; }
  ngpus=$SHARE_GPU
  export SYMCOMM_SHARE_DEVICE=1 SYMCOMM_DEVICE=0
  echo "SHARE_GPU=$SHARE_GPU: up to $ngpus ranks, all on GPU 0 (correctness only)"
fi
memory_before=$(bash tests/gpu/memory_back.sh --now)
{
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.used --format=csv
  nvidia-smi topo -m
  echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-(unset)}"
} >>"$OUT/environment.log" 2>&1
cat "$OUT/environment.log"
if [ ! -f "$B/lib/libsymcomm_cuda.so" ]; then
  echo "FAIL: $B/lib/libsymcomm_cuda.so was not built (make found no nvcc): build with nvcc, then run this"
  exit 2
fi

pass=0
skipped=0
failed=()
start_all=$(date +%s)
step() { # NAME TIMEOUT COMMAND...
  local name=$1 limit=$2
  shift 2
  if [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]]; then return 0; fi
  local t0=$(date +%s)
  timeout -k 5 "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  local dt=$(($(date +%s) - t0))
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1))
    printf 'PASS %-32s %4d s  %s\n' "$name" "$dt" "$(tail -n 1 "$OUT/$name.log")"
  else
    failed+=("$name")
    printf 'FAIL %-32s %4d s  (exit %d%s; log %s)\n' "$name" "$dt" "$rc" \
      "$([ $rc -eq 124 ] && echo ", killed after $limit s")" "$OUT/$name.log"
  fi
}
# gpus NAME N: whether the host has N GPUs; else a SKIP line.
gpus() {
  if [ -n "${ONLY:-}" ] && ! [[ $1 =~ $ONLY ]]; then return 1; fi
  # These compare GPUs with nvidia-smi, or each GPU's memory: one each.
  if [ -n "${SHARE_GPU:-}" ] && [[ $1 =~ ^(topo_check|fault_) ]]; then
    skipped=$((skipped + 1))
    printf 'SKIP %-32s        needs %d GPUs of its own (SHARE_GPU shares one)\n' "$1" "$2"
    return 1
  fi
  [ "$ngpus" -ge "$2" ] && return 0
  skipped=$((skipped + 1))
  printf 'SKIP %-32s        needs %d GPUs, this host has %d\n' "$1" "$2" "$ngpus"
  return 1
}
cuda_job=(env SYMCOMM_BACKEND=cuda SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=INIT,DEV "$B/bin/symcomm-run" --timeout 110)
# job NAME TIMEOUT N PROGRAM ARGS...: N ranks, one GPU each. A wait that
# makes no progress for 60 s fails with its sentence before the step's limit.
job() {
  local name=$1 limit=$2 n=$3
  shift 3
  gpus "$name" "$n" || return 0
  step "$name" "$limit" env SYMCOMM_BACKEND=cuda SYMCOMM_TIMEOUT="${JOB_WAIT_S:-60}" \
    "$B/bin/symcomm-run" -n "$n" --timeout $((limit - 10)) -- "$@"
}
mp=$B/tests/mp
gpu=$B/tests/gpu

echo "== the backend, devices and topology"
# One process: the backend's entry, device 0 (bus id, pointer checks, VMM
# export/import, pinned memory), kernels on a made and a wrapped stream, a
# WAIT that times out and names itself, events.
step unit_cuda_backend 120 bash -c "set -o pipefail; $B/tests/unit/test_cuda_backend $B/lib/libsymcomm_cuda.so 2>&1 | tee /dev/stderr | grep -q 'all passed on a GPU'"
# auto picks CUDA here and says so; cuda works; missing/foreign objects named.
step backend_select 120 bash tests/scripts/test_backend_select.sh
# Init, split and destroy on the GPUs: real bus ids, one device per rank,
# windows of send/recv and collectives made with cuMemCreate and imported
# by the other ranks (fd exchange).
gpus comm_basic_2 2 && step comm_basic_2 120 "${cuda_job[@]}" -n 2 -- "$mp/test_comm_basic" 1 2
gpus comm_basic_4 4 && step comm_basic_4 120 "${cuda_job[@]}" -n 4 -- "$mp/test_comm_basic" 1 2
# Two ranks on one GPU stay an error.
step same_gpu_refused 60 bash -c "SYMCOMM_SHARE_DEVICE=0 SYMCOMM_DEVICE=0 SYMCOMM_BACKEND=cuda $B/bin/symcomm-run -n 2 --timeout 50 -- $mp/test_comm_basic 1 1 2>&1 | tee /dev/stderr | grep -q 'both use device 0'"
# The topology tool under the CUDA backend: bus ids as nvidia-smi shows them.
step topo_tool 60 "${cuda_job[@]}" -n "$ngpus" -- "$B/bin/symcomm-topo"
# symcomm-topo agrees with nvidia-smi topo -m on every pair; --write-xml reads back.
gpus topo_check 2 && step topo_check 120 env OUT="$OUT/topo_check" bash tests/gpu/topo_check.sh "$B"

# The bulk data paths of the device runtime (sc_dev_reduce's 16-byte vectors,
# sc_dev_copy) in a kernel of their own against the portable C code: every
# dtype x op, 1 to 8 sources, counts 0 to 40009, pointers misaligned, in
# place, NaN/inf/-0/subnormal inputs, every element bit for bit.
step unit_gpu_bulk 300 bash -c "set -o pipefail; $B/tests/gpu/test_gpu_bulk $B/obj/tests/gpu/gpu_bulk_kernels.fatbin 2>&1 | tee /dev/stderr | grep -q 'all passed on a GPU'"

echo "== collectives (every buffer GPU memory, every element checked)"
# Ranks as threads of one process on GPU 0 (symcomm-perf --threads): their
# kernels run side by side, not by turns as processes' do, so every wait
# between ranks is a real concurrent one, on any GPU host. Blocks capped so
# that every rank's kernel and the next one it starts early fit at once.
threads_job=(env SYMCOMM_BACKEND=cuda SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=60 "$B/bin/symcomm-perf")
step perf_threads_2 180 env SYMCOMM_COLL_MAX_BLOCKS=16 "${threads_job[@]}" --threads 2 -o all -d float32,int8,bfloat16 --op sum,max -b 8 -e 4M -f 8 -R 1 -G 1 -n 5 -w 2
step perf_threads_4 180 env SYMCOMM_COLL_MAX_BLOCKS=8 "${threads_job[@]}" --threads 4 -o all -d float32,int32 --op sum,min -b 8 -e 4M -f 8 -R 0 -G 1 -n 5 -w 2
step perf_threads_4_windows 180 env SYMCOMM_COLL_MAX_BLOCKS=8 "${threads_job[@]}" --threads 4 -o all -d float32 -b 8 -e 16M -f 4 -R 1 -G 1 -n 5 -w 2
# Every collective x dtype x op, in and out of place, counts 0, 1, 1023,
# 65537, pointers off alignment, every root.
job coll_matrix_2 150 2 "$mp/test_coll" matrix
job coll_matrix_4 150 4 "$mp/test_coll" matrix
# 4 to 16 MiB (several chunks), then every collective with its largest
# buffer about 256 MiB, odd counts.
job coll_large_4 120 4 "$mp/test_coll" large
job coll_huge_2 240 2 "$mp/test_coll" huge
job coll_huge_4 240 4 "$mp/test_coll" huge
# On 8 GPUs (NVSwitch hosts: one-shot reads 7 peers; issue 12).
job coll_matrix_8 240 8 "$mp/test_coll" matrix
job coll_large_8 180 8 "$mp/test_coll" large
# Each all-reduce algorithm forced (log checked), every dtype x op.
gpus coll_forced_oneshot_4 4 && step coll_forced_oneshot_4 180 env SYMCOMM_BACKEND=cuda bash tests/scripts/test_coll_forced.sh oneshot 4
gpus coll_forced_twoshot_4 4 && step coll_forced_twoshot_4 180 env SYMCOMM_BACKEND=cuda bash tests/scripts/test_coll_forced.sh twoshot 4
job coll_1000_small_4 90 4 "$mp/test_coll" many
job coll_order_4 90 4 "$mp/test_coll" order
job coll_two_comms_at_once_4 90 4 "$mp/test_coll" concurrent
gpus coll_split_rounds_4 4 && step coll_split_rounds_4 120 env SYMCOMM_BACKEND=cuda SYMCOMM_ALGO=broadcast=split,reduce=split SYMCOMM_COLL_BLOCKS=3 SYMCOMM_COLL_SCRATCH_BYTES=65536 "$B/bin/symcomm-run" -n 4 --timeout 110 -- "$mp/test_coll" blocks
gpus coll_forced_split_4 4 && step coll_forced_split_4 120 env SYMCOMM_BACKEND=cuda SYMCOMM_ALGO=broadcast=split,reduce=split "$B/bin/symcomm-run" -n 4 --timeout 110 -- "$mp/test_coll" matrix
job coll_windows_in_place_2 90 2 "$mp/test_coll" windows
job coll_windows_in_place_4 90 4 "$mp/test_coll" windows
job coll_windows_kinds_2 120 2 "$mp/test_coll" windows_kinds
job coll_windows_kinds_4 120 4 "$mp/test_coll" windows_kinds
job coll_window_any_offset_2 120 2 "$mp/test_coll" window_any_offset
job coll_window_any_offset_4 120 4 "$mp/test_coll" window_any_offset
job coll_window_same_offset_4 120 4 "$mp/test_coll" window_same_offset
job coll_group_mixed_4 60 4 "$mp/test_coll" group
job coll_bad_args_2 60 2 "$mp/test_coll" args
job coll_mismatch_4 60 4 "$mp/test_coll" mismatch
gpus coll_mismatch_named_4 4 && step coll_mismatch_named_4 60 env SYMCOMM_BACKEND=cuda SYMCOMM_CHECK=1 "$B/bin/symcomm-run" -n 4 --timeout 50 -- "$mp/test_coll" mismatch
job coll_algo_differs_2 60 2 "$mp/test_coll" choices
job coll_stopped_stream_2 60 2 "$mp/test_coll" stopped
job coll_stopped_stream_4 60 4 "$mp/test_coll" stopped
job coll_slow_order_2 60 2 "$mp/test_coll" slow_order

echo "== send/recv and one-sided operations"
# Staged through the rings: 0 B to 64 MiB + 3, unaligned, bursts, types.
job p2p_sizes_2 120 2 "$mp/test_p2p" sizes
job p2p_sizes_4 120 4 "$mp/test_p2p" sizes
# Straight into windows (and from them), mixed with staged ones, a mismatch there.
job p2p_into_windows_2 60 2 "$mp/test_p2p" window
job p2p_into_windows_4 60 4 "$mp/test_p2p" window
job p2p_alltoall_4 60 4 "$mp/test_p2p" alltoall
job p2p_sizes_8 180 8 "$mp/test_p2p" sizes
job p2p_alltoall_8 90 8 "$mp/test_p2p" alltoall
job p2p_big_group_4 60 4 "$mp/test_p2p" biggroup
job p2p_order_10000 90 2 "$mp/test_p2p" order
job p2p_two_streams 60 2 "$mp/test_p2p" streams
job p2p_size_mismatch 60 2 "$mp/test_p2p" mismatch
job p2p_bad_args_4 60 4 "$mp/test_p2p" args
# Lanes with small parts and chunks (many parts, many chunks a lane), and
# call order across streams with the GPU's own lanes.
L4="SYMCOMM_P2P_LANES=4 SYMCOMM_P2P_SLOTS=8 SYMCOMM_P2P_CHUNK_BYTES=8192 SYMCOMM_P2P_LANE_BYTES=16384"
job p2p_lanes_sizes_4 180 4 env $L4 "$mp/test_p2p_lanes" sizes
job p2p_lanes_mismatch_2 90 2 env $L4 "$mp/test_p2p_lanes" mismatch
job p2p_lanes_order_3 90 3 env $L4 "$mp/test_p2p_lanes" order
# Eager messages: off (every size through the rendezvous, call order too), up
# to half a part (the default is a whole one), and an odd limit with sizes on
# either side of it.
job p2p_sizes_no_eager_2 120 2 env SYMCOMM_P2P_EAGER_BYTES=0 "$mp/test_p2p" sizes
job p2p_mismatch_no_eager_2 60 2 env SYMCOMM_P2P_EAGER_BYTES=0 "$mp/test_p2p" mismatch
job p2p_eager_32k_sizes_2 120 2 env SYMCOMM_P2P_EAGER_BYTES=32768 "$mp/test_p2p" sizes
job p2p_eager_mismatch_odd_2 90 2 env $L4 SYMCOMM_P2P_EAGER_BYTES=1001 "$mp/test_p2p_lanes" mismatch
job p2p_order_no_eager_10000 90 2 env SYMCOMM_P2P_EAGER_BYTES=0 "$mp/test_p2p" order
# put, signal, put_signal, wait_signal; registered windows; mistakes.
job window_2 60 2 "$mp/test_window"
job window_4 60 4 "$mp/test_window"
# symcomm_mem_alloc buffers outlive their communicator: a window of a split, freed with none (issue 11).
job window_mem_life_2 60 2 "$mp/test_window" life

echo "== CUDA streams and graphs, bad pointers, faults"
# The caller's CUDA streams wrapped (made by cuStreamCreate, and NULL),
# copies on them around symcomm's work without host waits.
job gpu_user_stream_2 90 2 "$gpu/test_gpu_stream" user
job gpu_user_stream_4 90 4 "$gpu/test_gpu_stream" user
# Capture (global mode) of 8 different operations, 1,000 replays with new
# inputs each, every output of every replay checked.
job gpu_graph_1000_2 180 2 "$gpu/test_gpu_graph" 1000
job gpu_graph_1000_4 180 4 "$gpu/test_gpu_graph" 1000
# The communicator's asynchronous error: a graph captured on one stream and
# replayed on another whose peer aborts (no stream reports it; the query
# does, naming the rank); aborts, timeouts and disagreements on every rank.
job gpu_graph_async_error_2 60 2 "$gpu/test_gpu_async"
job async_error_abort_4 60 4 "$mp/test_async_error" abort
gpus async_error_timeout_3 3 && step async_error_timeout_3 60 env SYMCOMM_BACKEND=cuda SYMCOMM_TIMEOUT=3 "$B/bin/symcomm-run" -n 3 --timeout 50 -- "$mp/test_async_error" timeout
job async_error_disagree_2 60 2 "$mp/test_async_error" disagree
# An LL collective queued before this rank's abort and started after it
# (its stream held by a window wait): ABORTED here, never success.
gpus coll_ll_abort_queued_2 2 && step coll_ll_abort_queued_2 60 env SYMCOMM_BACKEND=cuda SYMCOMM_ALGO=allreduce=ll "$B/bin/symcomm-run" -n 2 --timeout 50 -- "$mp/test_coll" abort_queued
gpus coll_ll_abort_queued_bcast_blocks_2 2 && step coll_ll_abort_queued_bcast_blocks_2 60 env SYMCOMM_BACKEND=cuda TEST_LL_KIND=broadcast SYMCOMM_COLL_BLOCKS=3 SYMCOMM_ALGO=broadcast=ll "$B/bin/symcomm-run" -n 2 --timeout 50 -- "$mp/test_coll" abort_queued
gpus coll_abort_queued_oneshot_2 2 && step coll_abort_queued_oneshot_2 60 env SYMCOMM_BACKEND=cuda SYMCOMM_LL_MAX_BYTES=0 SYMCOMM_ALGO=allreduce=oneshot "$B/bin/symcomm-run" -n 2 --timeout 50 -- "$mp/test_coll" abort_queued
# Destroy waits for symcomm's own work on a caller's stream, not the caller's
# (a host function holding it 6 s); on a symcomm stream held by another
# communicator's wait, window free and destroy give up at their timeout (1 s),
# say so, and keep what the work may use: everything still ends right.
job gpu_destroy_own_work_2 60 2 "$gpu/test_gpu_drain"
gpus drain_deadline_2 2 && step drain_deadline_2 60 bash -c "set -o pipefail; SYMCOMM_BACKEND=cuda SYMCOMM_TIMEOUT=30 $B/bin/symcomm-run -n 2 --timeout 50 -- $mp/test_drain_deadline 2>&1 | tee /dev/stderr | grep 'gave up waiting for its work after 1.0 s' >/dev/null"
# Host memory, overruns, another GPU's memory and stream: refused, no fault.
job gpu_bad_pointers_2 60 2 "$gpu/test_gpu_pointers"
job gpu_bad_pointers_4 60 4 "$gpu/test_gpu_pointers"
# kill -9 of a rank (4 GPUs): the others fail naming it within 2 s, all
# exit, and every GPU's memory is back to where it started.
gpus fault_kill9_allreduce 4 && step fault_kill9_allreduce 90 bash tests/gpu/faults.sh "$B" kill_coll 2
gpus fault_kill9_allreduce_root 4 && step fault_kill9_allreduce_root 90 bash tests/gpu/faults.sh "$B" kill_coll 0
gpus fault_kill9_sendrecv 4 && step fault_kill9_sendrecv 90 bash tests/gpu/faults.sh "$B" kill_p2p 1
gpus fault_kill9_window_wait 4 && step fault_kill9_window_wait 90 bash tests/gpu/faults.sh "$B" kill_wait 3
# symcomm_comm_abort from a second thread of rank 0 while its all-reduce
# waits in a kernel (rank 3 stays away): ABORTED at once; the others name rank 0.
gpus fault_abort_thread 4 && step fault_abort_thread 90 bash tests/gpu/faults.sh "$B" abort_thread
gpus fault_peer_abort 4 && step fault_peer_abort 90 bash tests/gpu/faults.sh "$B" abort
# Between simulated hosts on the GPUs (issue 10): the NET program posts to the
# host, the progress thread stages GPU data through pinned memory; collectives
# across hosts combine with the REDUCE program. Simulated hosts share the
# machine's GPUs: each rank takes its own (its index among the machine's ranks).
hjob() { # NAME TIMEOUT N HOSTS PROGRAM ARGS...
  local name=$1 limit=$2 n=$3 hosts=$4
  shift 4
  gpus "$name" "$n" || return 0 # simulated hosts share the GPUs: a rank each
  step "$name" "$limit" env SYMCOMM_BACKEND=cuda SYMCOMM_TIMEOUT="${JOB_WAIT_S:-60}" \
    "$B/bin/symcomm-run" -n "$n" --hosts "$hosts" --timeout $((limit - 10)) -- "$@"
}
hjob net_p2p_sizes_2h 150 2 2 "$mp/test_p2p" sizes
hjob net_p2p_sizes_2h_threads 150 2 2 env SYMCOMM_NET_THREADS=8 "$mp/test_p2p" sizes
hjob net_coll_matrix_2h 300 2 2 "$mp/test_coll" matrix
hjob net_p2p_sizes_4x2h 180 4 2 "$mp/test_p2p" sizes
hjob net_p2p_ring_4h 120 4 4 "$mp/test_p2p" ring
hjob net_coll_matrix_2x2 300 4 2 "$mp/test_coll" matrix
hjob net_coll_large_2x2 240 4 2 "$mp/test_coll" large
# Seed 003's job on the host's GPUs split into 2 simulated hosts: TP inside
# each over NVLink, DP across them over TCP (2 x 4 needs 8 GPUs; issue 12).
hjob tp_dp_2x2 120 4 2 "$mp/test_tp_dp"
hjob tp_dp_2x4 150 8 2 "$mp/test_tp_dp"

# Every collective, a ring and put/signal under compute-sanitizer memcheck.
gpus memcheck_2 2 && step memcheck_2 300 bash tests/gpu/memcheck.sh "$B"

# Nothing of symcomm's is left on the GPUs.
step memory_released 30 bash tests/gpu/memory_back.sh "$memory_before" 10

echo "GPU memory after the runs (at the start: $memory_before MiB):"
nvidia-smi --query-gpu=index,memory.used --format=csv | tee "$OUT/memory_after.log"
echo "$pass passed, ${#failed[@]} failed, $skipped skipped in $(($(date +%s) - start_all)) s (logs in $OUT)"
if [ -n "${ONLY:-}" ] && [ $((pass + ${#failed[@]})) -eq 0 ]; then
  echo "FAIL: ONLY='$ONLY' matched no step"
  exit 1
fi
for f in "${failed[@]}"; do
  echo "---- $f"
  tail -n 30 "$OUT/$f.log"
done
[ ${#failed[@]} -eq 0 ]
