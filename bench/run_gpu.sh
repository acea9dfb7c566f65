#!/usr/bin/env bash
# symcomm against NCCL on the GPUs of this host, in one run: symcomm-perf with
# the CUDA backend and with --engine nccl, alternately, over the collectives of
# docs/PERFORMANCE.md from 8 B to 1 GiB.
#
#   bash bench/run_gpu.sh                        # 4 ranks, 1 run, 8 B .. 1 GiB
#   bash bench/run_gpu.sh --np 2 --runs 3 -e 64M
#   bash bench/run_gpu.sh --gate                 # issue 9's whole comparison and verdict
#   bash bench/run_gpu.sh --help
#
# For each run and each operation it runs NCCL, then symcomm (so that drift
# of the machine falls on both), each a `symcomm-run -n NP -- symcomm-perf`
# with --json; then prints bench/compare.py's every-size table per operation
# (also saved as summary.md) and, where gnuplot is installed, draws the busbw
# plot (bench/plot/plot_busbw.sh; elsewhere, run it on the copied folder).
#
# --gate runs what issue 9 measures, float32 sum, CUDA graphs (-G 1), in runs
# that alternate the engines: on NP GPUs (default 4) all-reduce, all-gather,
# reduce-scatter, all-to-all by symcomm on windows (-R 1), NCCL plain and NCCL
# on registered windows (-R 1), and all-reduce by symcomm on plain buffers; on
# 2 GPUs every collective and sendrecv the same three ways; on NP GPUs 64 MiB
# all-reduces beside an 8192 x 8192 bf16 GEMM (--gemm 8192), symcomm and NCCL.
# symcomm's runs log their choices (SYMCOMM_DEBUG=INFO, logs/): the SMs each
# size class occupies. Then bench/gate_gpu.py prints the targets' table and
# the verdict (gate.md). --part and --run split the work into calls of a few
# minutes each into one folder (--out); --report prints the verdict of what
# the folder holds.
# NVLink multicast stays off for NCCL (NCCL_NVLS_ENABLE=0: the machines are
# shared, and symcomm does not use it either).
# Exit status: 0 when every run finished with every element right, 1 otherwise,
# 2 bad options. With --gate and --report: gate_gpu.py's (0 every target holds,
# 1 a target missed, 2 not judged: rows missing, too few runs, wrong elements),
# or with --gate 3 when a run of this call failed.
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
GATE=0
REPORT=0
PARTS="np 2 gemm"
ONLY_RUN=""
GRAPH=1
GEMM_N=8192
NCCL_LIB=""
BUILD=build
MAKE=1
MIN_RUNS=3

usage() {
    cat <<USAGE
usage: bash bench/run_gpu.sh [options]
  --np N          ranks, one GPU each (default $NP)
  --runs R        runs of each engine, alternating (default $RUNS; --gate: 3)
  -b MIN -e MAX   sizes in bytes, K/M/G suffixes, doubling (default $MIN .. $MAX)
  --ops "OP..."   operations (default "$OPS"; not with --gate)
  --out DIR       results folder (default build/bench-results/gpu-<date-time>/)
  --timeout S     stop one benchmark run after S seconds (default $TIMEOUT)
  --gate          issue 9's comparison (see the top of this file), then its verdict
  --part "P..."   with --gate, only these parts: np (NP GPUs), 2 (2 GPUs), gemm
                  (default "$PARTS")
  --run K         with --gate, only run K of R (the folder gathers the runs)
  --report        only the verdict of what --out holds (bench/gate_gpu.py; give the
                  -b, -e, --np, --graph and --gemm the runs had)
  --min-runs M    runs each median of the verdict needs (default $MIN_RUNS; below 3 the
                  verdict is never a pass)
  --graph N       -G N of symcomm-perf with --gate (default $GRAPH; 0 where no CUDA
                  stream is, e.g. on the simulated backend)
  --gemm N        the GEMM's size with --gate (default $GEMM_N)
  --nccl-lib PATH the libnccl.so.2 of --engine nccl (default: the loader's)
  --build DIR     the build folder (default $BUILD); --no-make: use it as it is
environment: SYMCOMM_PERF_EXTRA (extra symcomm-perf options for both engines,
e.g. "-G 1" or "-R 1").
USAGE
}

RUNS_SET=0
PART_SET=0
OPS_SET=0
while [ $# -gt 0 ]; do
    case "$1" in
    --np) NP=$2; shift 2 ;;
    --runs) RUNS=$2; RUNS_SET=1; shift 2 ;;
    -b) MIN=$2; shift 2 ;;
    -e) MAX=$2; shift 2 ;;
    --ops) OPS=$2; OPS_SET=1; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --gate) GATE=1; shift ;;
    --part) PARTS=$2; PART_SET=1; shift 2 ;;
    --run) ONLY_RUN=$2; shift 2 ;;
    --report) REPORT=1; shift ;;
    --min-runs) MIN_RUNS=$2; shift 2 ;;
    --graph) GRAPH=$2; shift 2 ;;
    --gemm) GEMM_N=$2; shift 2 ;;
    --nccl-lib) NCCL_LIB=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --no-make) MAKE=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run_gpu.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
bad() { echo "run_gpu.sh: $*" >&2; exit 2; }
is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
[ "$GATE" = 1 ] && [ "$RUNS_SET" = 0 ] && RUNS=3
is_count "$RUNS" || bad "--runs $RUNS: give a count from 1"
is_count "$NP" || bad "--np $NP: give a count from 1"
is_count "$MIN_RUNS" || bad "--min-runs $MIN_RUNS: give a count from 1"
if [ "$GATE" = 0 ] && [ "$REPORT" = 0 ]; then
    [ -z "$ONLY_RUN" ] && [ "$PART_SET" = 0 ] || bad "--run and --part go with --gate"
else
    [ "$OPS_SET" = 0 ] || bad "--ops has no effect with --gate or --report: the gate runs its own operations"
    [ -z "$EXTRA" ] || bad "SYMCOMM_PERF_EXTRA has no effect with --gate or --report: unset it"
fi
[ -n "$PARTS" ] || bad "--part: name at least one of np, 2, gemm"
for p in $PARTS; do
    case "$p" in np|2|gemm) ;; *) bad "--part takes np, 2 and gemm, not '$p'" ;; esac
done
if [ "$NP" = 2 ] && [[ " $PARTS " == *" np "* ]] && [[ " $PARTS " == *" 2 "* ]]; then
    bad "--np 2 makes part np part 2 again (their files would overwrite each other): give --part \"2 gemm\""
fi
if [ -n "$ONLY_RUN" ] && ! { is_count "$ONLY_RUN" && [ "$ONLY_RUN" -le "$RUNS" ]; }; then
    bad "--run $ONLY_RUN: give a run from 1 to $RUNS"
fi
# What bench/gate_gpu.py needs to know of the runs.
judge=(--min-runs "$MIN_RUNS" --range "$MIN-$MAX" --np "$NP" --gemm "$GEMM_N")
[ "$GRAPH" = 0 ] && judge+=(--allow-no-graph)
# judge_out: the verdict of what $OUT holds into gate.md, printed; verdict its exit status.
judge_out() {
    python3 "$ROOT/bench/gate_gpu.py" "${judge[@]}" "$OUT" >"$OUT/gate.md"
    verdict=$?
    cat "$OUT/gate.md"
}

export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if [ "$REPORT" = 1 ]; then
    [ -n "$OUT" ] || bad "--report needs --out DIR"
    [ -d "$OUT" ] || bad "--report: $OUT is not a folder"
    judge_out
    exit $verdict
fi
OUT=${OUT:-$ROOT/build/bench-results/gpu-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
if [ "$MAKE" = 1 ]; then
    make -C "$ROOT" -j"$(nproc)" BUILD="${BUILD#"$ROOT"/}" all >"$OUT/build.log" 2>&1 ||
        { echo "run_gpu.sh: make failed (see $OUT/build.log)" >&2; exit 1; }
fi
run="$BUILD/bin/symcomm-run"
perf="$BUILD/bin/symcomm-perf"
[ -x "$run" ] && [ -x "$perf" ] || { echo "run_gpu.sh: $run or $perf is missing: build first (make all)" >&2; exit 1; }
nccl_opt=()
[ -n "$NCCL_LIB" ] && nccl_opt=(--nccl-lib "$NCCL_LIB")
nvidia-smi -L >"$OUT/gpus.txt" 2>&1 || true
nvidia-smi topo -m >>"$OUT/gpus.txt" 2>&1 || true

status=0
# bench_one NAME NP ENGINE ARGS...: one benchmark run into NAME.json/.txt, what an
# earlier run of that name left removed first; a failed run leaves NAME.failed
# (the verdict then says so). With --gate symcomm's runs also log their choices
# (logs/NAME.log.RANK).
bench_one() {
    local name=$1 np=$2 engine=$3
    shift 3
    rm -f "$OUT/$name.json" "$OUT/$name.txt" "$OUT/$name.failed" "$OUT/logs/$name.log".*
    local cmd=("$run" -n "$np" --timeout "$TIMEOUT" -- "$perf" --engine "$engine" -d float32 --json "$OUT/$name.json" "$@")
    local env=()
    if [ "$engine" = nccl ]; then
        cmd+=("${nccl_opt[@]}")
    elif [ "$GATE" = 1 ]; then
        mkdir -p "$OUT/logs"
        env=(SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=COLL SYMCOMM_DEBUG_FILE="$OUT/logs/$name.log.%r")
    fi
    echo "${cmd[*]}" >"$OUT/$name.txt"
    if ! env "${env[@]}" "${cmd[@]}" >>"$OUT/$name.txt" 2>&1; then
        echo "run_gpu.sh: $name failed: $(tail -3 "$OUT/$name.txt")" >&2
        touch "$OUT/$name.failed"
        status=1
    fi
    echo "done: $name ($(grep -c '^ *[0-9]' "$OUT/$name.txt") lines)"
}

# three_ways NP OPS RUN ARGS...: NCCL plain, symcomm on windows, NCCL on registered windows.
three_ways() {
    local np=$1 ops=$2 r=$3
    shift 3
    bench_one "nccl-np$np-R0-run$r" "$np" nccl -o "$ops" "$@" -R 0
    bench_one "symcomm-np$np-R1-run$r" "$np" symcomm -o "$ops" "$@" -R 1
    bench_one "nccl-np$np-R1-run$r" "$np" nccl -o "$ops" "$@" -R 1
}

if [ "$GATE" = 1 ]; then
    gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU')
    sizes=(-b "$MIN" -e "$MAX" -f 2 -G "$GRAPH")
    for r in $(seq 1 "$RUNS"); do
        [ -n "$ONLY_RUN" ] && [ "$r" != "$ONLY_RUN" ] && continue
        for part in $PARTS; do
            np=$NP
            [ "$part" = 2 ] && np=2
            if [ "$gpus" -gt 0 ] && [ "$gpus" -lt "$np" ]; then
                echo "run_gpu.sh: part $part needs $np GPUs, this host has $gpus: skipped (its targets stay unjudged)"
                continue
            fi
            # Which host ran this part of run r (calls of --part may land on
            # other hosts): the verdict refuses runs of several hosts, and
            # a record without GPUs (nvidia-smi failed). Without nvidia-smi,
            # the driver's own list of the GPUs' UUIDs; on simulated GPUs
            # the host's name stands for them.
            if command -v nvidia-smi >/dev/null 2>&1; then
                nvidia-smi -L >"$OUT/gpus-run$r-$part.txt" 2>&1 || true
            elif ls /proc/driver/nvidia/gpus/*/information >/dev/null 2>&1; then
                i=0
                for f in /proc/driver/nvidia/gpus/*/information; do
                    echo "GPU $i: $(sed -n 's/^Model: *//p' "$f") (UUID: $(sed -n 's/^GPU UUID: *//p' "$f"))"
                    i=$((i + 1))
                done >"$OUT/gpus-run$r-$part.txt"
            else
                echo "HOST $(hostname) (no nvidia-smi: simulated GPUs)" >"$OUT/gpus-run$r-$part.txt"
            fi
            case "$part" in
            np)
                three_ways "$np" allreduce,allgather,reducescatter,alltoall "$r" "${sizes[@]}"
                bench_one "symcomm-np$np-R0-run$r" "$np" symcomm -o allreduce "${sizes[@]}" -R 0
                ;;
            2)
                three_ways 2 allreduce,allgather,reducescatter,alltoall,broadcast,reduce,sendrecv "$r" "${sizes[@]}"
                ;;
            gemm)
                bench_one "nccl-gemm-np$np-R0-run$r" "$np" nccl -o allreduce -b 64M -e 64M -G "$GRAPH" -R 0 --gemm "$GEMM_N"
                bench_one "symcomm-gemm-np$np-R1-run$r" "$np" symcomm -o allreduce -b 64M -e 64M -G "$GRAPH" -R 1 --gemm "$GEMM_N"
                ;;
            esac
        done
    done
    judge_out
    # The busbw plots: per rank count and operation, symcomm -R 1 and NCCL both ways.
    if command -v gnuplot >/dev/null 2>&1; then
        shopt -s nullglob
        for np in "$NP" 2; do
            for op in allreduce allgather reducescatter alltoall broadcast reduce sendrecv; do
                sym=("$OUT"/symcomm-np$np-R1-run*.json) plain=("$OUT"/nccl-np$np-R0-run*.json)
                reg=("$OUT"/nccl-np$np-R1-run*.json)
                [ ${#sym[@]} -gt 0 ] && grep -q "\"op\": \"$op\"" "${sym[0]}" || continue
                bash "$ROOT/bench/plot/plot_busbw.sh" --no-install --op "$op" --title "busbw, $op, $np GPUs, -G $GRAPH" \
                    -o "$OUT/busbw-np$np-$op.png" --label "symcomm -R 1" "${sym[@]}" --label "NCCL plain" "${plain[@]}" \
                    --label "NCCL -R 1" "${reg[@]}" >/dev/null ||
                    echo "run_gpu.sh: the plot of $op on $np GPUs failed (the verdict stands)" >&2
            done
        done
        shopt -u nullglob
    else
        echo "run_gpu.sh: no gnuplot here: plot with bash bench/plot/plot_busbw.sh on the copied folder"
    fi
    echo "results: $OUT"
    [ $status != 0 ] && exit 3
    exit $verdict
fi

for r in $(seq 1 "$RUNS"); do
    for op in $OPS; do
        for engine in nccl symcomm; do
            # shellcheck disable=SC2086
            bench_one "$engine-$op-np$NP-run$r" "$NP" "$engine" -o "$op" -b "$MIN" -e "$MAX" -f 2 $EXTRA
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
