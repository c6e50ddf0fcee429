#!/usr/bin/env bash
# The libtorch worker built for PyTorch 2.11 (crates/engine-tch-2.11: the same
# source as crates/engine-tch, compiled with tch 0.24 against the torch 2.11
# environment that `scripts/setup.sh --torch-2.11` makes).
#
#   scripts/build-tch-2.11.sh [--release]   build target/tch-2.11/{debug,release}/trainbench-worker-tch
#   scripts/build-tch-2.11.sh --test        build it and run the libtorch worker's
#                                           own tests (crates/engine-tch/tests) against it
#
# Its own workspace and target folder: torch-sys declares `links = "tch"`, so
# torch-sys 0.24 cannot share a Cargo.lock with the studio's 0.26, and both
# workers are named trainbench-worker-tch.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
mode=build
profile=()
dir=debug
for arg in "$@"; do
  case "$arg" in
    --release) profile=(--release); dir=release ;;
    --test) mode=test ;;
    *) echo "build-tch-2.11.sh: unknown argument $arg (expected --release or --test)" >&2; exit 2 ;;
  esac
done
if [ ! -x "$TORCH_211_ENV/bin/python" ]; then
  echo "build-tch-2.11.sh: no PyTorch $TORCH_211_VERSION environment at $TORCH_211_ENV: run scripts/setup.sh --torch-2.11" >&2
  exit 2
fi
# torch-sys finds libtorch through the Python on PATH (LIBTORCH_USE_PYTORCH=1).
export VIRTUAL_ENV="$TORCH_211_ENV" PATH="$TORCH_211_ENV/bin:$PATH"
args=(--locked --manifest-path crates/engine-tch-2.11/Cargo.toml --target-dir target/tch-2.11 "${profile[@]}")
if [ "$mode" = test ]; then
  # All but the MNIST convergence test (25 s of the 50): convergence is the
  # worker's own code, which the PyTorch 2.13 build's run of the same tests
  # checks; against 2.11 the tests that build, train, run out of memory and
  # autocast in libtorch's own calls are what differ.
  cargo test "${args[@]}" -- --test-threads=2 --skip small_cnn_reaches_95_percent_on_mnist
else
  cargo build "${args[@]}"
  worker="target/tch-2.11/$dir/trainbench-worker-tch"
  echo "built: $worker ($("$worker" --version))"
fi
