#!/usr/bin/env bash
# symcomm's libnccl.so.2: its soname and exports (ncclXxx only), then a
# program written against nccl.h alone (tests/nccl/test_nccl_shim.c) on 4
# ranks of simulated GPUs. Where the build found no nccl.h it left the reason
# in lib/libnccl.skipped: that is a SKIP with the reason, and anything else
# missing is a failure (never a silent pass).
set -u
B=${B:-build}
lib=$B/lib/libnccl.so.2
fail() { echo "FAIL: $*"; exit 1; }
if [ ! -e "$lib" ]; then
  [ -s "$B/lib/libnccl.skipped" ] || fail "no $lib and no reason for its absence ($B/lib/libnccl.skipped)"
  for h in /usr/include/nccl.h /usr/local/cuda/include/nccl.h; do
    [ -e "$h" ] && fail "$h is here, yet the build skipped libnccl.so.2: $(cat "$B/lib/libnccl.skipped")"
  done
  echo "SKIP: $(cat "$B/lib/libnccl.skipped")"
  exit 0
fi
readelf -d "$lib" | grep -q 'SONAME.*\[libnccl\.so\.2\]' || fail "$lib has no soname libnccl.so.2"
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^nccl' | tr '\n' ' ')
[ -z "$others" ] || fail "$lib exports more than NCCL's calls: $others"
for f in ncclCommInitRankConfig ncclAlltoAll ncclGather ncclScatter ncclCommWindowRegister ncclMemAlloc; do
  nm -D --defined-only "$lib" | grep -qw "$f" || fail "$lib does not export $f"
done
echo "ok: soname libnccl.so.2, exports ncclXxx only"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
# Under symcomm-run SYMCOMM_ADDR is the launcher's root; ncclGetUniqueId
# makes a root of its own, as a program that knows no launcher would.
"$B/bin/symcomm-run" -n 4 --timeout 110 -- env -u SYMCOMM_ADDR "$B/tests/nccl/test_nccl_shim" "$d/id"
