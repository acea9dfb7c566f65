#!/usr/bin/env python3
"""Issue 9's verdict: symcomm against NCCL 2.28 on the GPUs of one host, from the
folder that `bash bench/run_gpu.sh --gate` filled.

    python3 bench/gate_gpu.py DIR                 # the targets' table, the SMs, the verdict
    python3 bench/gate_gpu.py --min-runs 1 DIR    # accept single runs (not a gate verdict)

Reads every *.json of DIR (bench/RESULTS_FORMAT.md; symcomm-perf writes
`registered` and `cudagraph`), takes the median over runs of each (engine, ranks,
-R, op, size), and compares symcomm with windows (-R 1) against the better of NCCL
plain (-R 0) and NCCL on registered windows (-R 1) at each size, as the issue asks;
all-reduce with ordinary buffers (-R 0) against NCCL plain. Rows without a CUDA
graph (cudagraph 0) count only when DIR has no graph rows (the simulated backend).
The SMs each collective occupies come from the logs of symcomm's runs (DIR/logs/,
SYMCOMM_DEBUG=INFO: "allreduce of N bytes on R ranks (CLASS): ALGO, B blocks").

Exit status: 0 every target holds; 1 some target misses; 2 a target could not be
judged (rows missing, fewer runs than --min-runs, wrong elements, unreadable files).
Standard library only.
"""

import argparse
import glob
import json
import os
import re
import signal
import statistics
import sys

TIME, BUSBW = "time_us", "busbw_gbs"
GATE_OPS4 = ("allgather", "reducescatter", "alltoall")
GATE_OPS2 = ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce")


def size_text(n):
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


class Rows:
    """Samples of out-of-place rows: (engine, nranks, registered, op, bytes) -> field -> values."""

    def __init__(self):
        self.samples = {}
        self.files = {}  # (engine, nranks, registered, op) -> files that hold the op
        self.machines, self.dates, self.commands = set(), set(), set()
        self.problems = []  # sentences: what makes a verdict impossible
        self.graph_rows = False

    def load(self, folder):
        docs = []
        for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
            try:
                with open(path, encoding="utf-8") as f:
                    docs.append((path, json.load(f)))
            except (OSError, ValueError) as e:
                self.problems.append(f"cannot read {path}: {e}")
        self.graph_rows = any(d.get("cudagraph", 0) > 0 for _, d in docs)
        for path, doc in docs:
            if doc.get("tool") != "symcomm-perf" or "registered" not in doc:
                continue
            if self.graph_rows and doc.get("cudagraph", 0) <= 0:
                continue
            self.add(path, doc)

    def add(self, path, doc):
        engine, nranks, reg = doc.get("engine"), int(doc.get("nranks", 0)), int(doc["registered"])
        if any("gemm_n" in r for r in doc.get("rows", [])):
            engine += "+gemm"  # timed beside a GEMM: not the plain comparison's rows
        self.machines.add(doc.get("machine", "?"))
        self.dates.add(doc.get("date", "?")[:10])
        self.commands.add(re.sub(r"--json \S+", "--json FILE", doc.get("command", "?")))
        for r in doc.get("rows", []):
            if r.get("inplace", False) or r.get("dtype") != "float32" or r.get("redop") not in ("sum", "none"):
                continue
            if r.get("op") in ("reduce", "broadcast") and r.get("root", 0) != 0:
                continue
            if r.get("wrong", 0) not in (0, -1):
                self.problems.append(f"{path}: {r['op']} {size_text(int(r['bytes']))}: {r['wrong']} wrong elements")
            key = (engine, nranks, reg, r["op"], int(r["bytes"]))
            s = self.samples.setdefault(key, {})
            for field in (TIME, BUSBW, "gemm_slowdown", "busbw_together_gbs", "gemm_n"):
                if field in r:
                    s.setdefault(field, []).append(float(r[field]))
            self.files.setdefault(key[:4], set()).add(path)

    def median(self, engine, nranks, reg, op, nbytes, field):
        v = self.samples.get((engine, nranks, reg, op, nbytes), {}).get(field)
        return (statistics.median(v), len(v)) if v else (None, 0)

    def sizes(self, engine, nranks, reg, op):
        return sorted(k[4] for k in self.samples if k[:4] == (engine, nranks, reg, op))

    def nccl_best(self, nranks, op, nbytes, field):
        """The better of NCCL plain and NCCL -R 1: (value, runs, which)."""
        best = (None, 0, "")
        for reg, name in ((0, "plain"), (1, "-R 1")):
            v, n = self.median("nccl", nranks, reg, op, nbytes, field)
            if v is None:
                continue
            better = best[0] is None or (v < best[0] if field == TIME else v > best[0])
            if better:
                best = (v, n, name)
        return best


class Verdict:
    def __init__(self, min_runs):
        self.min_runs = min_runs
        self.lines = ["| target | symcomm | NCCL | ratio | target ratio | verdict |", "|---|---|---|---|---|---|"]
        self.missed = 0
        self.unjudged = 0

    def row(self, what, mine, runs_mine, peer, runs_peer, peer_name, unit, ratio_max=None, ratio_min=None):
        if mine is None or peer is None or peer <= 0:
            self.unjudged += 1
            self.lines.append(f"| {what} | {fmt(mine, unit)} | {fmt(peer, unit)} | — | {bound(ratio_max, ratio_min)} "
                              f"| NOT JUDGED: {'no symcomm rows' if mine is None else 'no NCCL rows'} |")
            return
        ratio = mine / peer
        ok = (ratio_max is None or ratio <= ratio_max) and (ratio_min is None or ratio >= ratio_min)
        if min(runs_mine, runs_peer) < self.min_runs:
            verdict = f"NOT JUDGED: {min(runs_mine, runs_peer)} run(s), {self.min_runs} needed"
            self.unjudged += 1
        else:
            verdict = "holds" if ok else "MISSES"
            self.missed += 0 if ok else 1
        peer_text = fmt(peer, unit) + (f" ({peer_name})" if peer_name else "")
        self.lines.append(f"| {what} | {fmt(mine, unit)} | {peer_text} | {ratio:.2f} | {bound(ratio_max, ratio_min)} "
                          f"| {verdict} |")


def fmt(v, unit):
    if v is None:
        return "—"
    return f"{v:.2f} {unit}" if v < 100 else f"{v:.1f} {unit}"


def bound(ratio_max, ratio_min):
    return f"≤ {ratio_max:g}" if ratio_max is not None else f"≥ {ratio_min:g}"


def point(v, rows, nranks, op, nbytes, field, what, ratio_max=None, ratio_min=None, mine_reg=1):
    mine, n_mine = rows.median("symcomm", nranks, mine_reg, op, nbytes, field)
    peer, n_peer, name = rows.nccl_best(nranks, op, nbytes, field)
    unit = "µs" if field == TIME else "GB/s"
    v.row(what, mine, n_mine, peer, n_peer, name, unit, ratio_max, ratio_min)


def every_size(v, rows, nranks, op, limit, what, mine_reg=1, peer_plain_only=False):
    """One verdict row for all sizes: the worst time ratio and the sizes over the limit."""
    sizes = rows.sizes("symcomm", nranks, mine_reg, op)
    worst, over, runs, compared = None, [], [], 0
    for b in sizes:
        mine, n_mine = rows.median("symcomm", nranks, mine_reg, op, b, TIME)
        if peer_plain_only:
            peer, n_peer = rows.median("nccl", nranks, 0, op, b, TIME)
        else:
            peer, n_peer, _ = rows.nccl_best(nranks, op, b, TIME)
        if peer is None or peer <= 0:
            continue
        compared += 1
        ratio = mine / peer
        runs.append(min(n_mine, n_peer))
        if worst is None or ratio > worst[0]:
            worst = (ratio, b)
        if ratio > limit:
            over.append(f"{size_text(b)} {ratio:.2f}")
    peer_text = "NCCL plain" if peer_plain_only else "NCCL's best"
    if compared == 0:
        v.unjudged += 1
        v.lines.append(f"| {what} | — | — | — | ≤ {limit:g} | NOT JUDGED: no sizes measured by both |")
        return
    if min(runs) < v.min_runs:
        verdict = f"NOT JUDGED: {min(runs)} run(s), {v.min_runs} needed"
        v.unjudged += 1
    elif over:
        verdict = f"MISSES at {len(over)} of {compared} sizes: " + ", ".join(over[:8]) + (" …" if len(over) > 8 else "")
        v.missed += 1
    else:
        verdict = f"holds at all {compared} sizes"
    v.lines.append(f"| {what} | {compared} sizes, {size_text(sizes[0])}–{size_text(sizes[-1])} | {peer_text} "
                   f"| worst {worst[0]:.2f} ({size_text(worst[1])}) | ≤ {limit:g} | {verdict} |")


def gemm_rows(v, rows, nranks):
    """The GEMM beside 64 MiB all-reduces: its slowdown, and the all-reduce's busbw beside it."""
    nbytes = 64 << 20
    mine_reg = next((reg for reg in (1, 0) if rows.median("symcomm+gemm", nranks, reg, "allreduce", nbytes,
                                                          "gemm_slowdown")[0] is not None), 1)
    for field, what, unit, lower_better in (("gemm_slowdown", "GEMM slowdown beside 64 MiB all-reduces", "x", True),
                                            ("busbw_together_gbs", "64 MiB all-reduce busbw beside the GEMM",
                                             "GB/s", False)):
        mine, n_mine = rows.median("symcomm+gemm", nranks, mine_reg, "allreduce", nbytes, field)
        peer, n_peer = rows.median("nccl+gemm", nranks, 0, "allreduce", nbytes, field)
        label = f"{what}, {nranks} GPUs (symcomm {'-R 1' if mine_reg else 'plain'}, NCCL plain)"
        if lower_better:
            v.row(label, mine, n_mine, peer, n_peer, "", unit, ratio_max=1.0)
        else:
            v.row(label, mine, n_mine, peer, n_peer, "", unit, ratio_min=1.0)


LOG_LINE = re.compile(r"COLL (\w+) of (\d+) bytes on (\d+) ranks \([A-Z_]+\): (.+?), (\d+) blocks?")


def measured_sizes(json_path):
    """op -> sorted sizes of the rows of one run's file (empty when it cannot be read)."""
    try:
        with open(json_path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {}
    sizes = {}
    for r in doc.get("rows", []):
        sizes.setdefault(r.get("op"), set()).add(int(r.get("bytes", 0)))
    return {op: sorted(v) for op, v in sizes.items()}


def sm_report(folder):
    """Per rank count, operation and -R: the size classes and the blocks (SMs) each ran on.

    A log says a choice when it changes, at the call's size (all-reduce: the
    buffer; the others: what all ranks hold, as symcomm-perf counts them). The
    benchmark's own small calls (its time and check bookkeeping) log too: a line
    counts for the smallest measured size at or above it, and only for the
    operations the run measured."""
    classes = {}  # (nranks, registered, op) -> {bytes: (algo, blocks)}
    for path in sorted(glob.glob(os.path.join(folder, "logs", "symcomm-*.log.0"))):
        name = os.path.basename(path)[:-len(".log.0")]
        m = re.search(r"-R(\d)", name)
        reg = int(m.group(1)) if m else -1
        measured = measured_sizes(os.path.join(folder, name + ".json"))
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = LOG_LINE.search(line)
                if not m or m.group(1) not in measured:
                    continue
                op, nbytes, nranks, algo, blocks = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), int(m.group(5))
                at = next((b for b in measured[op] if b >= nbytes), None)
                if at is not None:
                    classes.setdefault((nranks, reg, op), {})[at] = (algo, blocks)
    out = []
    for (nranks, reg, op), seen in sorted(classes.items()):
        parts, last = [], None
        for nbytes in sorted(seen):
            if seen[nbytes] != last:
                parts.append(f"from {size_text(nbytes)}: {seen[nbytes][0]}, {seen[nbytes][1]} SM"
                             + ("s" if seen[nbytes][1] != 1 else ""))
                last = seen[nbytes]
        out.append(f"| {op} | {nranks} | {'-R ' + str(reg) if reg >= 0 else '?'} | " + "; ".join(parts) + " |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="the folder bench/run_gpu.sh --gate wrote")
    ap.add_argument("--min-runs", type=int, default=3, help="runs each median needs (default 3)")
    args = ap.parse_args()

    rows = Rows()
    rows.load(args.folder)
    v = Verdict(args.min_runs)
    g4 = "4 GPUs"
    point(v, rows, 4, "allreduce", 8, TIME, f"all-reduce 8 B, {g4}", ratio_max=0.85)
    point(v, rows, 4, "allreduce", 128 << 10, TIME, f"all-reduce 128 KiB, {g4}", ratio_max=0.75)
    point(v, rows, 4, "allreduce", 2 << 20, TIME, f"all-reduce 2 MiB, {g4}", ratio_max=0.85)
    point(v, rows, 4, "allreduce", 512 << 20, BUSBW, f"all-reduce 512 MiB busbw, {g4}", ratio_min=1.03)
    point(v, rows, 2, "sendrecv", 8, TIME, "sendrecv 8 B, 2 GPUs", ratio_max=0.67)
    point(v, rows, 2, "sendrecv", 512 << 20, BUSBW, "sendrecv 512 MiB busbw, 2 GPUs", ratio_min=1.05)
    for op in GATE_OPS4:
        every_size(v, rows, 4, op, 1.0, f"{op}, every size, {g4}")
    every_size(v, rows, 4, "allreduce", 1.1, f"all-reduce plain buffers (-R 0), every size, {g4}", mine_reg=0,
               peer_plain_only=True)
    for op in GATE_OPS2:
        every_size(v, rows, 2, op, 1.0, f"{op}, every size, 2 GPUs")
    gemm_ranks = sorted({k[1] for k in rows.samples if k[0] == "symcomm+gemm"}) or [4]
    for nranks in gemm_ranks:
        gemm_rows(v, rows, nranks)

    print(f"Machine: {'; '.join(sorted(rows.machines)) or '?'}. Date: {', '.join(sorted(rows.dates)) or '?'}.")
    print("symcomm with windows (-R 1) against the better of NCCL plain and NCCL -R 1 at each size, medians over "
          f"runs{'' if rows.graph_rows else ' (no CUDA graph rows: the simulated backend)'}; time ratios: below 1 "
          "symcomm is faster; busbw ratios: above 1 symcomm is faster.")
    print()
    for line in v.lines:
        print(line)
    sms = sm_report(args.folder)
    if sms:
        print()
        print("SMs symcomm occupies (one block of 512 threads per SM; from the logs of rank 0):")
        print()
        print("| operation | ranks | buffers | size classes |")
        print("|---|---|---|---|")
        for line in sms:
            print(line)
    print()
    print("Commands:")
    print()
    print("```")
    for cmd in sorted(rows.commands):
        print(cmd)
    print("```")
    for p in rows.problems:
        print(f"PROBLEM: {p}")
    verdict = 2 if rows.problems or v.unjudged else 1 if v.missed else 0
    print()
    print(["Verdict: every target holds.",
           f"Verdict: {v.missed} target(s) missed.",
           f"Verdict: not judged ({v.unjudged} target(s) without enough data, {len(rows.problems)} problem(s)); "
           f"{v.missed} missed."][verdict])
    return verdict


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
