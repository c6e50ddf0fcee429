"""Peak memory and time of the CLI's listings over a store of many runs.

Makes a store of --runs generated runs (the store's `many_runs` example:
windows, evaluations, telemetry and a summary per run, written through the
runner's calls), then runs each listing --repeats times under
`/usr/bin/time -v`, stdout to /dev/null, and prints per listing the largest
"Maximum resident set size" and the median wall time over the repeats, and
the size of what it writes (counted once, apart). With --before, a second
`trainbench` binary (an older build) is measured the same way, alternating
with the first, on the same store.

    cargo build --release -p trainbench-cli
    cargo build --release -p trainbench-store --example many_runs
    python bench/listing_memory.py [--runs 10000] [--repeats 3] [--before OLD_BINARY]

The target: every listing's peak under 100 MiB whatever the count. It is a
benchmark, not a test: figures depend on the machine and its load.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))

LISTINGS = [
    ("runs --json", ["runs", "--json"]),
    ("query --json (every run)", ["query", "--json", "--max-rows", "1000000", "SELECT * FROM q_runs"]),
    ("query --csv (every run)", ["query", "--csv", "--max-rows", "1000000", "SELECT * FROM q_runs"]),
    ("export csv (every run)", ["export", "csv"]),
    ("export csv --json (every run)", ["export", "csv", "--json"]),
    ("export csv -o FILE (every run)", ["export", "csv", "-o", "{scratch}/runs.csv"]),
]


def measure(binary, db, args):
    """One run under /usr/bin/time -v: (peak RSS in MiB, wall seconds)."""
    cmd = ["/usr/bin/time", "-v", binary, "--db", db, *args]
    with open(os.devnull, "wb") as null:
        done = subprocess.run(cmd, stdout=null, stderr=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    if not rss or not wall:
        sys.exit(f"no figures from /usr/bin/time:\n{done.stderr}")
    hours, minutes, seconds = wall.groups()
    return int(rss.group(1)) / 1024, int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)


def output_bytes(binary, db, args):
    """How many bytes a listing writes (on stdout, read in pieces, or into its -o file)."""
    if "-o" in args:
        subprocess.run([binary, "--db", db, *args], check=True, stderr=subprocess.DEVNULL)
        return os.path.getsize(args[args.index("-o") + 1])
    with subprocess.Popen([binary, "--db", db, *args], stdout=subprocess.PIPE) as p:
        n = 0
        while piece := p.stdout.read(1 << 20):
            n += len(piece)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--binary", default=os.path.join(TARGET, "release", "trainbench"))
    ap.add_argument("--before", help="a second trainbench binary measured alike (an older build)")
    ap.add_argument("--generator", default=os.path.join(TARGET, "release", "examples", "many_runs"))
    ap.add_argument("--db", help="an existing store to list instead of a generated one")
    a = ap.parse_args()
    binaries = [("after", a.binary)] + ([("before", a.before)] if a.before else [])
    with tempfile.TemporaryDirectory(prefix="trainbench-listing-") as scratch:
        db = a.db
        if db is None:
            db = os.path.join(scratch, "runs.sqlite")
            subprocess.run([a.generator, db, str(a.runs)], check=True)
        print(f"store: {db} ({os.path.getsize(db) / 2**20:.0f} MiB)")
        print(f"| listing | binary | output | peak RSS, MiB (max of {a.repeats}) | wall, s (median) |")
        print("|---|---|---:|---:|---:|")
        for name, listing in LISTINGS:
            args = [arg.format(scratch=scratch) for arg in listing]
            size = output_bytes(a.binary, db, args)
            figures = {label: [] for label, _ in binaries}
            for _ in range(a.repeats):
                for label, binary in binaries:
                    figures[label].append(measure(binary, db, args))
            for label, _ in binaries:
                rss = max(f[0] for f in figures[label])
                wall = statistics.median(f[1] for f in figures[label])
                print(f"| `{name}` | {label} | {size / 1e6:.1f} MB | {rss:.0f} | {wall:.2f} |", flush=True)


if __name__ == "__main__":
    main()
