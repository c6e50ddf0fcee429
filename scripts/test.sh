#!/usr/bin/env bash
# Every check and test, cheapest first. `make test` and .ci/run call this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
# PyTorch with two threads on a busy two-core machine slows down tenfold.
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
start=$SECONDS
echo "== rustfmt"; cargo fmt --all -- --check
echo "== layering"; bash scripts/check-deps.sh
echo "== clippy"; cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== tests"; cargo test --workspace --locked -- --test-threads=2
echo "== all checks passed in $((SECONDS - start)) s"
