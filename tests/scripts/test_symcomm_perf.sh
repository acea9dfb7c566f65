#!/usr/bin/env bash
# symcomm-perf: every operation and dtype checked on 4 ranks (plain buffers and
# windows), every reduction and root on 3, the JSON rows, a planted wrong
# result caught, one rank without a launcher, --engine nccl on a machine
# without a GPU, and bad flags.
set -u
B=${B:-${1:-build}}
perf="$B/bin/symcomm-perf"
run="$B/bin/symcomm-run"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Every data line's #wrong is 0, except the in-place columns of sendrecv,
# which nobody promises and which are N/A (as in nccl-tests).
check_rows() {
  local file=$1 what=$2
  awk '
    /^# [a-z]+, / { op = $2; sub(/,$/, "", op) }
    /^ / { rows++
           if ($9 != "0") bad = bad "\n" $0
           if ($13 != "0" && !($13 == "N/A" && op == "sendrecv")) bad = bad "\n" $0 }
    END { if (bad != "") { print "wrong rows:" bad; exit 1 }
          if (rows == 0) { print "no rows"; exit 1 } }' "$file" || fail "$what: $(cat "$file" | tail -5)"
  grep -q "^# Out of bounds values : 0 OK" "$file" || fail "$what: no '# Out of bounds values : 0'"
  grep -q "^# Avg bus bandwidth" "$file" || fail "$what: no '# Avg bus bandwidth'"
}

# 4 ranks, every op x every dtype, out of place and in place, malloc'd buffers and windows.
for reg in 0 1; do
  "$run" -n 4 --timeout 100 -- "$perf" -o all -d all -b 8 -e 64K -f 8 -c 1 -R $reg \
    >"$tmp/all$reg.txt" 2>&1 || fail "-n 4 -o all -d all -R $reg exited $?: $(tail -5 "$tmp/all$reg.txt")"
  check_rows "$tmp/all$reg.txt" "-n 4 -R $reg"
  # 7 ops x 10 dtypes, one table each (root 0, redop sum); 5 sizes, fewer
  # where a block op rounds a size down to nothing (8 B of 8-byte types).
  [ "$(grep -c '^# [a-z]*, ' "$tmp/all$reg.txt")" -eq 70 ] || fail "-R $reg: expected 70 tables"
  echo "ok: 4 ranks, every op and dtype, -R $reg"
done
grep -q "buffers in windows (-R 1)" "$tmp/all1.txt" || fail "-R 1 is not in the header"

# 3 ranks (sizes that do not divide), every reduction, every root, and the JSON.
"$run" -n 3 --timeout 100 -- "$perf" -o allreduce,reduce,allgather,reducescatter \
  -d int32,bfloat16 --op all -r all -b 8 -e 1K -f 4 --json "$tmp/rows.json" \
  >"$tmp/n3.txt" 2>&1 || fail "-n 3 --op all exited $?: $(tail -5 "$tmp/n3.txt")"
check_rows "$tmp/n3.txt" "-n 3 --op all"
# Rows: sizes 8 32 128 512, each out of place and in place.
#   allreduce 2 dtypes x 5 redops x 4 sizes x 2               =  80
#   reduce    2 dtypes x 5 redops x 3 roots x 4 sizes x 2     = 240
#   allgather int32: 8 B is 2 elements, under 1 per rank: 3 sizes; bfloat16: 4 sizes: 7 x 2 = 14
#   reducescatter int32 3 sizes, bfloat16 4 sizes, x 5 redops x 2 = 70
expect=404
[ "$(grep -c '^ ' "$tmp/n3.txt")" -eq $((expect / 2)) ] || fail "-n 3: expected $((expect / 2)) table lines"
command -v python3 >/dev/null || fail "python3 is missing (make check installs it: tests/need_tools.sh)"
python3 -m json.tool "$tmp/rows.json" >/dev/null || fail "--json wrote invalid JSON"
python3 - "$tmp/rows.json" $expect <<'EOF' || fail "--json rows"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["rows"]
assert doc["tool"] == "symcomm-perf" and doc["engine"] == "symcomm", doc
assert doc["nranks"] == 3 and doc["nhosts"] == 1, doc
assert "symcomm-run -n 3 -- " in doc["command"], doc["command"]
assert doc["registered"] == 0 and doc["cudagraph"] == 0, doc
assert len(rows) == int(sys.argv[2]), len(rows)
keys = ["op", "dtype", "redop", "root", "bytes", "count", "inplace", "time_us", "algbw_gbs",
        "busbw_gbs", "wrong"]
for r in rows:
    assert list(r) == keys, r
    assert r["wrong"] == 0 and r["time_us"] > 0, r
    assert (r["root"] >= 0) == (r["op"] == "reduce"), r
    assert (r["redop"] == "none") == (r["op"] == "allgather"), r
    size = {"int32": 4, "bfloat16": 2}[r["dtype"]]
    assert r["bytes"] == r["count"] * size, r
    if r["op"] in ("allgather", "reducescatter"):
        assert r["count"] % 3 == 0, r
    factor = {"allreduce": 4 / 3, "reduce": 1, "allgather": 2 / 3, "reducescatter": 2 / 3}[r["op"]]
    assert abs(r["busbw_gbs"] - r["algbw_gbs"] * factor) < 1e-3, r
print("json rows ok")
EOF
echo "ok: 3 ranks, every redop and root, $expect JSON rows"

# The check is live: a wrapper that flips a bit of rank 1's input on the way
# into symcomm_allreduce must be caught, and the exit status says so.
if cc -shared -fPIC -Iinclude -o "$tmp/flip.so" -x c - -ldl <<'EOF'; then
#define _GNU_SOURCE
#include <dlfcn.h>
#include "symcomm.h"
typedef symcomm_result_t (*allreduce_fn)(const void *, void *, size_t, symcomm_dtype_t, symcomm_op_t,
                                         symcomm_comm_t, symcomm_stream_t);
symcomm_result_t symcomm_allreduce(const void *s, void *r, size_t count, symcomm_dtype_t t,
                                   symcomm_op_t op, symcomm_comm_t comm, symcomm_stream_t st) {
  allreduce_fn real = (allreduce_fn)dlsym(RTLD_NEXT, "symcomm_allreduce");
  int rank = -1;
  symcomm_comm_rank(comm, &rank);
  if (rank == 1 && count >= 4 && s != r) { /* the first and the last element */
    ((unsigned char *)s)[0] ^= 0x40;
    ((unsigned char *)s)[count * 4 - 1] ^= 0x40;
  }
  return real(s, r, count, t, op, comm, st);
}
EOF
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" LD_PRELOAD="$tmp/flip.so" \
    "$run" -n 2 --timeout 60 -- "$perf" -b 64 -e 1K -f 4 >"$tmp/flip.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || fail "a wrong element: exit $rc, expected 1: $(tail -5 "$tmp/flip.txt")"
  grep -q "^# Out of bounds values : [1-9][0-9]* FAILED" "$tmp/flip.txt" ||
    fail "a wrong element was not counted: $(cat "$tmp/flip.txt")"
  echo "ok: a flipped input bit is counted and exits 1"
  # The same with the data made and compared by 3 threads a rank (1 MiB: split
  # into pieces): exactly the 2 flipped elements on each of the 2 ranks.
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" LD_PRELOAD="$tmp/flip.so" \
    "$run" -n 2 --timeout 60 -- "$perf" -b 1M -e 1M --check-threads 3 >"$tmp/flip3.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || fail "--check-threads 3, wrong elements: exit $rc, expected 1: $(tail -5 "$tmp/flip3.txt")"
  awk '$1 == 1048576 && $9 == 4 && $13 == 0 {ok = 1} END {exit !ok}' "$tmp/flip3.txt" ||
    fail "--check-threads 3: expected 4 wrong out of place, 0 in place: $(grep '^ ' "$tmp/flip3.txt")"
  echo "ok: with 3 threads a rank, the 2 flipped elements of 1 MiB are counted on each rank"
else
  fail "cannot build the wrong-result wrapper with cc"
fi

# Without a launcher: one rank; -i steps by addition; -a 1; sendrecv skipped.
"$perf" -o all -d int8 -b 100 -e 400 -i 100 -a 1 -n 3 -w 1 >"$tmp/alone.txt" 2>&1 ||
  fail "one rank without a launcher: $(tail -5 "$tmp/alone.txt")"
check_rows "$tmp/alone.txt" "one rank"
[ "$(grep -c '^ ' "$tmp/alone.txt")" -eq 24 ] || fail "-i 100 from 100 to 400: expected 6 x 4 sizes"
grep -q "^# 1 rank on 1 host" "$tmp/alone.txt" || fail "one rank: header"
grep -q "^# sendrecv needs 2 ranks or more: skipped" "$tmp/alone.txt" || fail "one rank: sendrecv"
echo "ok: one rank without a launcher, -i, -a 1"

# --engine nccl: with no GPU here, one clear line and exit 3; on a GPU host it runs.
"$run" -n 2 --timeout 60 -- "$perf" --engine nccl -b 8 -e 64 >"$tmp/nccl.txt" 2>&1
rc=$?
if [ $rc -eq 3 ]; then
  [ "$(grep -c '^symcomm-perf: --engine nccl needs libnccl.so.2 and a GPU: ' "$tmp/nccl.txt")" -eq 1 ] ||
    fail "--engine nccl: expected one clear line: $(cat "$tmp/nccl.txt")"
  echo "ok: --engine nccl without a GPU: $(grep '^symcomm-perf:' "$tmp/nccl.txt")"
elif [ $rc -eq 0 ]; then
  check_rows "$tmp/nccl.txt" "--engine nccl"
  echo "ok: --engine nccl ran (a GPU host)"
else
  fail "--engine nccl exited $rc: $(tail -5 "$tmp/nccl.txt")"
fi

# -G: graphs need a CUDA stream; on the simulated backend every rank says so and all exit 3.
"$run" -n 2 --timeout 60 -- "$perf" -G 2 -b 8 -e 64 >"$tmp/graph.txt" 2>&1
rc=$?
if [ $rc -eq 3 ]; then
  [ "$(grep -c 'symcomm-perf: rank [01]: -G 2: .*not a CUDA stream' "$tmp/graph.txt")" -eq 2 ] ||
    fail "-G without CUDA: expected one line per rank: $(cat "$tmp/graph.txt")"
  echo "ok: -G without a CUDA stream exits 3"
elif [ $rc -eq 0 ]; then
  check_rows "$tmp/graph.txt" "-G 2"
  echo "ok: -G 2 ran (a GPU host)"
else
  fail "-G 2 exited $rc: $(tail -5 "$tmp/graph.txt")"
fi

# Bad flags: exit 2 with usage, printed once.
for bad in "-G -1" "--bogus" "-o allscatter" "-d float8" "--op mean" "-b 8x" "-c 2" "-b 64 -e 8" "-f 2 -i 8" "-r 7"; do
  # shellcheck disable=SC2086
  "$run" -n 2 --timeout 30 -- "$perf" $bad >"$tmp/bad.txt" 2>&1
  rc=$?
  [ $rc -eq 2 ] || fail "'$bad': exit $rc, expected 2: $(cat "$tmp/bad.txt")"
  [ "$bad" = "-r 7" ] && { grep -q "root 7 is not a rank" "$tmp/bad.txt" || fail "-r 7: no reason"; continue; }
  [ "$(grep -c '^usage: symcomm-perf' "$tmp/bad.txt")" -eq 1 ] || fail "'$bad': expected the usage once"
done
"$perf" -h | grep -q "^usage: symcomm-perf" || fail "-h"
echo "ok: bad flags exit 2 with usage"
