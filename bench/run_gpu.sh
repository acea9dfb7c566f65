#!/usr/bin/env bash
# symcomm against NCCL on the GPUs of this host, in one run: symcomm-perf with
# the CUDA backend and with --engine nccl, alternately, over the collectives of
# docs/PERFORMANCE.md from 8 B to 1 GiB.
#
#   bash bench/run_gpu.sh                        # 4 ranks, 1 run, 8 B .. 1 GiB
#   bash bench/run_gpu.sh --np 2 --runs 3 -e 64M
#   bash bench/run_gpu.sh --help
#
# For each run and each operation it runs NCCL, then symcomm (so that drift
# of the machine falls on both), each a `symcomm-run -n NP -- symcomm-perf`
# with --json; then prints bench/compare.py's every-size table per operation
# (also saved as summary.md) and, where gnuplot is installed, draws the busbw
# plot (bench/plot/plot_busbw.sh; elsewhere, run it on the copied folder).
# NVLink multicast stays off for NCCL (NCCL_NVLS_ENABLE=0: the machines are
# shared, and symcomm does not use it either).
# Exit status: 0 when every run finished with every element right, 1 otherwise.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NP=4
RUNS=1
MIN=8
MAX=1G
OPS="allreduce allgather reducescatter alltoall sendrecv"
OUT=""
TIMEOUT=900
EXTRA=${SYMCOMM_PERF_EXTRA:-}

usage() {
    cat <<USAGE
usage: bash bench/run_gpu.sh [options]
  --np N          ranks, one GPU each (default $NP)
  --runs R        runs of each engine, alternating (default $RUNS)
  -b MIN -e MAX   sizes in bytes, K/M/G suffixes, doubling (default $MIN .. $MAX)
  --ops "OP..."   operations (default "$OPS")
  --out DIR       results folder (default build/bench-results/gpu-<date-time>/)
  --timeout S     stop one benchmark run after S seconds (default $TIMEOUT)
environment: SYMCOMM_PERF_EXTRA (extra symcomm-perf options for both engines,
e.g. "-G 1" or "-R 1").
USAGE
}

while [ $# -gt 0 ]; do
    case "$1" in
    --np) NP=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    -b) MIN=$2; shift 2 ;;
    -e) MAX=$2; shift 2 ;;
    --ops) OPS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run_gpu.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done

export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-$ROOT/build/bench-results/gpu-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
make -C "$ROOT" -j"$(nproc)" all >"$OUT/build.log" 2>&1 || { echo "run_gpu.sh: make failed (see $OUT/build.log)" >&2; exit 1; }
run="$ROOT/build/bin/symcomm-run"
perf="$ROOT/build/bin/symcomm-perf"
nvidia-smi -L >"$OUT/gpus.txt" 2>&1 || true
nvidia-smi topo -m >>"$OUT/gpus.txt" 2>&1 || true

status=0
for r in $(seq 1 "$RUNS"); do
    for op in $OPS; do
        for engine in nccl symcomm; do
            name="$engine-$op-np$NP-run$r"
            # shellcheck disable=SC2086
            cmd=("$run" -n "$NP" --timeout "$TIMEOUT" -- "$perf" --engine "$engine" -o "$op" -d float32
                 -b "$MIN" -e "$MAX" -f 2 --json "$OUT/$name.json" $EXTRA)
            echo "${cmd[*]}" >"$OUT/$name.txt"
            if ! "${cmd[@]}" >>"$OUT/$name.txt" 2>&1; then
                echo "run_gpu.sh: $name failed: $(tail -3 "$OUT/$name.txt")" >&2
                status=1
            fi
            echo "done: $name ($(grep -c '^ *[0-9]' "$OUT/$name.txt") lines)"
        done
    done
done

: >"$OUT/summary.md"
for op in $OPS; do
    echo "## $op" >>"$OUT/summary.md"
    python3 "$ROOT/bench/compare.py" --op "$op" --peer nccl --bw-sizes 1M,64M,1G --all "$OUT" >>"$OUT/summary.md" 2>&1 || status=1
done
cat "$OUT/summary.md"
if command -v gnuplot >/dev/null 2>&1; then
    bash "$ROOT/bench/plot/plot_busbw.sh" --no-install -o "$OUT/busbw.png" "$OUT" || status=1
else
    echo "run_gpu.sh: no gnuplot here: plot with bash bench/plot/plot_busbw.sh -o busbw.png $OUT"
fi
echo "results: $OUT"
exit $status
