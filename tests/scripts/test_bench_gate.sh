#!/usr/bin/env bash
# Issue 9's gate, without a GPU: bench/gate_gpu.py's verdict on made-up rows
# (every target met; one missed where only NCCL's registered run is faster; the
# GEMM slowed more by symcomm; a wrong element; too few runs), then
# bench/run_gpu.sh --gate for real on the simulated GPUs, symcomm's own
# libnccl.so.2 standing in for NCCL.
#   bash tests/scripts/test_bench_gate.sh
set -u
B=${B:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
gate() { python3 bench/gate_gpu.py "$@" >"$tmp/gate.md" 2>&1; }

# make_rows DIR [CHANGE...]: three runs of every file run_gpu.sh --gate writes,
# symcomm at 0.5x NCCL's time (2x its busbw) everywhere, then each CHANGE, a
# Python statement on `rows(engine, nranks, registered, op, bytes)` (the list
# of that row in each run) or `gemm(engine)`.
make_rows() {
  local dir=$1
  shift
  mkdir -p "$dir"
  python3 - "$dir" "$@" <<'EOF'
import json, sys
d = sys.argv[1]
sizes = [8, 128 << 10, 2 << 20, 512 << 20]
files = {}  # (engine, nranks, reg, gemm) -> [doc per run]
def doc(engine, nranks, reg, gemm, ops):
    docs = []
    for run in range(3):
        rows = []
        for op in ops:
            for b in ([64 << 20] if gemm else sizes):
                t = (10.0 + b / 1e5) * (0.5 if engine == "symcomm" else 1.0) * (1.0, 0.98, 1.02)[run]
                r = {"op": op, "dtype": "float32", "redop": "none" if op in ("allgather", "alltoall", "sendrecv", "broadcast") else "sum",
                     "root": 0 if op in ("reduce", "broadcast") else -1, "bytes": b, "count": b // 4,
                     "inplace": False, "time_us": t, "algbw_gbs": b / t / 1e3, "busbw_gbs": b / t / 1e3, "wrong": 0}
                if gemm:
                    r.update({"gemm_n": 8192, "gemm_k": 4, "gemm_alone_us": 1000.0,
                              "gemm_together_us": 1100.0 if engine == "symcomm" else 1120.0,
                              "gemm_slowdown": 1.10 if engine == "symcomm" else 1.12,
                              "time_together_us": t * 2, "busbw_together_gbs": b / t / 2e3})
                rows.append(r)
        docs.append({"tool": "symcomm-perf", "engine": engine, "machine": "test / 4x made-up GPU",
                     "date": "2026-11-28T00:00:00Z", "nranks": nranks, "nhosts": 1,
                     "command": f"symcomm-perf --engine {engine} -R {reg}", "registered": reg, "cudagraph": 1,
                     "rows": rows})
    files[(engine, nranks, reg, gemm)] = docs
four = ["allreduce", "allgather", "reducescatter", "alltoall"]
two = four + ["broadcast", "reduce", "sendrecv"]
for engine, reg in (("symcomm", 1), ("nccl", 0), ("nccl", 1)):
    doc(engine, 4, reg, False, four)
    doc(engine, 2, reg, False, two)
doc("symcomm", 4, 0, False, ["allreduce"])
doc("symcomm", 4, 1, True, ["allreduce"])
doc("nccl", 4, 0, True, ["allreduce"])
def rows(engine, nranks, reg, op, b):
    return [r for dd in files[(engine, nranks, reg, False)] for r in dd["rows"] if r["op"] == op and r["bytes"] == b]
def gemm(engine):
    return [r for dd in files[(engine, 4, 1 if engine == "symcomm" else 0, True)] for r in dd["rows"]]
for change in sys.argv[2:]:
    exec(change)
for (engine, nranks, reg, g), docs in files.items():
    for run, dd in enumerate(docs):
        name = f"{engine}{'-gemm' if g else ''}-np{nranks}-R{reg}-run{run + 1}.json"
        json.dump(dd, open(f"{d}/{name}", "w"))
EOF
}

# Every target met.
make_rows "$tmp/good"
gate "$tmp/good"
rc=$?
[ $rc = 0 ] || fail "every target met, yet exit $rc: $(cat "$tmp/gate.md")"
grep -q "Verdict: every target holds." "$tmp/gate.md" || fail "no verdict line: $(tail -3 "$tmp/gate.md")"
[ "$(grep -c '| holds' "$tmp/gate.md")" -eq 18 ] || fail "expected 18 rows that hold: $(cat "$tmp/gate.md")"
grep -q "| all-reduce 8 B, 4 GPUs | 5.00 µs | 10.00 µs (plain) | 0.50 |" "$tmp/gate.md" ||
  fail "all-reduce 8 B is not the median of three runs against NCCL plain: $(grep 'all-reduce 8 B' "$tmp/gate.md")"

# NCCL's registered run is the faster at 8 B: symcomm at 0.9x NCCL plain misses.
make_rows "$tmp/reg" \
  '[r.update(time_us=3.0) for r in rows("nccl", 4, 1, "allreduce", 8)]' \
  '[r.update(time_us=9.0) for r in rows("symcomm", 4, 1, "allreduce", 8)]'
gate "$tmp/reg"
rc=$?
[ $rc = 1 ] || fail "a missed target, yet exit $rc"
grep -q "| all-reduce 8 B, 4 GPUs | 9.00 µs | 3.00 µs (-R 1) | 3.00 | ≤ 0.85 | MISSES |" "$tmp/gate.md" ||
  fail "the 8 B row is not judged against NCCL -R 1: $(grep 'all-reduce 8 B' "$tmp/gate.md")"
grep -q "Verdict: 1 target(s) missed." "$tmp/gate.md" || fail "verdict: $(tail -1 "$tmp/gate.md")"

# One size of all-to-all on 2 GPUs slower; the plain-buffer all-reduce 1.2x NCCL plain at 2 MiB.
make_rows "$tmp/sizes" \
  '[r.update(time_us=r["time_us"] * 2.5) for r in rows("symcomm", 2, 1, "alltoall", 128 << 10)]' \
  '[r.update(time_us=1.2 * 30.97) for r in rows("symcomm", 4, 0, "allreduce", 2 << 20)]'
gate "$tmp/sizes"
rc=$?
[ $rc = 1 ] || fail "two missed targets, yet exit $rc"
grep "alltoall, every size, 2 GPUs" "$tmp/gate.md" | grep -q "MISSES at 1 of 4 sizes: 128 KiB 1.25" ||
  fail "the slow all-to-all size is not named: $(grep 'alltoall, every size, 2' "$tmp/gate.md")"
grep "plain buffers" "$tmp/gate.md" | grep -q "MISSES at 1 of 4 sizes: 2 MiB 1.2" ||
  fail "the plain all-reduce is not held to 1.1x: $(grep 'plain buffers' "$tmp/gate.md")"

# The GEMM slowed more beside symcomm than beside NCCL.
make_rows "$tmp/gemm" '[r.update(gemm_slowdown=1.3) for r in gemm("symcomm")]'
gate "$tmp/gemm"
rc=$?
[ $rc = 1 ] || fail "the GEMM slowed more, yet exit $rc"
grep "GEMM slowdown" "$tmp/gate.md" | grep -q "MISSES" || fail "GEMM row: $(grep 'GEMM' "$tmp/gate.md")"

# A wrong element: no verdict.
make_rows "$tmp/wrong" 'rows("symcomm", 2, 1, "reduce", 8)[1]["wrong"] = 3'
gate "$tmp/wrong"
rc=$?
[ $rc = 2 ] || fail "a wrong element, yet exit $rc"
grep -q "PROBLEM: .*reduce 8 B: 3 wrong elements" "$tmp/gate.md" || fail "the wrong element is not named"

# Two runs where three are asked for: not judged; with --min-runs 2 judged.
make_rows "$tmp/two"
rm "$tmp"/two/*-run3.json
gate "$tmp/two"
rc=$?
[ $rc = 2 ] || fail "two runs, yet exit $rc"
grep -q "NOT JUDGED: 2 run(s), 3 needed" "$tmp/gate.md" || fail "the short runs are not said"
gate --min-runs 2 "$tmp/two" || fail "--min-runs 2 on two runs: exit $?"
echo "ok: gate_gpu.py's verdicts (met, missed against NCCL -R 1, per size, GEMM, wrong, too few runs)"

# For real, on the simulated GPUs: every file, the SMs, every row compared.
out="$tmp/live"
bash bench/run_gpu.sh --gate --graph 0 --runs 1 --min-runs 1 -b 8 -e 4K --part "np 2" \
  --nccl-lib "$PWD/$B/lib/nccl/libnccl.so.2" --build "$B" --no-make --out "$out" >"$tmp/live.txt" 2>&1
rc=$?
# 2: the 128 KiB .. 512 MiB targets have no rows at these sizes.
[ $rc = 2 ] || fail "run_gpu.sh --gate exited $rc: $(tail -20 "$tmp/live.txt")"
for f in nccl-np4-R0 symcomm-np4-R1 nccl-np4-R1 symcomm-np4-R0 nccl-np2-R0 symcomm-np2-R1 nccl-np2-R1; do
  [ -s "$out/$f-run1.json" ] || fail "no $f-run1.json: $(tail -20 "$tmp/live.txt")"
done
grep -q "PROBLEM" "$out/gate.md" && fail "problems: $(grep PROBLEM "$out/gate.md")"
judged=$(grep -c "every size.*| \(holds at all\|MISSES at\)" "$out/gate.md")
[ "$judged" -eq 10 ] || fail "expected the 10 every-size rows compared, got $judged: $(cat "$out/gate.md")"
grep -q "| allreduce | 4 | -R 1 | from 8 B: ll, 1 SM" "$out/gate.md" ||
  fail "no SM row for all-reduce on 4 ranks: $(sed -n '/SMs/,$p' "$out/gate.md")"
grep -q "| reduce | 2 | -R 1 | from 8 B: ll" "$out/gate.md" || fail "no SM row for reduce on 2 ranks"
# A run that fails (no NCCL where it is said to be) makes the whole exit 1.
bash bench/run_gpu.sh --gate --graph 0 --runs 1 -b 8 -e 64 --part 2 --nccl-lib "$tmp/none/libnccl.so.2" \
  --build "$B" --no-make --out "$tmp/broken" >"$tmp/broken.txt" 2>&1
rc=$?
[ $rc = 1 ] || fail "a failed run, yet exit $rc: $(tail -5 "$tmp/broken.txt")"
grep -q "run_gpu.sh: nccl-np2-R0-run1 failed" "$tmp/broken.txt" || fail "the failed run is not named"
echo "ok: run_gpu.sh --gate on the simulated GPUs ($judged rows compared, SMs from the logs)"
