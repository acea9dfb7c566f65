#!/usr/bin/env bash
# make test-gpu: the CUDA backend on a host with NVIDIA GPUs.
#   bash tests/gpu/run.sh [BUILD]      (logs under $OUT, else BUILD/gpu-logs)
# Needs a build with nvcc (BUILD/lib/libsymcomm_cuda.so). Refuses at once,
# touching nothing, where no GPU answers. Each step's log is OUT/<step>.log;
# a summary line per step, then the failures' tails.
set -u
B=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top"
OUT=${OUT:-$B/gpu-logs}
mkdir -p "$OUT"
export B

echo "== environment" | tee "$OUT/environment.log"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >>"$OUT/environment.log" 2>&1; then
  echo "FAIL: no GPU here (nvidia-smi is missing or lists none): make test-gpu runs on a GPU host" |
    tee -a "$OUT/environment.log"
  exit 2
fi
ngpus=$(nvidia-smi -L | grep -c '^GPU')
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
failed=()
step() { # NAME TIMEOUT COMMAND...
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  timeout -k 5 "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  local dt=$(($(date +%s) - t0))
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1))
    printf 'PASS %-32s %4d s  %s\n' "$name" "$dt" "$(tail -n 1 "$OUT/$name.log")"
  else
    failed+=("$name")
    printf 'FAIL %-32s %4d s  (exit %d; log %s)\n' "$name" "$dt" "$rc" "$OUT/$name.log"
  fi
}
cuda_job=(env SYMCOMM_BACKEND=cuda SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=INIT,DEV "$B/bin/symcomm-run" --timeout 110)

# One process: the backend's entry, device 0 (bus id, pointer checks, VMM
# export/import, pinned memory), kernels on a made and a wrapped stream, a
# WAIT that times out and names itself, events.
step unit_cuda_backend 120 bash -c "set -o pipefail; $B/tests/unit/test_cuda_backend $B/lib/libsymcomm_cuda.so 2>&1 | tee /dev/stderr | grep -q 'all passed on a GPU'"
# auto picks CUDA here and says so; cuda works; missing/foreign objects named.
step backend_select 120 bash tests/scripts/test_backend_select.sh
# Init, split and destroy on the GPUs: real bus ids, one device per rank,
# windows of send/recv and collectives made with cuMemCreate and imported
# by the other ranks (fd exchange).
step comm_basic_2 120 "${cuda_job[@]}" -n 2 -- "$B/tests/mp/test_comm_basic" 1 2
[ "$ngpus" -ge 4 ] && step comm_basic_4 120 "${cuda_job[@]}" -n 4 -- "$B/tests/mp/test_comm_basic" 1 2
# Two ranks on one GPU stay an error.
step same_gpu_refused 60 bash -c "SYMCOMM_DEVICE=0 SYMCOMM_BACKEND=cuda $B/bin/symcomm-run -n 2 --timeout 50 -- $B/tests/mp/test_comm_basic 1 1 2>&1 | tee /dev/stderr | grep -q 'both use device 0'"
# The topology tool under the CUDA backend: bus ids as nvidia-smi shows them.
step topo_tool 60 "${cuda_job[@]}" -n "$ngpus" -- "$B/bin/symcomm-topo"

echo "GPU memory after the runs (nothing of symcomm's should be left):"
nvidia-smi --query-gpu=index,memory.used --format=csv | tee "$OUT/memory_after.log"
echo "$pass passed, ${#failed[@]} failed (logs in $OUT)"
for f in "${failed[@]}"; do
  echo "---- $f"
  tail -n 30 "$OUT/$f.log"
done
[ ${#failed[@]} -eq 0 ]
