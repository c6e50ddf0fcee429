#!/usr/bin/env bash
# Runs the end-to-end test in the real window: Xvfb, tauri-driver (with
# WebKitWebDriver), the debug studio and tch worker from target/debug, a fresh
# database, settings folder and web storage. Screenshots: test-output/e2e/.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The studio under test: target/debug's, or E2E_APP (the window's Rust test,
# src-tauri/tests/window.rs, passes the one cargo built for it); the studio
# finds the libtorch worker beside it.
app="${E2E_APP:-$PWD/target/debug/trainbench-studio}"
out="$PWD/test-output/e2e"
[ -x "$app" ] || { echo "e2e: $app is not built" >&2; exit 1; }
[ -x "$(dirname "$app")/trainbench-worker-tch" ] || { echo "e2e: $(dirname "$app")/trainbench-worker-tch is not built" >&2; exit 1; }
command -v tauri-driver >/dev/null || { echo "e2e: tauri-driver is not installed (cargo install tauri-driver --locked)" >&2; exit 1; }
rm -rf "$out"; mkdir -p "$out"
work="$(mktemp -d)"
display=":$((90 + RANDOM % 9))"
pids=()
cleanup() {
  # tauri-driver stops its WebKitWebDriver on SIGTERM (not on SIGKILL).
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
Xvfb "$display" -screen 0 1400x900x24 -nolisten tcp >"$out/xvfb.log" 2>&1 &
pids+=($!)
export DISPLAY="$display"
# A desktop session's own message bus and notification service (dunst), so
# that the studio's notifications go where a desktop's would; dbus-monitor
# writes each one the studio sends to notifications.log for the test to read.
dbus-daemon --session --address="unix:path=$work/bus" --nofork --nopidfile >"$out/dbus.log" 2>&1 &
pids+=($!)
export DBUS_SESSION_BUS_ADDRESS="unix:path=$work/bus"
for _ in $(seq 50); do [ -S "$work/bus" ] && break; sleep 0.1; done
dunst >"$out/dunst.log" 2>&1 &
pids+=($!)
dbus-monitor "interface='org.freedesktop.Notifications',member='Notify'" >"$out/notifications.log" 2>&1 &
pids+=($!)
export E2E_NOTIFICATIONS="$out/notifications.log"
# The app under test: a database, settings and cache of its own, one BLAS thread.
export TRAINBENCH_DB="$work/studio.sqlite" TRAINBENCH_CONFIG_DIR="$work/config" XDG_CACHE_HOME="$work/cache"
# And a web view's storage of its own (WebKit keeps the window's local storage
# under $XDG_DATA_HOME/dev.trainbench.studio): with the home's, the columns a
# previous run ticked were ticked again, and this run's clicks unticked them.
# The studio's environments stay where they are.
export TRAINBENCH_HOME="${TRAINBENCH_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/trainbench}"
export XDG_DATA_HOME="$work/data"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TRAINBENCH_NO_NVML=1
export WEBKIT_DISABLE_DMABUF_RENDERER=1 WEBKIT_DISABLE_COMPOSITING_MODE=1
# Both ports chosen here, apart: left to itself WebKitWebDriver takes 4445,
# which a random intermediary port (or anything else) can hold — seen once in
# CI ("Unable to listen … port 4445"). A driver that does not answer is
# stopped and started again on other ports, three tries.
ready=""
for try in 1 2 3; do
  port=$((4400 + RANDOM % 500))
  native=$((5400 + RANDOM % 500))
  tauri-driver --port "$port" --native-port "$native" >"$out/tauri-driver-$try.log" 2>&1 &
  driver=$!
  for _ in $(seq 75); do
    if curl -sf "http://127.0.0.1:$port/status" >/dev/null 2>&1; then ready=yes; break; fi
    sleep 0.2
  done
  if [ -n "$ready" ]; then pids+=("$driver"); break; fi
  echo "e2e: tauri-driver on ports $port/$native did not answer (try $try); see $out/tauri-driver-$try.log" >&2
  kill -TERM "$driver" 2>/dev/null || true
  wait "$driver" 2>/dev/null || true
done
[ -n "$ready" ] || { echo "e2e: tauri-driver did not start" >&2; exit 1; }
TAURI_DRIVER_URL="http://127.0.0.1:$port" node ui/e2e/studio.e2e.mjs "$app" "$out"
# The README's pictures (docs/screenshots/) are refreshed from this run's
# screenshots only when asked (`make screenshots`, which runs this with
# E2E_REFRESH_SCREENSHOTS=1): a test leaves the tree as it found it.
if [ "${E2E_REFRESH_SCREENSHOTS:-}" = 1 ]; then
  for name in welcome quick-live first-comparison pdf-page html-report-hover wizard-fp32 model-search gpu-session what-if; do
    cp "$out"/[0-9][0-9]-"$name".png "docs/screenshots/$name.png"
  done
  echo "e2e: the README's screenshots in docs/screenshots/ refreshed from $out (commit them when they change)"
fi
