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
echo "== tests"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace --locked -- --test-threads=2 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1); if ($i ~ /^ignored/) s += $(i-1) } }
     END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }' "$log"
if [ "$status" -ne 0 ]; then exit "$status"; fi
echo "== all checks passed in $((SECONDS - start)) s"
