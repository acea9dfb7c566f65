#!/usr/bin/env bash
# The CPU peer baseline (issue 4, item 6): Open MPI's MPI_Allreduce beside
# symcomm-perf's all-reduce on the simulated backend, on this machine, in one run.
#
#   bash bench/run_cpu_baseline.sh                 # np 2 and 8, 3 runs each, 8 B..16 MiB
#   bash bench/run_cpu_baseline.sh --mpi-only      # only the Open MPI side
#   bash bench/run_cpu_baseline.sh --help
#
# What it does, in order:
#   1. installs openmpi-bin and libopenmpi-dev with apt-get when mpicc or mpirun is
#      missing (as root, or through sudo; --no-install refuses instead);
#   2. builds bench/mpi_allreduce.c (and tools/common/results_json.c) with mpicc -O2 into build/bench/;
#   3. builds symcomm (make -C <repo>) when tools/symcomm-perf exists; when it does
#      not exist yet, says so and runs the Open MPI side only;
#   4. for each run and each rank count, runs Open MPI then symcomm, alternately,
#      so that noise from the shared machine falls on both;
#   5. writes every JSON file (bench/RESULTS_FORMAT.md), every printed table, the
#      machine description, the commands and how busy the CPUs were before each run
#      into the results folder, and prints
#      the summary table of bench/compare.py (also saved as summary.md there).
# Exit status: 0 when every run finished with every element right, 1 otherwise.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NPS="2 8"
RUNS=3
MIN=8
MAX=16M
FACTOR=2
OUT=""
TIMEOUT=600
MPI_ONLY=0
INSTALL=1
# Extra arguments, for experiments: appended to mpirun's options / to symcomm-perf's.
MPIRUN_EXTRA=${MPIRUN_EXTRA:-}
SYMCOMM_PERF_EXTRA=${SYMCOMM_PERF_EXTRA:-}

usage() {
    cat <<EOF
usage: bash bench/run_cpu_baseline.sh [options]
  --np "N..."     rank counts (default "$NPS")
  --runs R        runs of each engine per rank count, alternating (default $RUNS)
  -b MIN -e MAX -f FACTOR
                  sizes in bytes, K/M suffixes (default $MIN .. $MAX, factor $FACTOR)
  --out DIR       results folder (default build/bench-results/<date-time>/)
  --timeout S     stop one benchmark run after S seconds (default $TIMEOUT)
  --mpi-only      run only the Open MPI side (no make, no symcomm-perf)
  --no-install    fail instead of installing Open MPI when it is missing
environment: MPIRUN_EXTRA (extra mpirun options), SYMCOMM_PERF_EXTRA (extra
symcomm-perf options), MPICC (default mpicc).
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
    --np) NPS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    -b) MIN=$2; shift 2 ;;
    -e) MAX=$2; shift 2 ;;
    -f) FACTOR=$2; shift 2 ;;
    --out) OUT=$(realpath -m -- "$2"); shift 2 ;;  # the script runs from the repository root
    --timeout) TIMEOUT=$2; shift 2 ;;
    --mpi-only) MPI_ONLY=1; shift ;;
    --no-install) INSTALL=0; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run_cpu_baseline: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

say() { echo "== $*"; }
die() { echo "run_cpu_baseline: $*" >&2; exit 1; }

# ---- 1. Open MPI --------------------------------------------------------------
SCRIPT=run_cpu_baseline
# shellcheck source=bench/lib_cpu.sh
. "$ROOT/bench/lib_cpu.sh"
MPICC=${MPICC:-mpicc}
ensure_openmpi "$INSTALL" "$MPICC"

# mpirun options. Open MPI refuses to run as root without --allow-run-as-root (or
# OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1), and refuses more
# ranks than cores without --oversubscribe; oversubscribed, it also turns on
# mpi_yield_when_idle by itself. pml ob1 with the self and vader (shared memory)
# BTLs is what Debian 12's Open MPI 4.1 picks on one host anyway (its
# /etc/openmpi/openmpi-mca-params.conf excludes UCX); naming them keeps TCP out.
# shellcheck disable=SC2054
MPIRUN=(mpirun --oversubscribe --mca pml ob1 --mca btl self,vader)
[ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
# shellcheck disable=SC2206
[ -n "$MPIRUN_EXTRA" ] && MPIRUN+=($MPIRUN_EXTRA)

# ---- 2. the MPI program ---------------------------------------------------------
MPI_BIN=build/bench/mpi_allreduce
cd "$ROOT"
mkdir -p build/bench
MPI_SRCS=(bench/mpi_allreduce.c tools/common/results_json.c)
if [ ! -x "$MPI_BIN" ] || [ -n "$(find "${MPI_SRCS[@]}" tools/common/results_json.h -newer "$MPI_BIN")" ]; then
    say "building $MPI_BIN: $MPICC -O2 -Wall -Wextra -o $MPI_BIN ${MPI_SRCS[*]}"
    "$MPICC" -O2 -Wall -Wextra -o "$MPI_BIN" "${MPI_SRCS[@]}"
fi

# ---- 3. symcomm -----------------------------------------------------------------
RUN_SYMCOMM=0
if [ "$MPI_ONLY" = 1 ]; then
    say "--mpi-only: skipping symcomm"
elif [ ! -d tools/symcomm-perf ]; then
    say "symcomm-perf does not exist yet in this tree (no tools/symcomm-perf/): running the Open MPI side only"
else
    say "building symcomm: make -C $ROOT"
    make -C "$ROOT" -j"$(nproc)" >/dev/null || die "make failed (run 'make' to see why, or pass --mpi-only)"
    if [ ! -x build/bin/symcomm-perf ] || [ ! -x build/bin/symcomm-run ]; then
        die "make succeeded but build/bin/symcomm-perf or build/bin/symcomm-run is missing"
    fi
    RUN_SYMCOMM=1
fi

# ---- 4. the runs ----------------------------------------------------------------
[ -n "$OUT" ] || OUT=build/bench-results/$(date -u +%Y-%m-%dT%H%M%SZ)
mkdir -p "$OUT"
say "results in $OUT"

describe_machine "$ROOT" "$MPICC" >"$OUT/machine.txt"
: >"$OUT/commands.txt"

busy=$(cpu_busy)
if [ "$busy" -gt 25 ]; then
    say "warning: the CPUs were $busy% busy before starting: other work will disturb the figures (see $OUT/load.txt)"
fi
FAILED=0
for run in $(seq 1 "$RUNS"); do
    for np in $NPS; do
        json="$OUT/openmpi-np$np-run$run.json"
        cmd=("${MPIRUN[@]}" -np "$np" "$MPI_BIN" -b "$MIN" -e "$MAX" -f "$FACTOR" --json "$json")
        run_one "openmpi-np$np-run$run" "${cmd[*]}" "${cmd[@]}" --command "${cmd[*]}"
        if [ "$RUN_SYMCOMM" = 1 ]; then
            json="$OUT/symcomm-np$np-run$run.json"
            # shellcheck disable=SC2206
            cmd=(build/bin/symcomm-run -n "$np" --timeout "$TIMEOUT" -- build/bin/symcomm-perf
                 -o allreduce -d float32 --op sum -b "$MIN" -e "$MAX" -f "$FACTOR" $SYMCOMM_PERF_EXTRA --json "$json")
            run_one "symcomm-np$np-run$run" "${cmd[*]}" "${cmd[@]}"
        fi
    done
done

# ---- 5. summary -----------------------------------------------------------------
say "summary (median of $RUNS runs), also in $OUT/summary.md"
python3 bench/compare.py "$OUT" | tee "$OUT/summary.md" || FAILED=1
[ "$FAILED" = 0 ] || echo "run_cpu_baseline: some runs failed or found wrong elements; see above and $OUT/" >&2
exit "$FAILED"
