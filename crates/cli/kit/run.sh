#!/usr/bin/env bash
# TrainBench bench kit: measures training on a machine where the studio is not
# installed but a framework is. Written by `trainbench kit build`.
#
#   bash run.sh gpu-session [BUDGET_S] [flags]  the most valuable GPU figures
#                                             within a time budget (default 540 s)
#   bash run.sh gpu-check [gpu-check flags]   the GPU acceptance suite
#   bash run.sh quick [run flags]             one small benchmark per framework
#   bash run.sh env                           what the kit found here
#
# The machine's own Python (TRAINBENCH_PYTHON, else python3 on PATH) is
# registered as an environment for each framework it can import (PyTorch,
# TensorFlow, JAX). Results stay inside the kit (results/), with a session
# file to bring home: `trainbench import results/…/*.trainbench-session.json`
# (TRAINBENCH_RESULTS puts results/ elsewhere, e.g. a folder that is copied back).
set -euo pipefail
KIT="$(cd "$(dirname "$0")" && pwd)"
TB="$KIT/bin/trainbench"
suite="${1:-}"
[ $# -gt 0 ] && shift
case "$suite" in
  gpu-session|gpu-check|quick|env) ;;
  *)
    echo "usage: bash run.sh gpu-session|gpu-check|quick|env [flags]" >&2
    echo "suite = ${suite:-(none)} is not allowed: expected gpu-session, gpu-check, quick or env" >&2
    exit 2 ;;
esac
say() { printf 'kit: %s\n' "$*" >&2; }

export TRAINBENCH_HOME="${TRAINBENCH_HOME:-$KIT/home}"
export TRAINBENCH_DB="${TRAINBENCH_DB:-$TRAINBENCH_HOME/trainbench.sqlite}"
export TRAINBENCH_PYTHON_WORKERS="$KIT/share/trainbench/workers/python"
mkdir -p "$TRAINBENCH_HOME"
PY="${TRAINBENCH_PYTHON:-$(command -v python3 || true)}"

# 1. The machine's Python, registered once per framework it can import.
frameworks=()
# MODULE imported once: its version, and for torch libtorch's lib/ (beside
# the package), which the libtorch worker below needs. Each import of a
# framework takes seconds of CPU. Fails where MODULE does not import.
torch_here="" torch_lib=""
imported() {
  local found
  found="$("$PY" -c "import os, $1 as m; print(m.__version__); print(os.path.dirname(m.__file__))" 2>/dev/null)" || return 1
  version="$(head -n 1 <<<"$found")"
  if [ "$1" = torch ]; then torch_here="$version" torch_lib="$(sed -n 2p <<<"$found")/lib"; fi
}
if [ -n "$PY" ] && [ -x "$PY" ]; then
  # The Python frameworks the workers know, as FRAMEWORK:MODULE (their own list).
  pairs="$(PYTHONPATH="$TRAINBENCH_PYTHON_WORKERS" "$PY" -c 'from trainbench_worker.__main__ import FRAMEWORKS; print(" ".join(f"{k}:{v[0]}" for k, v in FRAMEWORKS.items()))' 2>/dev/null || true)"
  for pair in $pairs; do
    fw="${pair%%:*}" module="${pair##*:}"
    if imported "$module"; then
      if "$TB" env register "kit-$fw" --framework "$fw" --python "$PY" >/dev/null; then
        frameworks+=("$fw@kit-$fw")
        say "registered $fw ($version) from $PY"
      else
        say "$fw imports in $PY but its worker does not start there: left out"
      fi
    fi
  done
else
  say "no python3 found (set TRAINBENCH_PYTHON): no Python framework"
fi

# 2. A libtorch worker, only against the libtorch it was built for: the kit
#    holds one per release (bin/tch-X.Y.Z/), and the one matching this
#    machine's torch is used with that torch's lib/ on LD_LIBRARY_PATH.
built=()
for w in "$KIT"/bin/tch-*/trainbench-worker-tch; do
  [ -x "$w" ] || continue
  d="$(basename "$(dirname "$w")")"
  built+=("${d#tch-}")
done
if [ ${#built[@]} -gt 0 ]; then
  have="$(IFS=,; echo "${built[*]}" | sed 's/,/, /g')"
  if [ -z "$torch_here" ] && [ -n "$PY" ]; then imported torch || true; fi
  here="${torch_here:-none}"
  worker="$KIT/bin/tch-${here%%+*}/trainbench-worker-tch"
  if [ "$here" != none ] && [ -x "$worker" ]; then
    ldpath="$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    if LD_LIBRARY_PATH="$ldpath" "$worker" --version >/dev/null 2>&1; then
      export LD_LIBRARY_PATH="$ldpath" TRAINBENCH_WORKER_TCH="$worker"
      frameworks=("tch" "${frameworks[@]}")
      say "tch worker: the one built for libtorch ${here%%+*} (the kit has $have), this machine has torch $here: used"
    else
      say "tch worker for libtorch ${here%%+*} does not start here: left out ($(LD_LIBRARY_PATH="$ldpath" "$worker" --version 2>&1 | tail -n 1))"
    fi
  else
    say "tch worker left out: the kit's are built for libtorch $have, this machine has torch $here (the release must match)"
  fi
fi
list="$(IFS=,; echo "${frameworks[*]:-}")"
stamp="$(date -u +%Y%m%d-%H%M%S)"
out="${TRAINBENCH_RESULTS:-$KIT/results}/$suite-$stamp"

case "$suite" in
  env)
    "$TB" env list
    echo "frameworks the kit would measure: ${list:-none}"
    ;;
  gpu-session)
    # A first argument that is a number is the budget in seconds.
    budget=()
    if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+([.][0-9]+)?$ ]]; then budget=(--budget "$1"); shift; fi
    # The session measures PyTorch, JAX and tch (tch only where its libtorch matches).
    fws="$(IFS=,; echo "${frameworks[*]:-}" | tr ',' '\n' | grep -E '^(pytorch@|jax@|tch$)' | paste -sd, - || true)"
    # What earlier sessions measured (the kit's copy of the results in
    # docs/gpu-results/): never-measured items first, unless --measured is given.
    record="$KIT/share/trainbench/gpu-results"
    if [ -d "$record" ] && [[ " $* " != *" --measured"* ]]; then set -- --measured "$record" "$@"; fi
    set +e
    if [ -z "$fws" ]; then
      "$TB" gpu-session --out "$out" "${budget[@]}" "$@"
    else
      "$TB" gpu-session --framework "$fws" --out "$out" "${budget[@]}" "$@"
    fi
    rc=$?
    set -e
    [ -d "$out" ] && echo "results: $out (fold them in at home: trainbench gpu-session fold DIR)"
    exit "$rc"
    ;;
  gpu-check)
    if [ -z "$list" ]; then
      "$TB" gpu-check --out "$out" "$@"   # says "no GPU" first where there is none
    else
      "$TB" gpu-check --framework "$list" --out "$out" "$@"
    fi
    ;;
  quick)
    if [ -z "$list" ]; then
      say "no framework found to measure"; exit 2
    fi
    mkdir -p "$out"
    "$TB" run --framework "$list" --model vit_mini_patch4_32 "$@" --json > "$out/runs.json"
    ids="$("$PY" -c 'import json,sys; print(" ".join(str(r["id"]) for r in json.load(open(sys.argv[1]))["runs"]))' "$out/runs.json")"
    name="quick $(hostname) $stamp"
    # shellcheck disable=SC2086
    "$TB" session save "$name" $ids >/dev/null
    "$TB" export session "$name" -o "$out/quick.trainbench-session.json"
    "$TB" runs
    echo "session file: $out/quick.trainbench-session.json"
    ;;
esac
