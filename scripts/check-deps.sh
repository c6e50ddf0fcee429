#!/usr/bin/env bash
# Fails when a low layer depends on what it must not (see ARCHITECTURE.md).
set -euo pipefail
cd "$(dirname "$0")/.."
forbidden='^(tauri|tauri-[a-z-]+|tch|torch-sys|nvml-wrapper|rusqlite|libsqlite3-sys|tokio)$'
names="$(cargo tree -p trainbench-core -e normal,build --prefix none --format '{p}' | awk '{print $1}' | sort -u)"
bad="$(grep -E "$forbidden" <<<"$names" || true)"
if [ -n "$bad" ]; then
  echo "check-deps: trainbench-core must stay pure, but depends on: $bad" >&2
  exit 1
fi
echo "check-deps: trainbench-core depends on none of tauri, tch, torch-sys, nvml-wrapper, rusqlite, tokio"
# The report crate reads plain records: no database, GPU, framework or GUI.
names="$(cargo tree -p trainbench-report -e normal,build --prefix none --format '{p}' | awk '{print $1}' | sort -u)"
bad="$(grep -E "$forbidden" <<<"$names" || true)"
if [ -n "$bad" ]; then
  echo "check-deps: trainbench-report must not depend on: $bad" >&2
  exit 1
fi
echo "check-deps: trainbench-report depends on none of them either"
