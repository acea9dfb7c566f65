#!/usr/bin/env bash
# nccl-tests on symcomm's libnccl.so.2 and on NCCL's own (issue 11).
#   bash tests/gpu/nccl_tests.sh NCCL_TESTS_SRC [BUILD]
# NCCL_TESTS_SRC is a copy of github.com/NVIDIA/nccl-tests in a folder git
# ignores (never committed). Its binaries are built there, with MPI, against
# this machine's nccl.h, unless NCCL_TESTS_SRC/build already holds them.
# Each of all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce
# and sendrecv runs under mpirun, one process per GPU, on 2 and 4 GPUs (those
# the host has), plain, with -G 1 (CUDA graphs) and with -R 2 (registered
# symmetric buffers), on each library (symcomm's through LD_PRELOAD), -c 1.
# A run passes when it exits 0 and says "Out of bounds values : 0 OK".
# Logs and summary.txt under $OUT (else BUILD/nccl-tests-logs).
# Environment: NP ("2 4"), TESTS, VARIANTS, LIBS ("symcomm nccl"), MAXBYTES (64M).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
SRC=${1:?usage: nccl_tests.sh NCCL_TESTS_SRC [BUILD]}
B=${2:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$(cd "$SRC" && pwd) || exit 2
cd "$top" || exit 2
OUT=${OUT:-$B/nccl-tests-logs}
mkdir -p "$OUT"
shim=$top/$B/lib/nccl/libnccl.so.2
[ -f "$shim" ] || { echo "FAIL: $shim was not built (no nccl.h found at build time?)"; exit 2; }
TESTS=${TESTS:-"all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv"}
VARIANTS=${VARIANTS:-"plain G1 R2"}
LIBS=${LIBS:-"symcomm nccl"}
MAXBYTES=${MAXBYTES:-64M}
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')

if [ ! -x "$SRC/build/all_reduce_perf" ]; then
  inc=$(dirname "$(find /usr/include /usr/local/cuda/include -maxdepth 1 -name nccl.h 2>/dev/null | head -1)")
  [ -n "$inc" ] || { echo "FAIL: no nccl.h to build nccl-tests against"; exit 2; }
  home=$(mktemp -d)
  ln -s "$inc" "$home/include"
  lib=$(dirname "$(ldconfig -p | awk '/libnccl.so.2 / {print $NF; exit}')")
  ln -s "${lib:-/usr/lib/x86_64-linux-gnu}" "$home/lib"
  mpi=$(dirname "$(dirname "$(mpicc -showme:incdirs 2>/dev/null | awk '{print $1}')/x")")
  echo "building nccl-tests: nccl.h from $inc, MPI from $mpi"
  make -C "$SRC" -j"$(nproc)" MPI=1 MPI_HOME="$mpi" NCCL_HOME="$home" \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" >"$OUT/build.log" 2>&1 ||
    { echo "FAIL: building nccl-tests (log $OUT/build.log)"; tail -5 "$OUT/build.log"; exit 2; }
fi

# The binaries may have been built on another machine: where the CUDA runtime
# they need is not on the loader's path, a folder holding only that library
# is added (not the CUDA folder, which may hold an NCCL of its own).
missing=$(ldd "$SRC/build/all_reduce_perf" | awk '/not found/ {print $1}')
for lib in $missing; do
  found=$(find /usr/local/cuda*/lib* /usr/lib/x86_64-linux-gnu -name "$lib" 2>/dev/null | head -1)
  [ -n "$found" ] || { echo "FAIL: nccl-tests needs $lib, not on this machine"; exit 2; }
  extra=${extra:-$(mktemp -d)}
  ln -sf "$found" "$extra/$lib"
done
[ -n "${extra:-}" ] && export LD_LIBRARY_PATH="$extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
ldd "$SRC/build/all_reduce_perf" >"$OUT/ldd.txt" 2>&1

pass=0
failed=()
: >"$OUT/summary.txt"
for np in ${NP:-2 4}; do
  if [ "$ngpus" -lt "$np" ]; then
    echo "SKIP $np GPUs: this host has $ngpus" | tee -a "$OUT/summary.txt"
    continue
  fi
  for t in $TESTS; do
    for v in $VARIANTS; do
      case $v in plain) opt="" ;; G1) opt="-G 1" ;; R2) opt="-R 2" ;; *) opt="" ;; esac
      for lib in $LIBS; do
        pre=""
        [ "$lib" = symcomm ] && pre=$shim
        name=${t}_${np}_${v}_${lib}
        timeout -k 5 300 mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$np" \
          -x LD_PRELOAD="$pre" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS \
          "$SRC/build/${t}_perf" -b 8 -e "$MAXBYTES" -f 4 -c 1 -g 1 $opt >"$OUT/$name.log" 2>&1
        rc=$?
        oob=$(grep -o 'Out of bounds values : [0-9]* [A-Z]*' "$OUT/$name.log" | tail -1)
        bw=$(grep -o 'Avg bus bandwidth *: *[0-9.]*' "$OUT/$name.log" | awk '{print $NF}')
        if [ $rc -eq 0 ] && [ "$oob" = "Out of bounds values : 0 OK" ]; then
          pass=$((pass + 1))
          printf 'PASS %-32s avg busbw %8s GB/s\n' "$name" "$bw" | tee -a "$OUT/summary.txt"
        else
          failed+=("$name")
          printf 'FAIL %-32s exit %d, %s (log %s)\n' "$name" "$rc" "${oob:-no result line}" "$OUT/$name.log" | tee -a "$OUT/summary.txt"
        fi
      done
    done
  done
done
echo "${pass} passed, ${#failed[@]} failed" | tee -a "$OUT/summary.txt"
[ ${#failed[@]} -eq 0 ]
