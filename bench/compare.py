#!/usr/bin/env python3
"""Put benchmark engines side by side: symcomm against its peer (Open MPI here).

Reads result files in the format of bench/RESULTS_FORMAT.md (folders are searched
for *.json), takes the median over runs per (engine, ranks, size), and prints a
markdown table for docs/PERFORMANCE.md:

    python3 bench/compare.py build/bench-results/<date>/            # the summary
    python3 bench/compare.py --all build/bench-results/<date>/      # every size too

The summary gives, for each rank count, the operation's latency at 8 B and bus
bandwidth at 2 MiB and 16 MiB of each engine and the ratio symcomm / peer.
Exit status 1 when any row has wrong elements or no file could be read.
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

NAMES = {"openmpi": "Open MPI", "symcomm": "symcomm", "nccl": "NCCL", "tcp": "raw TCP"}


def parse_size(text):
    m = re.fullmatch(r"(\d+)\s*([KMG]?)i?B?", text.strip(), re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"bad size '{text}'")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def size_text(n):
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def engine_name(engine):
    return NAMES.get(engine, engine)


def load(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        # Tolerate the // comments of the format's example.
        return json.loads(re.sub(r"^\s*//.*$|\s//[^\"\n]*$", "", text, flags=re.MULTILINE))


def find_files(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files.extend(sorted(glob.glob(os.path.join(p, "*.json"))))
        else:
            files.append(p)
    return files


class Results:
    """Rows of one op, grouped by (engine, nranks, bytes): lists of time_us and busbw over runs."""

    def __init__(self, op):
        self.op = op
        self.samples = {}  # (engine, nranks, bytes) -> {"time": [], "busbw": [], "inplace": bool}
        self.commands = {}  # (engine, nranks) -> set of commands
        self.machines = set()
        self.dates = set()
        self.wrong = []  # (file, row) with wrong elements
        self.files = 0

    def add_file(self, path, doc):
        engine, nranks = doc.get("engine", "?"), int(doc.get("nranks", 0))
        rows = [r for r in doc.get("rows", []) if r.get("op") == self.op]
        if not rows:
            return
        self.files += 1
        self.machines.add(doc.get("machine", "unknown machine"))
        if doc.get("date"):
            self.dates.add(doc["date"][:10])
        cmd = re.sub(r"--json \S+", "--json FILE", doc.get("command", "?"))
        self.commands.setdefault((engine, nranks), set()).add(cmd)
        # Out-of-place rows when the file has them; in-place only when it has nothing else.
        if any(not r.get("inplace", False) for r in rows):
            rows = [r for r in rows if not r.get("inplace", False)]
        for r in rows:
            if r.get("wrong", 0) not in (0, -1):
                self.wrong.append((path, r))
            s = self.samples.setdefault((engine, nranks, int(r["bytes"])), {"time": [], "busbw": []})
            s["time"].append(float(r["time_us"]))
            s["busbw"].append(float(r["busbw_gbs"]))

    def engines(self):
        return sorted({k[0] for k in self.samples})

    def nranks(self):
        return sorted({k[1] for k in self.samples})

    def sizes(self, nranks):
        return sorted({k[2] for k in self.samples if k[1] == nranks})

    def get(self, engine, nranks, nbytes, what):
        s = self.samples.get((engine, nranks, nbytes))
        return s[what] if s else None


def cell(values, digits):
    """Median, with min-max over runs when there are several."""
    if not values:
        return "—"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def ratio(subject, peer):
    if not subject or not peer:
        return "—"
    p = statistics.median(peer)
    return f"{statistics.median(subject) / p:.2f}" if p > 0 else "—"


def digits_for(values):
    if not values:
        return 2
    m = statistics.median(values)
    return 3 if m < 1 else 2 if m < 100 else 1


def summary(res, subject, peer, lat_size, bw_sizes):
    sname, pname = engine_name(subject), engine_name(peer)
    out = [f"| measurement | ranks | {pname} | {sname} | {sname} / {pname} |", "|---|---|---|---|---|"]
    for n in res.nranks():
        if lat_size > 0:
            t_p, t_s = res.get(peer, n, lat_size, "time"), res.get(subject, n, lat_size, "time")
            d = digits_for(t_p or t_s)
            out.append(f"| {res.op} {size_text(lat_size)}, latency (µs, lower is better) | {n} | "
                       f"{cell(t_p, d)} | {cell(t_s, d)} | {ratio(t_s, t_p)} |")
        for b in bw_sizes:
            b_p, b_s = res.get(peer, n, b, "busbw"), res.get(subject, n, b, "busbw")
            d = digits_for(b_p or b_s)
            out.append(f"| {res.op} {size_text(b)}, busbw (GB/s, higher is better) | {n} | "
                       f"{cell(b_p, d)} | {cell(b_s, d)} | {ratio(b_s, b_p)} |")
    return out


def every_size(res, subject, peer, n):
    sname, pname = engine_name(subject), engine_name(peer)
    out = [f"{res.op}, {n} ranks (medians):", "",
           f"| size | {pname} time (µs) | {sname} time (µs) | time {sname} / {pname} | "
           f"{pname} busbw (GB/s) | {sname} busbw (GB/s) | busbw {sname} / {pname} |",
           "|---:|---:|---:|---:|---:|---:|---:|"]

    def med(v, digits):
        return f"{statistics.median(v):.{digits}f}" if v else "—"

    for b in res.sizes(n):
        t_p, t_s = res.get(peer, n, b, "time"), res.get(subject, n, b, "time")
        b_p, b_s = res.get(peer, n, b, "busbw"), res.get(subject, n, b, "busbw")
        out.append(f"| {size_text(b)} | {med(t_p, 2)} | {med(t_s, 2)} | {ratio(t_s, t_p)} | "
                   f"{med(b_p, 3)} | {med(b_s, 3)} | {ratio(b_s, b_p)} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="result folders (their *.json) or JSON files")
    ap.add_argument("--all", action="store_true", help="also print every size, one table per rank count")
    ap.add_argument("--op", default="allreduce", help="operation to compare (default allreduce)")
    ap.add_argument("--subject", default="symcomm", help="engine measured (default symcomm)")
    ap.add_argument("--peer", default="openmpi", help="engine it is measured against (default openmpi)")
    ap.add_argument("--latency-size", type=parse_size, default=8, help="size for latency (default 8; 0: no latency row)")
    ap.add_argument("--bw-sizes", default="2M,16M", help="sizes for bus bandwidth (default 2M,16M)")
    args = ap.parse_args()
    bw_sizes = [parse_size(s) for s in args.bw_sizes.split(",") if s]

    res = Results(args.op)
    bad = False
    files = find_files(args.paths)
    for path in files:
        try:
            res.add_file(path, load(path))
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"compare.py: cannot read {path}: {e}", file=sys.stderr)
            bad = True
    if res.files == 0:
        print(f"compare.py: no '{args.op}' rows in {', '.join(args.paths)}", file=sys.stderr)
        return 1

    runs = {}
    for (engine, nranks, _), s in res.samples.items():
        runs[engine] = max(runs.get(engine, 0), len(s["time"]))
    engines = res.engines()

    print(f"Machine: {'; '.join(sorted(res.machines))}. Date: {', '.join(sorted(res.dates)) or 'unknown'}.")
    print("Runs per engine and rank count: "
          + ", ".join(f"{engine_name(e)} {runs[e]}" for e in engines)
          + "; each cell is the median, with the range over runs in brackets.")
    for e in (args.subject, args.peer):
        if e not in engines:
            print(f"No {engine_name(e)} results in these files: its columns are empty.")
    print()
    for line in summary(res, args.subject, args.peer, args.latency_size, bw_sizes):
        print(line)
    print()
    print(f"Ratios are {engine_name(args.subject)} / {engine_name(args.peer)} of the medians: "
          "below 1 is better for latency, above 1 is better for bus bandwidth.")
    print()
    print("Commands:")
    print()
    print("```")
    for (engine, nranks) in sorted(res.commands):
        for cmd in sorted(res.commands[(engine, nranks)]):
            print(cmd)
    print("```")
    if args.all:
        for n in res.nranks():
            print()
            for line in every_size(res, args.subject, args.peer, n):
                print(line)
    if res.wrong:
        print()
        print(f"WRONG RESULTS in {len(res.wrong)} row(s):")
        for path, r in res.wrong:
            print(f"- {path}: {r['bytes']} B: {r['wrong']} wrong elements")
        bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under | head
    sys.exit(main())
