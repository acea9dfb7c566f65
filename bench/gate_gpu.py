#!/usr/bin/env python3
"""Issue 9's verdict: symcomm against NCCL 2.28 on the GPUs of one host, from the
folder that `bash bench/run_gpu.sh --gate` filled.

    python3 bench/gate_gpu.py DIR                      # the targets, the SMs, the verdict
    python3 bench/gate_gpu.py --range 8-64M DIR        # a sweep that stopped at 64 MiB

Reads every *.json of DIR (bench/RESULTS_FORMAT.md; symcomm-perf's files say their
-R and -G), keeps the out-of-place float32 rows (sum; root 0), and takes the median
over runs of each (engine, ranks, -R, op, size). symcomm on windows (-R 1) is held to
the better of NCCL plain (-R 0) and NCCL on registered windows (-R 1) at each size,
as the issue asks, so both NCCL runs must be there; all-reduce on ordinary buffers
(symcomm -R 0) to NCCL plain. An "every size" target needs every size of the sweep
(--range, doubling) measured by every engine it compares. Only CUDA-graph rows
(-G 1) count, unless --allow-no-graph (the simulated backend has no graphs). The
SMs each collective occupies come from the logs of symcomm's runs (DIR/logs/,
SYMCOMM_DEBUG=INFO: "allreduce of N bytes on R ranks (CLASS): ALGO, B blocks").

A folder that cannot be judged says why: a run that failed (run_gpu.sh leaves
NAME.failed), rows with wrong or unchecked elements (in place too), a time that is
not positive, two machines, runs of two hosts (run_gpu.sh's gpus-runK-PART.txt, the
GPUs nvidia-smi listed at the start of each part of each run, differ), a file read
twice, fewer runs than --min-runs, sizes or NCCL runs missing. Exit status: 0 every target holds (with at least 3 runs); 1 some
target misses; 2 not judged (the reasons above, or --min-runs below 3). Standard
library only.
"""

import argparse
import glob
import hashlib
import json
import math
import os
import re
import signal
import statistics
import sys

from compare import parse_size, size_text  # bench/compare.py, beside this file

TIME, BUSBW = "time_us", "busbw_gbs"
GATE_RUNS = 3
OPS_NP = ("allgather", "reducescatter", "alltoall")
OPS_PAIR = ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce")
BLOCKWISE = ("allgather", "reducescatter", "alltoall")
REDUCING = ("allreduce", "reduce", "reducescatter")


def parse_range(text):
    lo, sep, hi = text.partition("-")
    if not sep:
        raise argparse.ArgumentTypeError(f"--range takes MIN-MAX, not '{text}'")
    lo, hi = parse_size(lo), parse_size(hi)
    if lo < 1 or hi < lo:
        raise argparse.ArgumentTypeError(f"--range {text}: need 1 <= MIN <= MAX")
    return lo, hi


def sweep_sizes(lo, hi, op, nranks):
    """The sizes symcomm-perf measures from lo to hi, doubling, for float32 (a size
    left with no whole element, or for the block operations no element a rank, is
    skipped)."""
    out, b = [], lo
    while b <= hi:
        least = 4 * nranks if op in BLOCKWISE else 4
        if b >= least and b % least == 0:
            out.append(b)
        b *= 2
    return out


class Rows:
    """Samples of the judged rows: (engine, nranks, registered, op, bytes) -> field -> values."""

    def __init__(self, allow_no_graph, np=4):
        self.allow_no_graph = allow_no_graph
        self.np = np  # the gate's main part's GPUs (--np): which part wrote an np2 file
        self.samples = {}
        self.machines, self.dates, self.commands = set(), set(), set()
        self.problems = []  # sentences: each makes the verdict "not judged"
        self.notes = []
        self.seen = {}  # content hash -> file

    def load(self, folder):
        if not os.path.isdir(folder):
            self.problems.append(f"{folder} is not a folder")
            return
        for path in sorted(glob.glob(os.path.join(folder, "*.failed"))):
            self.problems.append(f"a run failed: {os.path.basename(path)[:-len('.failed')]} (see its .txt)")
        for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
            try:
                with open(path, "rb") as f:
                    raw = f.read()
                doc = json.loads(raw)
                digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
                if digest in self.seen:
                    self.problems.append(f"{path} is the same file as {self.seen[digest]}: one run read twice")
                    continue
                self.seen[digest] = path
                self.add(path, doc)
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
                self.problems.append(f"cannot read {path}: {type(e).__name__}: {e}")
        if len(self.machines) > 1:
            self.problems.append("rows from more than one machine: " + "; ".join(sorted(self.machines)))
        self.check_hosts(folder)

    def check_hosts(self, folder):
        """run_gpu.sh's gpus-runK-PART.txt (nvidia-smi -L at the start of each
        part of run K): the runs must share one host, which the JSON's machine
        (model names) cannot tell apart from another of its kind. Parts are
        separate calls that may land on other hosts, so each (run, part) with
        results needs its record; a record that lists no GPU (nvidia-smi
        failed) leaves that part's host unknown (said once). On simulated GPUs
        (no nvidia-smi) the record is a line `HOST name`. gpus-runK.txt (no
        part: run_gpu.sh before parts) stands for every part of run K."""
        results = {}  # (run, np, gemm); np None: a file of run K named otherwise
        for path in glob.glob(os.path.join(folder, "*.json")):
            name = os.path.basename(path)
            m = re.search(r"-(gemm-)?np(\d+)-R\d+-run(\d+)\.json$", name)
            if m:
                results[(int(m.group(3)), int(m.group(2)), bool(m.group(1)))] = True
            elif re.search(r"-run(\d+)\.json$", name):
                results[(int(re.search(r"-run(\d+)\.json$", name).group(1)), None, False)] = True
        def parts_of(np, gemm):  # which --part wrote it (with --np 2, part np's files are part 2's)
            if gemm:
                return ("gemm",)
            if np is None:
                return ("np", "2", "gemm")
            return ("np", "2") if np == 2 and self.np == 2 else (("2",) if np == 2 else ("np",))
        wanted = {(k, p) for (k, np, gemm) in results for p in parts_of(np, gemm)}
        lists, recorded = {}, set()
        for path in sorted(glob.glob(os.path.join(folder, "gpus-run*.txt"))):
            name = os.path.basename(path)
            m = re.match(r"gpus-run(\d+)(?:-(np|2|gemm))?\.txt$", name)
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = (line.strip().lstrip("\ufeff") for line in f)
                    gpus = tuple(line for line in lines if re.match(r"GPU \d+:|HOST ", line))
            except OSError as e:
                self.problems.append(f"cannot read {path}: {e}")
                gpus = None
            if m:  # said below or here: either way not missing
                recorded.add((int(m.group(1)), m.group(2)))
                if m.group(2) is not None and (int(m.group(1)), m.group(2)) not in wanted:
                    continue  # a part that left no results (skipped on a smaller host): not compared
            if gpus is None:
                continue
            if not gpus:
                self.problems.append(f"{name} lists no GPU (did nvidia-smi -L fail there?): that run's host is unknown")
                continue
            lists.setdefault(gpus, []).append(name)
        missing = set()
        for (k, np, gemm) in results:
            parts = parts_of(np, gemm)
            if (k, None) not in recorded and not any((k, p) in recorded for p in parts):
                missing.add((k, parts[0]))
        for k, part in sorted(missing):
            self.problems.append(f"run {k} part {part} has results but no host record (gpus-run{k}-{part}.txt, "
                                 f"written by run_gpu.sh): the gate compares runs of one host")
        if len(lists) > 1:
            said = "; ".join(f"{', '.join(names)}: {' / '.join(g)}" for g, names in lists.items())
            self.problems.append(f"runs on more than one host (the gate compares runs of one host): {said}")

    def add(self, path, doc):
        if not isinstance(doc, dict):
            raise TypeError("not a JSON object")
        if doc.get("tool") != "symcomm-perf":
            self.notes.append(f"{os.path.basename(path)}: not symcomm-perf's ({doc.get('tool')}): left out")
            return
        rows = doc["rows"]
        if not isinstance(rows, list):
            raise TypeError("rows is not a list")
        # Every row of the file counts for correctness, judged or not.
        for r in rows:
            wrong = int(r["wrong"])
            what = f"{path}: {r['op']} {r['dtype']} {size_text(int(r['bytes']))}" + (" in place" if r.get("inplace") else "")
            if wrong == -1:  # in place some are never checked (sendrecv, all-to-all)
                if not r.get("inplace"):
                    self.problems.append(f"{what}: not checked (-c 0)")
            elif wrong != 0:
                self.problems.append(f"{what}: {wrong} wrong elements")
            t = float(r["time_us"])
            if not (t > 0 and math.isfinite(t)):
                self.problems.append(f"{what}: time {r['time_us']}")
        graph = int(doc["cudagraph"])
        if (graph != 1 and not self.allow_no_graph) or (graph != 0 and self.allow_no_graph):
            self.notes.append(f"{os.path.basename(path)}: -G {graph}: left out "
                              f"(the gate takes {'-G 0 (--allow-no-graph)' if self.allow_no_graph else '-G 1'})")
            return
        engine, nranks, reg = str(doc["engine"]), int(doc["nranks"]), int(doc["registered"])
        gemm = any("gemm_n" in r for r in rows)
        if gemm:
            engine += "+gemm"  # timed beside a GEMM: not the plain comparison's rows
        self.machines.add(str(doc.get("machine", "?")))
        self.dates.add(str(doc.get("date") or "?")[:10])
        self.commands.add(re.sub(r"--json \S+", "--json FILE", str(doc.get("command", "?"))))
        for r in rows:
            if r.get("inplace") or r["dtype"] != "float32":
                continue
            if r["op"] in REDUCING and r["redop"] != "sum":
                continue
            if r["op"] in ("reduce", "broadcast") and int(r["root"]) != 0:
                continue
            key = (engine, nranks, reg, r["op"], int(r["bytes"]))
            s = self.samples.setdefault(key, {})
            for field in (TIME, BUSBW, "gemm_slowdown", "busbw_together_gbs", "gemm_n"):
                if field in r:
                    s.setdefault(field, []).append(float(r[field]))

    def median(self, engine, nranks, reg, op, nbytes, field):
        v = self.samples.get((engine, nranks, reg, op, nbytes), {}).get(field)
        return (statistics.median(v), len(v)) if v else (None, 0)

    def nccl_best(self, nranks, op, nbytes, field):
        """The better of NCCL plain and NCCL -R 1: (value, runs, which), or (None, 0, what is missing)."""
        got = []
        for reg, name in ((0, "plain"), (1, "-R 1")):
            v, n = self.median("nccl", nranks, reg, op, nbytes, field)
            if v is None:
                return None, 0, f"no NCCL {name} rows"
            got.append((v, n, name))
        best = min(got, key=lambda g: g[0]) if field == TIME else max(got, key=lambda g: g[0])
        return best[0], min(g[1] for g in got), best[2]


class Verdict:
    def __init__(self, min_runs):
        self.min_runs = min_runs
        self.lines = ["| target | symcomm | NCCL | ratio | target ratio | verdict |", "|---|---|---|---|---|---|"]
        self.missed = 0
        self.unjudged = 0

    def not_judged(self, what, why, limit_text):
        self.unjudged += 1
        self.lines.append(f"| {what} | — | — | — | {limit_text} | NOT JUDGED: {why} |")

    def row(self, what, mine, runs_mine, peer, runs_peer, peer_name, unit, ratio_max=None, ratio_min=None):
        limit_text = bound(ratio_max, ratio_min)
        if mine is None:
            return self.not_judged(what, "no symcomm rows", limit_text)
        if peer is None or peer <= 0:
            return self.not_judged(what, peer_name or "no NCCL rows", limit_text)
        ratio = mine / peer
        ok = (ratio_max is None or ratio <= ratio_max) and (ratio_min is None or ratio >= ratio_min)
        runs = min(runs_mine, runs_peer)
        if runs < self.min_runs:
            verdict = f"NOT JUDGED: {runs} run(s), {self.min_runs} needed"
            self.unjudged += 1
        else:
            verdict = "holds" if ok else "MISSES"
            self.missed += 0 if ok else 1
        peer_text = fmt(peer, unit) + (f" ({peer_name})" if peer_name else "")
        self.lines.append(f"| {what} | {fmt(mine, unit)} | {peer_text} | {ratio:.2f} | {limit_text} | {verdict} |")


def fmt(v, unit):
    return f"{v:.2f} {unit}" if v < 100 else f"{v:.1f} {unit}"


def bound(ratio_max, ratio_min):
    return f"≤ {ratio_max:g}" if ratio_max is not None else f"≥ {ratio_min:g}"


def point(v, rows, nranks, op, nbytes, field, what, ratio_max=None, ratio_min=None):
    mine, n_mine = rows.median("symcomm", nranks, 1, op, nbytes, field)
    peer, n_peer, name = rows.nccl_best(nranks, op, nbytes, field)
    v.row(what, mine, n_mine, peer, n_peer, name, "µs" if field == TIME else "GB/s", ratio_max, ratio_min)


def every_size(v, rows, sweep, nranks, op, limit, what, mine_reg=1, peer_plain_only=False):
    """One verdict row for the whole sweep: the worst time ratio and the sizes over the limit."""
    sizes = sweep_sizes(sweep[0], sweep[1], op, nranks)
    worst, over, missing, runs = None, [], [], []
    for b in sizes:
        mine, n_mine = rows.median("symcomm", nranks, mine_reg, op, b, TIME)
        if peer_plain_only:
            peer, n_peer = rows.median("nccl", nranks, 0, op, b, TIME)
            why = "no NCCL plain rows"
        else:
            peer, n_peer, why = rows.nccl_best(nranks, op, b, TIME)
        if mine is None or peer is None:
            missing.append(f"{size_text(b)} ({'no symcomm rows' if mine is None else why})")
            continue
        ratio = mine / peer
        runs.append(min(n_mine, n_peer))
        if worst is None or ratio > worst[0]:
            worst = (ratio, b)
        if ratio > limit:
            over.append(f"{size_text(b)} {ratio:.2f}")
    peer_text = "NCCL plain" if peer_plain_only else "NCCL's best"
    span = f"{len(sizes)} sizes, {size_text(sizes[0])}–{size_text(sizes[-1])}" if sizes else "no sizes"
    if not sizes or missing:
        v.unjudged += 1
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        v.lines.append(f"| {what} | {span} | {peer_text} | — | ≤ {limit:g} | NOT JUDGED: "
                       f"{'no sizes in the range' if not sizes else 'missing ' + shown} |")
        return
    if min(runs) < v.min_runs:
        verdict = f"NOT JUDGED: {min(runs)} run(s), {v.min_runs} needed"
        v.unjudged += 1
    elif over:
        verdict = f"MISSES at {len(over)} of {len(sizes)} sizes: " + ", ".join(over[:8]) + (" …" if len(over) > 8 else "")
        v.missed += 1
    else:
        verdict = f"holds at all {len(sizes)} sizes"
    v.lines.append(f"| {what} | {span} | {peer_text} | worst {worst[0]:.2f} ({size_text(worst[1])}) | ≤ {limit:g} "
                   f"| {verdict} |")


def gemm_rows(v, rows, nranks, gemm_n):
    """The GEMM beside 64 MiB all-reduces: its slowdown, and the all-reduce's busbw beside it."""
    nbytes = 64 << 20
    for field, what, unit, lower_better in (("gemm_slowdown", "GEMM slowdown beside 64 MiB all-reduces", "x", True),
                                            ("busbw_together_gbs", "64 MiB all-reduce busbw beside the GEMM",
                                             "GB/s", False)):
        label = f"{what}, {nranks} GPUs (symcomm -R 1, NCCL plain)"
        limit_text = "≤ 1" if lower_better else "≥ 1"
        sizes = {e: rows.median(e, nranks, reg, "allreduce", nbytes, "gemm_n")[0]
                 for e, reg in (("symcomm+gemm", 1), ("nccl+gemm", 0))}
        if any(n is not None and n != gemm_n for n in sizes.values()):
            v.not_judged(label, f"the GEMM was not {gemm_n} x {gemm_n} ({sizes})", limit_text)
            continue
        mine, n_mine = rows.median("symcomm+gemm", nranks, 1, "allreduce", nbytes, field)
        peer, n_peer = rows.median("nccl+gemm", nranks, 0, "allreduce", nbytes, field)
        v.row(label, mine, n_mine, peer, n_peer, "", unit, **({"ratio_max": 1.0} if lower_better else {"ratio_min": 1.0}))


LOG_LINE = re.compile(r"COLL (\w+) of (\d+) bytes on (\d+) ranks \([A-Z_]+\): (.+?), (\d+) blocks?")


def measured_sizes(json_path):
    """op -> sorted sizes of the rows of one run's file (empty when it cannot be read)."""
    try:
        with open(json_path, encoding="utf-8") as f:
            doc = json.load(f)
        sizes = {}
        for r in doc.get("rows", []):
            sizes.setdefault(r.get("op"), set()).add(int(r.get("bytes", 0)))
        return {op: sorted(v) for op, v in sizes.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def sm_report(folder):
    """Per rank count, operation and -R: the size classes and the blocks each ran on.

    A log says a choice when it changes, at the call's size (all-reduce: the
    buffer; the others: what all ranks hold, as symcomm-perf counts them); a
    size's out-of-place and in-place calls may choose differently (both are
    listed). The benchmark's own small calls (its time and check bookkeeping)
    log too: a line counts for the smallest measured size at or above it, and
    only for the operations the run measured. The GEMM runs (one size) are left
    out."""
    classes = {}  # (nranks, registered, op) -> {bytes: [(algo, blocks), ...]}
    for path in sorted(glob.glob(os.path.join(folder, "logs", "symcomm-np*.log.0"))):
        name = os.path.basename(path)[:-len(".log.0")]
        m = re.search(r"-R(\d)", name)
        reg = int(m.group(1)) if m else -1
        measured = measured_sizes(os.path.join(folder, name + ".json"))
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = LOG_LINE.search(line)
                if not m or m.group(1) not in measured:
                    continue
                op, nbytes, nranks = m.group(1), int(m.group(2)), int(m.group(3))
                at = next((b for b in measured[op] if b >= nbytes), None)
                if at is not None:
                    seen = classes.setdefault((nranks, reg, op), {}).setdefault(at, [])
                    if (m.group(4), int(m.group(5))) not in seen:
                        seen.append((m.group(4), int(m.group(5))))
    out = []
    for (nranks, reg, op), seen in sorted(classes.items()):
        parts, last = [], None
        for nbytes in sorted(seen):
            text = " / ".join(f"{a}, {b} block{'s' if b != 1 else ''}" for a, b in seen[nbytes])
            if text != last:
                parts.append(f"from {size_text(nbytes)}: {text}")
                last = text
        out.append(f"| {op} | {nranks} | {'-R ' + str(reg) if reg >= 0 else '?'} | " + "; ".join(parts) + " |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="the folder bench/run_gpu.sh --gate wrote")
    ap.add_argument("--min-runs", type=int, default=GATE_RUNS,
                    help=f"runs each median needs (default {GATE_RUNS}; below {GATE_RUNS} never a pass)")
    ap.add_argument("--range", type=parse_range, default=(8, 1 << 30),
                    help="the sweep's sizes, MIN-MAX doubling (default 8-1G)")
    ap.add_argument("--np", type=int, default=4, help="the GPUs of the gate's main part (default 4)")
    ap.add_argument("--gemm", type=int, default=8192, help="the GEMM's size (default 8192)")
    ap.add_argument("--allow-no-graph", action="store_true",
                    help="judge rows without CUDA graphs (-G 0) instead: the simulated backend")
    args = ap.parse_args()
    if args.min_runs < 1:
        ap.error("--min-runs must be 1 or more")

    rows = Rows(args.allow_no_graph, args.np)
    rows.load(args.folder)
    v = Verdict(args.min_runs)
    g = f"{args.np} GPUs"
    point(v, rows, args.np, "allreduce", 8, TIME, f"all-reduce 8 B, {g}", ratio_max=0.85)
    point(v, rows, args.np, "allreduce", 128 << 10, TIME, f"all-reduce 128 KiB, {g}", ratio_max=0.75)
    point(v, rows, args.np, "allreduce", 2 << 20, TIME, f"all-reduce 2 MiB, {g}", ratio_max=0.85)
    point(v, rows, args.np, "allreduce", 512 << 20, BUSBW, f"all-reduce 512 MiB busbw, {g}", ratio_min=1.03)
    point(v, rows, 2, "sendrecv", 8, TIME, "sendrecv 8 B, 2 GPUs", ratio_max=0.67)
    point(v, rows, 2, "sendrecv", 512 << 20, BUSBW, "sendrecv 512 MiB busbw, 2 GPUs", ratio_min=1.05)
    for op in OPS_NP:
        every_size(v, rows, args.range, args.np, op, 1.0, f"{op}, every size, {g}")
    every_size(v, rows, args.range, args.np, "allreduce", 1.1, f"all-reduce plain buffers (-R 0), every size, {g}",
               mine_reg=0, peer_plain_only=True)
    for op in OPS_PAIR:
        every_size(v, rows, args.range, 2, op, 1.0, f"{op}, every size, 2 GPUs")
    gemm_rows(v, rows, args.np, args.gemm)

    print(f"Machine: {'; '.join(sorted(rows.machines)) or '?'}. Date: {', '.join(sorted(rows.dates)) or '?'}.")
    print("symcomm with windows (-R 1) against the better of NCCL plain and NCCL -R 1 at each size, medians over "
          f"runs, out-of-place float32 rows, {'no CUDA graphs (-G 0)' if args.allow_no_graph else 'CUDA graphs (-G 1)'}"
          "; time ratios: below 1 symcomm is faster; busbw ratios: above 1 symcomm is faster.")
    print()
    for line in v.lines:
        print(line)
    sms = sm_report(args.folder) if os.path.isdir(args.folder) else []
    if sms:
        print()
        print("Blocks each size class of symcomm's collectives ran on (on GPUs a block is 512 threads, so at most "
              "that many SMs; from rank 0's log):")
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
    for n in rows.notes:
        print(f"NOTE: {n}")
    for p in rows.problems:
        print(f"PROBLEM: {p}")
    short = args.min_runs < GATE_RUNS
    verdict = 2 if rows.problems or v.unjudged else 1 if v.missed else 2 if short else 0
    print()
    if verdict == 0:
        print("Verdict: every target holds.")
    elif verdict == 1:
        print(f"Verdict: {v.missed} target(s) missed.")
    elif not rows.problems and not v.unjudged:
        print(f"Verdict: not judged: every target holds on {args.min_runs} run(s), the gate asks for {GATE_RUNS}.")
    else:
        print(f"Verdict: not judged ({v.unjudged} target(s) without enough data, {len(rows.problems)} problem(s)); "
              f"{v.missed} missed.")
    return verdict


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
