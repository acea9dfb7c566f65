#!/usr/bin/env bash
# symcomm's libnccl.so.2: its soname and exports (ncclXxx only), then a
# program written against nccl.h alone (tests/nccl/test_nccl_shim.c) on 4
# ranks of simulated GPUs. Where the build found no nccl.h it left the reason
# in lib/libnccl.skipped: that is a SKIP with the reason, and anything else
# missing is a failure (never a silent pass).
#   test_nccl_shim.sh        the program
#   test_nccl_shim.sh perf   symcomm-perf --engine nccl on it: every op and dtype
#   test_nccl_shim.sh maxctas   config.maxCTAs caps a collective's blocks (3 ranks)
set -u
B=${B:-build}
lib=$B/lib/nccl/libnccl.so.2
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
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^p\?nccl' | tr '\n' ' ')
[ -z "$others" ] || fail "$lib exports more than NCCL's calls: $others"
# Every call has its profiling twin pncclXxx at the same address (an alias).
unpaired=$(nm -D --defined-only "$lib" | awk '{ sub(/^p/, "", $3); at[$3] = at[$3] " " $1; n[$3]++ }
  END { for (f in n) if (n[f] != 2 || split(at[f], a, " ") != 2 || a[1] != a[2]) print f }' | tr '\n' ' ')
[ -z "$unpaired" ] || fail "$lib lacks the pncclXxx alias of (or has a copy for): $unpaired"
for f in ncclCommInitRankConfig ncclAlltoAll ncclGather ncclScatter ncclCommWindowRegister ncclMemAlloc; do
  nm -D --defined-only "$lib" | grep -qw "$f" || fail "$lib does not export $f"
done
echo "ok: soname libnccl.so.2, exports ncclXxx and their pncclXxx aliases only"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
if [ "${1:-}" = perf ]; then
  # #wrong (out of place, column 9; in place, 13) is 0 on every line, but
  # the in-place all-to-all and send/recv that NCCL's engine leaves N/A.
  for reg in 0 1; do
    "$B/bin/symcomm-run" -n 4 --timeout 100 -- "$B/bin/symcomm-perf" --engine nccl \
      --nccl-lib "$lib" -o all -d all -b 8 -e 64K -f 8 -c 1 -R $reg >"$d/perf.txt" 2>&1 ||
      fail "symcomm-perf --engine nccl -R $reg exited $?: $(tail -5 "$d/perf.txt")"
    grep -q "symcomm's libnccl.so.2" "$d/perf.txt" || fail "-R $reg: the header does not name symcomm's libnccl.so.2"
    awk '/^# [a-z]+, / { op = $2; sub(/,$/, "", op); tables++ }
         /^ / { rows++
                if ($9 != "0" || ($13 != "0" && !($13 == "N/A" && (op == "sendrecv" || op == "alltoall"))))
                  { print "wrong: " $0; bad = 1 } }
         END { if (bad || rows == 0 || tables != 70) { print tables " tables, " rows " rows"; exit 1 } }' \
      "$d/perf.txt" || fail "-R $reg: $(tail -3 "$d/perf.txt")"
    echo "ok: symcomm-perf --engine nccl over symcomm's libnccl.so.2, 4 ranks, every op and dtype, -R $reg"
  done
  exit 0
fi
if [ "${1:-}" = maxctas ]; then
  # config.maxCTAs: the INFO line of every choice (rank 0's) says the blocks
  # it runs on: at most the cap, and the cap reached; with a cap of 128 some
  # size runs on more than 2 (so the sizes test the cap of 2).
  for cap in 128 2; do
    "$B/bin/symcomm-run" -n 3 --timeout 100 -- env -u SYMCOMM_ADDR SHIM_TEST_MAX_CTAS=$cap \
      SYMCOMM_DEBUG=INFO SYMCOMM_DEBUG_SUBSYS=COLL SYMCOMM_DEBUG_FILE="$d/log$cap.%r" \
      "$B/tests/nccl/test_nccl_shim" "$d/id$cap" >"$d/out$cap.txt" 2>&1 ||
      fail "maxCTAs $cap: $(tail -5 "$d/out$cap.txt")"
    most=$(grep -o "COLL allreduce of .*, [0-9]* blocks\?" "$d/log$cap.0" | awk '{print $(NF-1)}' | sort -n | tail -1)
    [ -n "$most" ] || fail "maxCTAs $cap: no choices logged"
    if [ $cap = 2 ]; then
      [ "$most" -eq 2 ] || fail "with maxCTAs 2 the most blocks logged were $most"
    else
      [ "$most" -gt 2 ] || fail "with maxCTAs 128 no size ran on more than 2 blocks (most $most)"
    fi
  done
  echo "ok: config.maxCTAs caps a collective's blocks ($most at most), a split keeps it, another refused"
  exit 0
fi
# Under symcomm-run SYMCOMM_ADDR is the launcher's root; ncclGetUniqueId
# makes a root of its own, as a program that knows no launcher would.
# SYMCOMM_TIMEOUT is short enough that an abort waiting for a pending init
# (which it must not) shows as such rather than as this test's timeout.
"$B/bin/symcomm-run" -n 4 --timeout 110 -- env -u SYMCOMM_ADDR SYMCOMM_TIMEOUT=30 \
  "$B/tests/nccl/test_nccl_shim" "$d/id"
