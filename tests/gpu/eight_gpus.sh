#!/usr/bin/env bash
# Issue 12 on a lent 8-GPU host, in parts that each fit one call of the
# device tool (at most 600 s), every part's files packed into one archive:
#   bash tests/gpu/eight_gpus.sh test      make test-gpu on all 8 GPUs (its 8-GPU
#                                          steps: collectives, send/recv, seed 003's
#                                          job as 2 simulated hosts x 4 GPUs), and the
#                                          host's topology as symcomm-topo writes it
#                                          (topo_check: it agrees with nvidia-smi)
#   bash tests/gpu/eight_gpus.sh gate K    bench/run_gpu.sh --gate --np 8, run K of
#                                          every part (symcomm and NCCL alternately)
# Writes $OUT/eight-test.tgz or $OUT/eight-gateK.tgz (OUT: the device tool's
# folder; else build/eight) and exits as the part did. Judge the runs, once
# all are here, unpacked into one folder (the files of eight-gate1/,
# eight-gate2/, ... together), with
#   bash bench/run_gpu.sh --report --np 8 --out FOLDER
# (runs from different hosts are refused there: each part records its GPUs).
# Needs the build (make -j tests) carried over; builds nothing.
set -u
B=${B:-build}
OUT=${OUT:-$B/eight}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 2
fail() { echo "eight_gpus.sh: $*"; exit 2; }
ngpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU')
[ "$ngpus" -ge 8 ] || fail "this host has $ngpus GPUs, not 8: nothing run"
[ -x "$B/bin/symcomm-perf" ] && [ -f "$B/lib/libsymcomm_cuda.so" ] || fail "no CUDA build in $B"
t0=$(date +%s)
case "${1:-}" in
test)
  work="$OUT/eight-test"
  mkdir -p "$work"
  nvidia-smi -L >"$work/gpus.txt" 2>&1
  OUT="$work/test-gpu" timeout -k 5 560 bash tests/gpu/run.sh "$B" >"$work/test-gpu.out" 2>&1
  rc=$?
  echo "test-gpu exited $rc after $(($(date +%s) - t0)) s"
  grep -E "^(PASS|FAIL|SKIP)|passed" "$work/test-gpu.out" | tail -12
  ;;
gate)
  k=${2:-}
  [[ $k =~ ^[1-9]$ ]] || fail "gate needs the run's number, 1 to 9"
  work="$OUT/eight-gate$k"
  mkdir -p "$work"
  timeout -k 5 560 bash bench/run_gpu.sh --gate --np 8 --part "np 2 gemm" --run "$k" --build "$B" \
    --no-make --out "$work" --timeout 300 >"$work/run_gpu.out" 2>&1
  rc=$?
  echo "run_gpu.sh exited $rc after $(($(date +%s) - t0)) s"
  tail -5 "$work/run_gpu.out"
  ;;
*)
  fail "usage: eight_gpus.sh test | gate K"
  ;;
esac
tar czf "$work.tgz" -C "$(dirname "$work")" "$(basename "$work")" && rm -rf "$work"
ls -la "$work.tgz"
exit "$rc"
