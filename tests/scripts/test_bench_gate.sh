#!/usr/bin/env bash
# Issue 9's gate, without a GPU. bench/gate_gpu.py's verdict on made-up rows:
# every target met; each target just past its limit; NCCL's registered run the
# faster; one size slow; the GEMM slowed more; and every reason for "not
# judged" (wrong or unchecked elements, in place too; too few runs; sizes, NCCL
# runs or graph rows missing; a run read twice; a failed run; two machines; a
# time of 0; another GEMM size; files that are not what they should be). Then
# bench/run_gpu.sh --gate for real on the simulated GPUs, symcomm's own
# libnccl.so.2 standing in for NCCL: its files, commands, SM table, a re-run
# that fails, and its refusals of bad options.
#   bash tests/scripts/test_bench_gate.sh
set -u
B=${B:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# gate DIR [OPTIONS]: the verdict into $tmp/gate.md; rc its exit status.
gate() {
  local dir=$1
  shift
  python3 bench/gate_gpu.py "$@" "$dir" >"$tmp/gate.md" 2>&1
  rc=$?
  grep -q "Traceback" "$tmp/gate.md" && fail "gate_gpu.py crashed on $dir: $(tail -3 "$tmp/gate.md")"
}
expect() { # RC WHAT: the last gate's exit status
  [ "$rc" = "$1" ] || fail "$2: exit $rc, expected $1: $(grep -v '^|---' "$tmp/gate.md" | head -40)"
}
has() { # TEXT WHAT: a line of the last verdict holds TEXT (fixed string)
  grep -qF -- "$1" "$tmp/gate.md" || fail "$2: no '$1' in: $(grep -v '^|---' "$tmp/gate.md" | head -40)"
}

# make_rows DIR [CHANGE...]: three runs of every file run_gpu.sh --gate writes,
# 8 B .. 1 GiB doubling, out of place and in place (in place 100x slower, so a
# verdict that used them would miss; the runs at 1, 0.98 and 1.08 times, so
# that a mean is not the median), symcomm at 0.5x NCCL's time everywhere,
# then each CHANGE, Python run with rows(engine, nranks, reg, op, bytes) (that
# size's out-of-place row in each run), gemm(engine), files (the documents by
# (engine, nranks, reg, gemm)) and extra (file name -> document) at hand.
make_rows() {
  local dir=$1
  shift
  mkdir -p "$dir"
  python3 - "$dir" "$@" <<'EOF'
import json, sys
d = sys.argv[1]
files = {}
def doc(engine, nranks, reg, gemm, ops):
    docs = []
    for run in range(3):
        rows = []
        for op in ops:
            least = 4 * nranks if op in ("allgather", "reducescatter", "alltoall") else 4
            sizes = [64 << 20] if gemm else [8 << k for k in range(28) if (8 << k) >= least]
            for b in sizes:
                for inplace in (False, True):
                    t = (10.0 + b / 1e5) * (0.5 if engine == "symcomm" else 1.0) * (1.0, 0.98, 1.08)[run]
                    t *= 100 if inplace else 1
                    r = {"op": op, "dtype": "float32",
                         "redop": "sum" if op in ("allreduce", "reduce", "reducescatter") else "none",
                         "root": 0 if op in ("reduce", "broadcast") else -1, "bytes": b, "count": b // 4,
                         "inplace": inplace, "time_us": t, "algbw_gbs": b / t / 1e3, "busbw_gbs": b / t / 1e3,
                         "wrong": 0}
                    if gemm:
                        r.update({"gemm_n": 8192, "gemm_k": 4, "gemm_alone_us": 1000.0,
                                  "gemm_together_us": 1100.0 if engine == "symcomm" else 1120.0,
                                  "gemm_slowdown": 1.10 if engine == "symcomm" else 1.12,
                                  "time_together_us": t * 2, "busbw_together_gbs": b / t / 2e3})
                    rows.append(r)
        docs.append({"tool": "symcomm-perf", "engine": engine, "machine": "test / 4x made-up GPU",
                     "date": "2026-11-28T00:00:00Z", "nranks": nranks, "nhosts": 1,
                     "command": f"symcomm-perf --engine {engine} -R {reg} -G 1", "registered": reg,
                     "cudagraph": 1, "rows": rows})
    files[(engine, nranks, reg, gemm)] = docs
four = ["allreduce", "allgather", "reducescatter", "alltoall"]
two = four + ["broadcast", "reduce", "sendrecv"]
for engine, reg in (("symcomm", 1), ("nccl", 0), ("nccl", 1)):
    doc(engine, 4, reg, False, four)
    doc(engine, 2, reg, False, two)
doc("symcomm", 4, 0, False, ["allreduce"])
doc("symcomm", 4, 1, True, ["allreduce"])
doc("nccl", 4, 0, True, ["allreduce"])
extra = {"mpi.json": {"tool": "mpi-baseline", "engine": "openmpi", "nranks": 4, "rows": []}}
extra.update({f"gpus-run{k}-{p}.txt": "GPU 0: NVIDIA H200 (UUID: GPU-a)\n" for k in (1, 2, 3) for p in ("np", "2", "gemm")})
def rows(engine, nranks, reg, op, b):
    return [r for dd in files[(engine, nranks, reg, False)] for r in dd["rows"]
            if r["op"] == op and r["bytes"] == b and not r["inplace"]]
def gemm(engine):
    return [r for dd in files[(engine, 4, 1 if engine == "symcomm" else 0, True)] for r in dd["rows"]]
for change in sys.argv[2:]:
    exec(change)
for (engine, nranks, reg, g), docs in files.items():
    for run, dd in enumerate(docs):
        name = f"{engine}{'-gemm' if g else ''}-np{nranks}-R{reg}-run{run + 1}.json"
        json.dump(dd, open(f"{d}/{name}", "w"))
for name, dd in extra.items():
    open(f"{d}/{name}", "w").write(dd if isinstance(dd, str) else json.dumps(dd))
EOF
}

# Every target met (the in-place rows and another tool's file left out).
make_rows "$tmp/good"
gate "$tmp/good"
expect 0 "every target met"
has "Verdict: every target holds." "the verdict"
[ "$(grep -c '| holds' "$tmp/gate.md")" -eq 18 ] || fail "expected 18 rows that hold: $(cat "$tmp/gate.md")"
has "| all-reduce 8 B, 4 GPUs | 5.00 µs | 10.00 µs (plain) | 0.50 |" "8 B: the median of three runs"
has "| allgather, every size, 4 GPUs | 27 sizes, 16 B–1 GiB |" "all-gather's sweep on 4 ranks"
has "NOTE: mpi.json: not symcomm-perf's" "another tool's file"
# The same GPUs at every run's start: one host, judged.
make_rows "$tmp/onehost" "extra.update({f'gpus-run{k}-{p}.txt': ('\\ufeff' if k == 2 else 'nvidia-smi says:\\r\\n') + 'GPU 0: NVIDIA H200 (UUID: GPU-a)\\r\\n' for k in (1, 2, 3) for p in ('np', '2', 'gemm')})"
gate "$tmp/onehost"
expect 0 "three runs on one host"

# Each target just past its limit misses, alone.
past=(
  "all-reduce 8 B, 4 GPUs|[r.update(time_us=0.851 * 10.00008) for r in rows('symcomm', 4, 1, 'allreduce', 8)]"
  "all-reduce 128 KiB, 4 GPUs|[r.update(time_us=0.751 * (10 + 131072 / 1e5)) for r in rows('symcomm', 4, 1, 'allreduce', 128 << 10)]"
  "all-reduce 2 MiB, 4 GPUs|[r.update(time_us=0.851 * (10 + 2097152 / 1e5)) for r in rows('symcomm', 4, 1, 'allreduce', 2 << 20)]"
  "all-reduce 512 MiB busbw, 4 GPUs|[r.update(busbw_gbs=1.029 * (512 << 20) / (10 + (512 << 20) / 1e5) / 1e3) for r in rows('symcomm', 4, 1, 'allreduce', 512 << 20)]"
  "sendrecv 8 B, 2 GPUs|[r.update(time_us=0.671 * 10.00008) for r in rows('symcomm', 2, 1, 'sendrecv', 8)]"
  "sendrecv 512 MiB busbw, 2 GPUs|[r.update(busbw_gbs=1.049 * (512 << 20) / (10 + (512 << 20) / 1e5) / 1e3) for r in rows('symcomm', 2, 1, 'sendrecv', 512 << 20)]"
  "reducescatter, every size, 4 GPUs|[r.update(time_us=1.011 * (10 + 4096 / 1e5)) for r in rows('symcomm', 4, 1, 'reducescatter', 4096)]"
  "all-reduce plain buffers (-R 0), every size, 4 GPUs|[r.update(time_us=1.101 * (10 + 8192 / 1e5)) for r in rows('symcomm', 4, 0, 'allreduce', 8192)]"
  "broadcast, every size, 2 GPUs|[r.update(time_us=1.011 * (10 + 64 / 1e5)) for r in rows('symcomm', 2, 1, 'broadcast', 64)]"
  "64 MiB all-reduce busbw beside the GEMM, 4 GPUs|[r.update(busbw_together_gbs=0.99 * r['busbw_together_gbs'] / 2) for r in gemm('symcomm')]"
)
for p in "${past[@]}"; do
  make_rows "$tmp/past" "${p#*|}"
  gate "$tmp/past"
  expect 1 "${p%%|*} just past its limit"
  grep -F "| ${p%%|*}" "$tmp/gate.md" | grep -q "MISSES" || fail "${p%%|*} just past its limit does not miss: $(grep -F "${p%%|*}" "$tmp/gate.md")"
  has "Verdict: 1 target(s) missed." "${p%%|*}: only it misses"
  rm -rf "$tmp/past"
done
echo "ok: ${#past[@]} targets, each just past its limit, miss alone"

# NCCL's registered run is the faster at 8 B: symcomm at 0.9x NCCL plain misses.
make_rows "$tmp/reg" \
  "[r.update(time_us=3.0) for r in rows('nccl', 4, 1, 'allreduce', 8)]" \
  "[r.update(time_us=9.0) for r in rows('symcomm', 4, 1, 'allreduce', 8)]"
gate "$tmp/reg"
expect 1 "a missed target"
has "| all-reduce 8 B, 4 GPUs | 9.00 µs | 3.00 µs (-R 1) | 3.00 | ≤ 0.85 | MISSES |" "8 B against NCCL -R 1"

# One all-to-all size on 2 GPUs slower: named.
make_rows "$tmp/sizes" "[r.update(time_us=r['time_us'] * 2.5) for r in rows('symcomm', 2, 1, 'alltoall', 128 << 10)]"
gate "$tmp/sizes"
expect 1 "one slow size"
grep "alltoall, every size, 2 GPUs" "$tmp/gate.md" | grep -q "MISSES at 1 of 28 sizes: 128 KiB 1.25" ||
  fail "the slow size is not named: $(grep 'alltoall, every size, 2' "$tmp/gate.md")"

# The GEMM slowed more beside symcomm than beside NCCL.
make_rows "$tmp/gemm" "[r.update(gemm_slowdown=1.3) for r in gemm('symcomm')]"
gate "$tmp/gemm"
expect 1 "the GEMM slowed more"
grep "GEMM slowdown" "$tmp/gate.md" | grep -q "MISSES" || fail "GEMM row: $(grep 'GEMM' "$tmp/gate.md")"

# Not judged, each for its reason (exit 2, the reason said).
unjudged=(
  "wrong elements in place|[r.update(wrong=3) for dd in files[('symcomm', 2, 1, False)] for r in dd['rows'] if r['inplace'] and r['op'] == 'reduce' and r['bytes'] == 8]|reduce float32 8 B in place: 3 wrong elements"
  "unchecked rows|[r.update(wrong=-1) for r in rows('nccl', 2, 0, 'broadcast', 64)]|not checked (-c 0)"
  "NCCL's sizes missing|[dd.update(rows=[r for r in dd['rows'] if r['op'] != 'allgather' or r['bytes'] <= 16]) for e in ((\"nccl\", 4, 0, False), (\"nccl\", 4, 1, False)) for dd in files[e]]|NOT JUDGED: missing 32 B (no NCCL plain rows)"
  "no NCCL -R 1 run|[files.pop(e) for e in [k for k in files if k[0] == 'nccl' and k[2] == 1]]|NOT JUDGED: no NCCL -R 1 rows"
  "rows without graphs|[dd.update(cudagraph=0) for dd in files[('symcomm', 4, 1, False)]]|-G 0: left out"
  "a run read twice|extra['symcomm-np2-R1-run4.json'] = files[('symcomm', 2, 1, False)][0]|one run read twice"
  "a failed run|extra['nccl-np2-R0-run2.failed'] = ''|a run failed: nccl-np2-R0-run2"
  "two machines|files[('nccl', 2, 1, False)][1].update(machine='another / 2x H100')|rows from more than one machine"
  "two hosts of one kind|extra.update({f'gpus-run{k}-{p}.txt': f'GPU 0: NVIDIA H200 (UUID: GPU-{\"a\" if (k, p) != (3, \"2\") else \"b\"})\\n' for k in (1, 2, 3) for p in ('np', '2')})|runs on more than one host (the gate compares runs of one host): gpus-run1-2.txt, gpus-run1-gemm.txt, gpus-run1-np.txt, gpus-run2-2.txt, gpus-run2-gemm.txt, gpus-run2-np.txt, gpus-run3-gemm.txt, gpus-run3-np.txt: GPU 0: NVIDIA H200 (UUID: GPU-a); gpus-run3-2.txt: GPU 0: NVIDIA H200 (UUID: GPU-b)"
  "a run without its host record|del extra['gpus-run2-np.txt']|run 2 part np has results but no host record"
  "a part without its host record|del extra['gpus-run1-gemm.txt']|run 1 part gemm has results but no host record"
  "nvidia-smi failed at a run's start|extra['gpus-run3-np.txt'] = 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.\\n'|gpus-run3-np.txt lists no GPU (did nvidia-smi -L fail there?)"
  "a time of 0|rows('symcomm', 2, 1, 'allgather', 64)[0].update(time_us=0)|allgather float32 64 B: time 0"
  "another GEMM|[r.update(gemm_n=128) for r in gemm('symcomm')]|the GEMM was not 8192 x 8192"
  "a file that is a list|extra['nccl-np4-R0-run9.json'] = []|cannot read"
  "a row without its size|del rows('nccl', 4, 0, 'alltoall', 64)[0]['bytes']|cannot read"
  "a file that is not JSON|extra['symcomm-np4-R1-run9.json'] = '{\"tool\": '|cannot read"
)
for u in "${unjudged[@]}"; do
  IFS='|' read -r what change text <<<"$u"
  make_rows "$tmp/u" "$change"
  gate "$tmp/u"
  expect 2 "$what"
  has "$text" "$what"
  has "Verdict: not judged" "$what"
  rm -rf "$tmp/u"
done
echo "ok: ${#unjudged[@]} reasons for no verdict, each said"
# A record without GPUs is said once, not also as missing.
make_rows "$tmp/u" "extra['gpus-run3-np.txt'] = 'NVIDIA-SMI has failed\\n'"
gate "$tmp/u"
expect 2 "nvidia-smi failed"
! grep -q "run 3 part np has results but no host record" "$tmp/gate.md" ||
  fail "a record without GPUs also reported missing: $(grep 'run 3' "$tmp/gate.md")"
rm -rf "$tmp/u"

# Two runs: not judged; with --min-runs 2 every target holds, still no pass.
make_rows "$tmp/two"
rm "$tmp"/two/*-run3.json
gate "$tmp/two"
expect 2 "two runs"
has "NOT JUDGED: 2 run(s), 3 needed" "two runs"
gate "$tmp/two" --min-runs 2
expect 2 "--min-runs 2"
has "every target holds on 2 run(s), the gate asks for 3" "--min-runs 2"
# Without graphs only with --allow-no-graph.
make_rows "$tmp/nograph" "[dd.update(cudagraph=0) for docs in files.values() for dd in docs]"
gate "$tmp/nograph"
expect 2 "no graph rows"
gate "$tmp/nograph" --allow-no-graph
expect 0 "no graph rows, --allow-no-graph"
gate "$tmp/none"
expect 2 "a folder that is not there"
has "is not a folder" "a folder that is not there"
echo "ok: gate_gpu.py's verdicts (met, missed against NCCL -R 1, per size, GEMM, too few runs, no graphs)"

# For real, on the simulated GPUs: every file, the commands, the SMs, every row compared.
out="$tmp/live"
common=(--graph 0 --runs 1 --min-runs 1 -b 8 -e 4K --nccl-lib "$PWD/$B/lib/nccl/libnccl.so.2" --build "$B" --no-make)
bash bench/run_gpu.sh --gate "${common[@]}" --part "np 2" --out "$out" >"$tmp/live.txt" 2>&1
rc=$?
# 2: the 128 KiB .. 512 MiB targets have no rows at these sizes, and one run is not a pass.
[ $rc = 2 ] || fail "run_gpu.sh --gate exited $rc: $(tail -20 "$tmp/live.txt")"
for f in nccl-np4-R0 symcomm-np4-R1 nccl-np4-R1 symcomm-np4-R0 nccl-np2-R0 symcomm-np2-R1 nccl-np2-R1; do
  [ -s "$out/$f-run1.json" ] || fail "no $f-run1.json: $(tail -20 "$tmp/live.txt")"
  reg=${f##*-R}
  head -1 "$out/$f-run1.txt" | grep -q -- "-f 2 -G 0 -R $reg" || fail "$f ran as: $(head -1 "$out/$f-run1.txt")"
done
grep -q "PROBLEM" "$out/gate.md" && fail "problems: $(grep PROBLEM "$out/gate.md")"
judged=$(grep -c "every size.*| \(holds at all\|MISSES at\)" "$out/gate.md")
[ "$judged" -eq 10 ] || fail "expected the 10 every-size rows compared, got $judged: $(cat "$out/gate.md")"
grep -q "| allreduce | 4 | -R 1 | from 8 B: ll, 1 block" "$out/gate.md" ||
  fail "no SM row for all-reduce on 4 ranks: $(sed -n '/Blocks each/,$p' "$out/gate.md")"
grep -q "| reduce | 2 | -R 1 | from 8 B: ll" "$out/gate.md" || fail "no SM row for reduce on 2 ranks"
grep "| sendrecv 8 B, 2 GPUs |" "$out/gate.md" | grep -q "µs (\(plain\|-R 1\)) |" || fail "sendrecv 8 B not compared: $(grep sendrecv "$out/gate.md")"
# --report judges the folder again, alike.
cp "$out/gate.md" "$tmp/first.md"
bash bench/run_gpu.sh --report "${common[@]}" --out "$out" >/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "--report exited $rc"
cmp -s "$out/gate.md" "$tmp/first.md" || fail "--report judged otherwise: $(diff "$tmp/first.md" "$out/gate.md" | head)"
# Part 2 again, NCCL not where it is said to be: exit 3, its old files gone, and
# the folder's verdict names the failed runs.
bash bench/run_gpu.sh --gate --graph 0 --runs 1 --min-runs 1 -b 8 -e 4K --part 2 --nccl-lib "$tmp/none/libnccl.so.2" \
  --build "$B" --no-make --out "$out" >"$tmp/broken.txt" 2>&1
rc=$?
[ $rc = 3 ] || fail "a failed run, yet exit $rc: $(tail -5 "$tmp/broken.txt")"
grep -q "run_gpu.sh: nccl-np2-R0-run1 failed" "$tmp/broken.txt" || fail "the failed run is not named"
[ -e "$out/nccl-np2-R0-run1.json" ] && fail "the earlier run's nccl-np2-R0-run1.json is still there"
grep -q "PROBLEM: a run failed: nccl-np2-R0-run1" "$out/gate.md" || fail "the verdict does not name the failed run"
echo "ok: run_gpu.sh --gate on the simulated GPUs ($judged rows compared, SMs from the logs, a failed re-run)"

# Refusals: exit 2, said.
bad_options=(
  "--gate --part ''|name at least one"
  "--gate --part 3|--part takes np, 2 and gemm"
  "--gate --runs abc|--runs abc"
  "--gate --run 0|--run 0: give a run from 1 to 3"
  "--gate --run 4|--run 4: give a run from 1 to 3"
  "--run 1|--run and --part go with --gate"
  "--gate --ops allreduce|--ops has no effect"
  "--gate --np 2 --part 'np 2'|--np 2 makes part np part 2 again"
  "--report --out $tmp/nowhere|is not a folder"
  "--gate --min-runs 0|--min-runs 0"
)
for b in "${bad_options[@]}"; do
  eval "bash bench/run_gpu.sh ${b%%|*} --build $B --no-make" >"$tmp/bad.txt" 2>&1
  rc=$?
  [ $rc = 2 ] || fail "run_gpu.sh ${b%%|*}: exit $rc, expected 2: $(tail -3 "$tmp/bad.txt")"
  grep -qF -- "${b#*|}" "$tmp/bad.txt" || fail "run_gpu.sh ${b%%|*} does not say '${b#*|}': $(tail -3 "$tmp/bad.txt")"
done
echo "ok: ${#bad_options[@]} bad option sets refused"
