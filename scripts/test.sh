#!/usr/bin/env bash
# Every check and test, cheapest first. `make test` and .ci/run call this.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every framework (the tests train with PyTorch, TensorFlow and JAX), what
# only the tests use (an SSH server, Slurm, the end-to-end test's driver …)
# and PyTorch 2.11, which the second libtorch worker is built against.
bash scripts/setup.sh --all --test --torch-2.11
source scripts/env.sh
# PyTorch with two threads on a busy two-core machine slows down tenfold.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
start=$SECONDS
# CI builds once from a clean clone: cargo's incremental caches (several GB)
# would only fill its disk.
if [ "${CI:-}" = true ]; then export CARGO_INCREMENTAL=0; fi
# Free space and time so far, printed between the heavier steps: a full disk
# shows here before it fails a test.
disk() { echo "-- $((SECONDS - start)) s so far; free: $(df -h --output=avail . | tail -n 1 | tr -d ' ') here, $(df -h --output=avail "${TMPDIR:-/tmp}" | tail -n 1 | tr -d ' ') in ${TMPDIR:-/tmp}, target/ $(du -sh target 2>/dev/null | cut -f1)"; }
disk
echo "== rustfmt"; cargo fmt --all -- --check
echo "== python: ruff check, ruff format --check (ruff.toml)"
"$TRAINBENCH_HOME/tools/ruff/bin/ruff" check --quiet . && "$TRAINBENCH_HOME/tools/ruff/bin/ruff" format --check --quiet .
echo "== layering"; bash scripts/check-deps.sh
# Licences, banned and duplicate crates, sources (deny.toml); advisories need
# GitHub's database, which this machine cannot reach.
echo "== cargo deny: licences, bans, sources"
# A debug build: 1 min 22 s to install here against 4 min 32 s optimised; a check takes 5 s.
command -v cargo-deny >/dev/null 2>&1 || cargo install cargo-deny --version 0.20.2 --locked --debug
cargo deny --log-level error check licenses bans sources
# `make run` (setup.sh without --test) installs no package that starts a
# system service; the tests' servers come with --test only.
echo "== set-up: no system service for make run"
run_pkgs=" $(bash scripts/setup.sh --print-packages) "
test_pkgs=" $(bash scripts/setup.sh --print-packages --test) "
for service in openssh-server slurm-wlm slurmd slurmctld munge; do
  if [[ "$run_pkgs" == *" $service "* ]]; then
    echo "set-up: make run would install $service, which starts a system service: move it under --test" >&2
    exit 1
  fi
done
for needed in openssh-server slurm-wlm munge; do
  [[ "$test_pkgs" == *" $needed "* ]] || { echo "set-up: --test no longer installs $needed, which the tests start" >&2; exit 1; }
done
echo "== sizes"; python3 scripts/check_sizes.py
echo "== module loops"; python3 scripts/check_module_loops.py
echo "== doc paths"; python3 scripts/check_doc_paths.py
# The UI first: the desktop crate embeds ui/dist when it compiles.
echo "== ui: typecheck, lint (Biome), unit tests (vitest), build"
(cd ui && npm run --silent typecheck && npm run --silent lint && npx vitest run && npm run --silent build)
echo "== clippy"; cargo clippy --workspace --all-targets --locked -- -D warnings
# The libtorch worker for PyTorch 2.11 (the GPU machines' release; its own
# workspace): built, and the libtorch worker's own tests run against it.
# The kit tests below take it (target/tch-2.11/debug).
disk
echo "== libtorch worker for PyTorch 2.11: build and its tests"
bash scripts/build-tch-2.11.sh --test
disk
echo "== tests"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
if cargo nextest --version >/dev/null 2>&1; then
  # cargo-nextest (.config/nextest.toml): each test in its own process, two
  # at a time across every test binary. The project has no doctests to miss.
  cargo nextest run --workspace --locked 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  set -e
  # One closing line, then the ten slowest tests (where CI's time goes).
  awk '/ tests run: / { sub(/.* tests run: /, ""); n = split($0, parts, ", ")
         for (i = 1; i <= n; i++) { split(parts[i], w, " "); if (w[2] ~ /^passed/) p = w[1]; if (w[2] ~ /^failed/) f += w[1]; if (w[2] == "timed") f += w[1]; if (w[2] ~ /^skipped/) s = w[1] } }
       END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
  echo "slowest tests:"
  sed -n 's/^ *PASS \[ *\([0-9.]*\)s\] ([ 0-9/]*) /\1 s  /p' "$log" | sort -rn | uniq | awk 'NR <= 10'  # awk reads to the end: `head` would leave sort with SIGPIPE, which pipefail makes fatal
else
  # Without cargo-nextest: cargo's own runner, one test binary at a time.
  cargo test --workspace --locked -- --test-threads=2 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  set -e
  awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1); if ($i ~ /^ignored/) s += $(i-1) } }
       END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
fi
disk
if [ "$status" -ne 0 ]; then exit "$status"; fi
# The real window under Xvfb through tauri-driver + WebKitWebDriver (the
# studio and the tch worker were built by cargo test above).
echo "== end-to-end: the desktop studio's window"
command -v tauri-driver >/dev/null 2>&1 || cargo install tauri-driver --version 2.1.0 --locked
cargo build --locked -p trainbench-studio -p trainbench-engine-tch
bash ui/e2e/run.sh
# The Debian package installed with dpkg and used by a new account, which
# cannot read the builder's libtorch (about 50 s; root only).
disk
echo "== Debian package: installed and used by another account"
bash scripts/test-deb.sh
# The session importer under libFuzzer for a bounded time (cargo-fuzz needs a
# nightly toolchain; both are installed here when missing).
fuzz_seconds="${FUZZ_SECONDS:-60}"
echo "== fuzz: session importer, ${fuzz_seconds} s"
rustup toolchain list 2>/dev/null | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
corpus="$(mktemp -d)"
cp fuzz/corpus/session_import/* "$corpus/"
# Without AddressSanitizer: the importer and everything it calls is safe Rust
# (a panic is what the fuzzing looks for, and libFuzzer catches it without a
# sanitizer), and the instrumented build took 184 s here against 92 s.
(cd fuzz && cargo +nightly fuzz run --sanitizer none session_import "$corpus" -- -max_total_time="$fuzz_seconds" 2>&1 | tail -n 40)
rm -rf "$corpus"
disk
echo "== all checks passed in $((SECONDS - start)) s"
