#!/usr/bin/env bash
# On a GPU host (for `make test-gpu`): 2 ranks of `test_gpu_stream small`
# (every collective, a send/recv ring, put/signal/wait, all checked), each
# rank under compute-sanitizer's memcheck. Both must exit 0 and report
# "ERROR SUMMARY: 0 errors".
#   bash tests/gpu/memcheck.sh [BUILD]
set -u
B=${B:-${1:-build}}
fail() { echo "FAIL: $*"; exit 1; }
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$cs" ] || fail "no compute-sanitizer (PATH, /usr/local/cuda/bin)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Kernels run many times slower under memcheck: the waits' timeout is long.
SYMCOMM_BACKEND=cuda SYMCOMM_TIMEOUT=200 "$B/bin/symcomm-run" -n 2 --tag-output --timeout 280 -- \
  "$cs" --tool memcheck --error-exitcode 9 "$B/tests/gpu/test_gpu_stream" small 2>&1 | tee "$tmp/out"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "the job exited with status $rc (9: memcheck found errors; see above)"
for r in 0 1; do
  grep -q "^\[$r\] =* ERROR SUMMARY: 0 errors" "$tmp/out" || fail "rank $r's memcheck did not report 0 errors"
done
echo "ok: 2 ranks under compute-sanitizer memcheck, ERROR SUMMARY: 0 errors on both"
