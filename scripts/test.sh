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
# One JAX compilation cache for every run the tests start (JAX's own
# persistent cache, which users turn on the same way): the tests train the
# same small models at the same shapes many times, and XLA compiles a
# training step on this CPU in 10–100 s. Time to first step in the tests is
# therefore not a cold compilation's; no test asserts on it (TESTING.md).
export JAX_COMPILATION_CACHE_DIR="$PWD/target/test-cache/jax"
# JAX's random numbers as before JAX 0.5 made its "partitionable" threefry
# the default: on this CPU XLA compiles a model's jitted initialisation
# (hundreds of random draws) in about 11 s with it and in under 1 s
# without. The draws differ, not their distribution; the tests' runs show
# the setting among the variables the worker saw. A person's runs keep
# JAX's default (docs/build-times.md).
export JAX_THREEFRY_PARTITIONABLE=0
# Environments the tests install (real JAX releases for the bisection, the
# version picker and the desktop's release start) without compiling every
# Python file of the framework and its dependencies at install: about 20 s of
# CPU for JAX with Flax and Optax, for environments that start two to four
# workers, each of which then compiles what it imports (about 2 s). uv's own
# setting, which the studio's installer leaves to uv when it is set; the
# environments `setup.sh` made above keep their bytecode.
export UV_COMPILE_BYTECODE=0
start=$SECONDS
# CI builds once from a clean clone: cargo's incremental caches (several GB)
# would only fill its disk.
if [ "${CI:-}" = true ]; then export CARGO_INCREMENTAL=0; fi
# Free space and time so far, printed between the heavier steps: a full disk
# shows here before it fails a test.
disk() { echo "-- $((SECONDS - start)) s so far; free: $(df -h --output=avail . | tail -n 1 | tr -d ' ') here, $(df -h --output=avail "${TMPDIR:-/tmp}" | tail -n 1 | tr -d ' ') in ${TMPDIR:-/tmp}, target/ $(du -sh target 2>/dev/null | cut -f1)"; }
# Builds that only need the CPU the foreground leaves idle (the serial end
# of a cargo build, the tests' waits on servers and sleeps) run beside it at
# the lowest priority (nice 19: about 1.5 % of a core when both are busy),
# each with its own log, printed when it is waited for; a failure fails the
# run there. Nothing that measures time runs in the background.
bg_dir="$(mktemp -d)"
declare -A bg_pids=()
trap 'for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$bg_dir"' EXIT
bg_start() { local name="$1" level="$2"; shift 2; nice -n "$level" "$@" >"$bg_dir/$name.log" 2>&1 & bg_pids[$name]=$!; }
bg_wait() {
  local name="$1" rc=0
  wait "${bg_pids[$name]}" || rc=$?
  unset "bg_pids[$name]"
  tail -n 20 "$bg_dir/$name.log"
  if [ "$rc" -ne 0 ]; then echo "$name failed (exit $rc): its log above" >&2; exit "$rc"; fi
}
disk
# The libtorch worker for PyTorch 2.11 (the GPU machines' release; its own
# workspace and target folder), built beside the checks and the main build;
# its tests run on their own below.
bg_start tch-2.11 10 bash scripts/build-tch-2.11.sh
# The tools only the tests use, where missing (a fresh machine has none):
# tauri-driver for the window, cargo-deny for the dependency check and
# cargo-fuzz with the nightly toolchain it needs. Built one after another
# into one target folder, so the crates they share (74 between cargo-fuzz
# and cargo-deny) are compiled once, in cargo's debug profile without debug
# info: none of them does heavy work (a dependency check takes seconds).
# Measured from nothing here: 209 s of CPU against 346 s built optimised
# and apart (docs/build-times.md).
tools_target="$TRAINBENCH_HOME/tools/cargo-target"
# Then the session importer under libFuzzer for a number of inputs
# (FUZZ_RUNS, 150,000 by default), on a copy of its corpus, built and run
# at the lowest priority once the tools are there: it takes the CPU the
# build and the tests leave idle, and whatever is left of it runs after
# them. Without AddressSanitizer: the importer and everything it calls is
# safe Rust (a panic is what the fuzzing looks for, and libFuzzer catches it
# without a sanitizer), and the instrumented build took 184 s here against
# 92 s.
# At opt-level 1: its build took 185 s of CPU against 342 s at cargo's
# release level (3), and the 150,000 inputs 41 s against 22 s.
fuzz_runs="${FUZZ_RUNS:-150000}"
corpus="$bg_dir/corpus"
mkdir "$corpus" && cp fuzz/corpus/session_import/* "$corpus/"
bg_start tools 19 bash -c "
  trap 'echo \$? > $bg_dir/tools.part && mv $bg_dir/tools.part $bg_dir/tools.rc' EXIT
  set -e
  install_tool() { CARGO_TARGET_DIR='$tools_target' CARGO_PROFILE_DEV_DEBUG=0 cargo install --locked --debug \"\$@\"; }
  command -v tauri-driver >/dev/null || install_tool tauri-driver --version 2.1.0
  command -v cargo-deny >/dev/null || install_tool cargo-deny --version 0.20.2
  rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
  command -v cargo-fuzz >/dev/null || install_tool cargo-fuzz --version 0.13.2
  rm -rf '$tools_target'"
# The fuzzing starts once the tools' job has ended, and only if it ended well.
bg_start fuzz 19 bash -c "
  set -e
  until [ -e '$bg_dir/tools.rc' ]; do sleep 2; done
  [ \"\$(cat '$bg_dir/tools.rc')\" = 0 ] || { echo 'the tools did not install: their log is printed with the tests'; exit 1; }
  cd fuzz && export CARGO_PROFILE_RELEASE_OPT_LEVEL=1
  cargo +nightly fuzz build --sanitizer none session_import
  cargo +nightly fuzz run --sanitizer none session_import '$corpus' -- -runs=$fuzz_runs"
echo "== rustfmt"; cargo fmt --all -- --check
echo "== python: ruff check, ruff format --check (ruff.toml)"
"$TRAINBENCH_HOME/tools/ruff/bin/ruff" check --quiet . && "$TRAINBENCH_HOME/tools/ruff/bin/ruff" format --check --quiet .
# The Python workers' unit tests (schedule, data split and batch order,
# launch, the profile reducer), with the PyTorch environment's Python.
echo "== python: unit tests (pytest, tests/workers)"
PYTHONPATH="$TRAINBENCH_HOME/tools/pytest" "$TORCH_ENV/bin/python" -m pytest -q -p no:cacheprovider tests/workers
# The Python workers' type hints (workers/python/mypy.ini), read against the
# PyTorch environment's packages: strict on the modules every framework's
# worker shares, then without strict over every package there. Its cache in
# target/, not the source tree.
echo "== python: types (mypy: strict on harness, data, launch, launchers, ray_nodes, protocol, traits, scratch)"
mypy=("$TRAINBENCH_HOME/tools/mypy/bin/python" -m mypy --config-file mypy.ini --python-executable "$TORCH_ENV/bin/python" --cache-dir "$PWD/target/test-cache/mypy")
(cd workers/python &&
  "${mypy[@]}" --strict trainbench_worker/harness.py trainbench_worker/data.py trainbench_worker/launch.py trainbench_worker/ray_nodes.py trainbench_worker/protocol.py trainbench_worker/traits.py trainbench_worker/scratch.py trainbench_worker/launchers.py &&
  "${mypy[@]}" -p trainbench_worker -p trainbench_peers -p trainbench)
echo "== layering"; bash scripts/check-deps.sh
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
# Clippy rides on the build the tests use: clippy-driver wraps rustc for the
# workspace's own crates (as `cargo clippy` does, with its -D warnings) while
# they compile for real, so the dependencies are built once, not checked
# once more for clippy alone (docs/build-times.md). Every later cargo command
# of the workspace keeps the same wrapper, or cargo would build again.
clippy_driver="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)"
linted=(env RUSTC_WORKSPACE_WRAPPER="$clippy_driver" CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__")
echo "== clippy, and the build of every target the tests run"
"${linted[@]}" cargo build --workspace --all-targets --locked
# The libtorch worker's own tests against the PyTorch 2.11 build (started
# above). The kit tests below take it (target/tch-2.11/debug).
disk
echo "== libtorch worker for PyTorch 2.11: build (beside the above) and its tests"
bg_wait tch-2.11
bash scripts/build-tch-2.11.sh --test
disk
# The window's test (src-tauri/tests/window.rs) runs among the tests below
# and needs tauri-driver.
echo "== the tests' tools (installed beside the above where missing)"
bg_wait tools
echo "== tests"
log="$(mktemp)"
trap 'rm -f "$log"; for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$bg_dir"' EXIT
set +e
if cargo nextest --version >/dev/null 2>&1; then
  # cargo-nextest (.config/nextest.toml): each test in its own process, two
  # at a time across every test binary. The project has no doctests to miss.
  "${linted[@]}" cargo nextest run --workspace --locked 2>&1 | tee "$log"
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
  "${linted[@]}" cargo test --workspace --locked -- --test-threads=2 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  set -e
  awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1); if ($i ~ /^ignored/) s += $(i-1) } }
       END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
fi
disk
if [ "$status" -ne 0 ]; then exit "$status"; fi
# Licences, banned and duplicate crates, sources (deny.toml); advisories need
# GitHub's database, which this machine cannot reach.
echo "== cargo deny: licences, bans, sources"
cargo deny --log-level error check licenses bans sources
# The Debian package installed with dpkg and used by a new account, which
# cannot read the builder's libtorch (about 10 s; root only).
echo "== Debian package: installed and used by another account"
bash scripts/test-deb.sh
echo "== fuzz: session importer, ${fuzz_runs} inputs (built and run beside the above)"
bg_wait fuzz
disk
echo "== all checks passed in $((SECONDS - start)) s"
