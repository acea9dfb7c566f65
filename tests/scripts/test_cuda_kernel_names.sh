#!/usr/bin/env bash
# The CUDA backend's program table against its kernels, without a GPU:
# tests/cuda_host/test_cuda_programs checks which LL kernel each call runs
# and prints every kernel the table names with its file; each must be
# defined (extern "C" __global__, found in nvcc -E's output) in that file of
# src/backend/cuda/kernels/, and every kernel defined there must be in the
# table. A build made without nvcc has neither: SKIP, saying so.
#   bash tests/scripts/test_cuda_kernel_names.sh
set -u -o pipefail
B=${B:-build}
fail() { echo "FAIL: $*"; exit 1; }
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
prog=$B/tests/cuda_host/test_cuda_programs
# The build's own word on nvcc (make NVCC= builds without it, nvcc or not):
# the table's test, or the backend (not in sanitizer builds), was built.
if [ ! -x "$prog" ] && [ ! -f "$B/lib/libsymcomm_cuda.so" ]; then
  echo "SKIP: $B was built without nvcc: no CUDA backend, no program table to check"
  exit 0
fi
[ -x "$prog" ] || fail "$B has the CUDA backend but $prog was not built"
[ -n "$nvcc" ] || fail "$B was built with nvcc, which is not here now"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prog" >"$tmp/table.txt" || fail "the program table: $(tail -3 "$tmp/table.txt")"
[ -s "$tmp/table.txt" ] || fail "the table printed no kernel"
for cu in src/backend/cuda/kernels/*.cu; do
  f=$(basename "$cu" .cu)
  "$nvcc" -E -std=c++17 -Isrc -Iinclude "$cu" 2>"$tmp/$f.err" | tr '\n' ' ' |
    { grep -oE 'extern "C" __attribute__\(\(global\)\) void (__attribute__\(\([^)]*\)+\) )?[A-Za-z_0-9]+\(' || [ $? -eq 1 ]; } |
    sed -E 's/.* ([A-Za-z_0-9]+)\($/\1/' | sort -u | sed "s/\$/ $f/" >>"$tmp/defined.txt" ||
    fail "nvcc -E $cu: $(tail -3 "$tmp/$f.err")"
done
[ -s "$tmp/defined.txt" ] || fail "no kernel found in src/backend/cuda/kernels/*.cu"
sort -u "$tmp/table.txt" >"$tmp/t" && sort -u "$tmp/defined.txt" >"$tmp/d"
missing=$(comm -23 "$tmp/t" "$tmp/d")
[ -z "$missing" ] || fail "kernels the table names that their file does not define: $missing"
unused=$(comm -13 "$tmp/t" "$tmp/d")
[ -z "$unused" ] || fail "kernels defined that the table never runs: $unused"
echo "ok: $(wc -l <"$tmp/t") kernels, each in the file the table names; the LL variants right"
