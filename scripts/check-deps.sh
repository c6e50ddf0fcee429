#!/usr/bin/env bash
# Fails when a crate depends on what its layer must not (see ARCHITECTURE.md):
# every workspace crate may depend only on crates in lower rows; the two
# shells (the CLI and the desktop app) reach the services only through the
# application layer (trainbench-app); core and report stay free of GUI,
# libtorch, NVML, SQLite and tokio, and the app layer of GUI and libtorch.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --format-version 1 --no-deps --locked | python3 -c '
import json, sys
# Rows, lowest first: a crate may use crates of lower rows only.
ROWS = {
    "trainbench-core": 0, "trainbench-files": 0,
    "trainbench-engine-tch": 1, "trainbench-store": 1, "trainbench-probe": 1, "trainbench-report": 1,
    "trainbench-runner": 2,
    "trainbench-remote": 3,
    "trainbench-app": 4,
    "trainbench-gpu-session": 5,
    "trainbench-cli": 6, "trainbench-studio": 6,
}
SHELLS = {"trainbench-cli", "trainbench-studio"}
# The GPU session is a use case above the application layer (the CLI only).
SHELL_MAY_USE = {"trainbench-app", "trainbench-core", "trainbench-gpu-session"}
PURE = {"tauri", "tauri-build", "tauri-specta", "tauri-plugin-dialog", "tch", "torch-sys",
        "nvml-wrapper", "rusqlite", "libsqlite3-sys", "tokio"}
NO_GUI_OR_LIBTORCH = {"tauri", "tauri-build", "tauri-specta", "tauri-plugin-dialog", "tch", "torch-sys"}
FORBIDDEN = {"trainbench-core": PURE, "trainbench-report": PURE, "trainbench-app": NO_GUI_OR_LIBTORCH,
             "trainbench-remote": NO_GUI_OR_LIBTORCH,
             "trainbench-gpu-session": NO_GUI_OR_LIBTORCH}
meta = json.load(sys.stdin)
problems = []
seen = set()
for pkg in meta["packages"]:
    name = pkg["name"]
    if name not in ROWS:
        problems.append(f"{name} has no row in scripts/check-deps.sh (add it, and to ARCHITECTURE.md)")
        continue
    seen.add(name)
    # Normal and build dependencies; tests and benchmarks may use any crate.
    deps = {d["name"] for d in pkg["dependencies"] if d["kind"] in (None, "build")}
    for d in sorted(deps):
        if d in ROWS and ROWS[d] >= ROWS[name]:
            problems.append(f"{name} (row {ROWS[name]}) depends on {d} (row {ROWS[d]}): only lower rows are allowed")
        if name in SHELLS and d in ROWS and d not in SHELL_MAY_USE:
            problems.append(f"{name} depends on {d}: a shell reaches the services only through trainbench-app")
        if d in FORBIDDEN.get(name, ()):
            problems.append(f"{name} must not depend on {d}")
for name in sorted(set(ROWS) - seen):
    problems.append(f"{name} is listed in scripts/check-deps.sh but is not a workspace crate")
if problems:
    print("check-deps: " + "\ncheck-deps: ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"check-deps: {len(seen)} crates, each on lower rows only; the CLI and the studio reach the services through trainbench-app")
'
# Direct dependencies are not enough for the pure crates: nothing they pull
# in may bring a forbidden crate either.
forbidden='^(tauri|tauri-[a-z-]+|tch|torch-sys|nvml-wrapper|rusqlite|libsqlite3-sys|tokio)$'
for crate in trainbench-core trainbench-files trainbench-report; do
  names="$(cargo tree -p "$crate" -e normal,build --prefix none --format '{p}' | awk '{print $1}' | sort -u)"
  bad="$(grep -E "$forbidden" <<<"$names" || true)"
  if [ -n "$bad" ]; then
    echo "check-deps: $crate must stay free of them, but depends on: $bad" >&2
    exit 1
  fi
done
echo "check-deps: trainbench-core, trainbench-files and trainbench-report depend (transitively) on none of tauri, tch, torch-sys, nvml-wrapper, rusqlite, tokio"
