#!/usr/bin/env bash
# The Debian package, installed and used by an account that did not build it.
#
# The package's libtorch worker was linked against libtorch in the builder's
# studio PyTorch environment (here /root/…, which another account cannot
# read). Installed with dpkg, it is started by a new user: first without a
# studio PyTorch environment (tch is refused, with the way to install it),
# then with one (it trains, loading libtorch from that user's environment).
#
# The user's environment is this machine's, hard-linked into their home: the
# same files `trainbench env install pytorch` would download from PyPI
# (minutes), made in a second, with its interpreter pointed at the system's
# /usr/bin/python3 (the builder's may live in a home the user cannot read).
# Needs root (dpkg, useradd); says SKIPPED otherwise. Packs the debug
# binaries the tests' build made (`make test` builds them first).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "deb: SKIPPED (installing a package and adding a user need root)"
  exit 0
fi
source scripts/env.sh
user=tb-deb-user
home=/home/$user
package=train-bench-studio
cleanup() {
  dpkg -r "$package" >/dev/null 2>&1 || true
  userdel -r "$user" >/dev/null 2>&1 || true
}
trap cleanup EXIT
cleanup

# `tauri bundle` packs the binaries as they are: `tauri build` would build
# the studio once more (without the tests' clippy wrapper and features,
# every workspace crate again) and run the UI's build a second time.
for bin in trainbench trainbench-studio trainbench-worker-tch; do
  [ -x "target/debug/$bin" ] || { echo "deb: target/debug/$bin is not built (cargo build --workspace)" >&2; exit 1; }
done
echo "deb: packing the debug binaries"
files='{"/usr/bin/trainbench":"../target/debug/trainbench","/usr/bin/trainbench-worker-tch":"../target/debug/trainbench-worker-tch","/usr/share/trainbench/workers/python":"../workers/python"}'
log=$(mktemp)
if ! (cd src-tauri && TAURI_FRONTEND_PATH=../ui ../ui/node_modules/.bin/tauri bundle --debug --bundles deb \
  --config "{\"bundle\":{\"linux\":{\"deb\":{\"files\":$files}}}}" >"$log" 2>&1); then
  tail -n 40 "$log"
  exit 1
fi
rm -f "$log"
deb=$(ls -t target/debug/bundle/deb/*.deb | head -n 1)
dpkg -i "$deb" >/dev/null
useradd -m -s /bin/bash "$user"

# As the new user, with a clean environment (nothing of the builder's).
as_user() {
  runuser -u "$user" -- env -i HOME="$home" PATH=/usr/local/bin:/usr/bin:/bin \
    OMP_NUM_THREADS=1 TRAINBENCH_NO_NVML=1 "$@"
}
fail() { echo "deb: FAILED: $*" >&2; exit 1; }
runpath=$(readelf -d /usr/bin/trainbench-worker-tch | sed -n 's/.*R[UN]*PATH.*\[\(.*\)\]/\1/p')
if as_user test -r "$runpath/libtorch_cpu.so"; then
  fail "the user can read the builder's libtorch ($runpath): this would prove nothing"
fi
run=(trainbench run --model resnet_mini --steps 6 --batch-size 4 --window-steps 2 --json)

echo "deb: without a studio PyTorch environment, tch is refused with the way to install it"
set +e
out=$(as_user "${run[@]}" 2>/dev/null)
code=$?
set -e
[ "$code" = 2 ] || fail "exit $code, expected 2: $out"
grep -q "libtorch was not found" <<<"$out" || fail "no reason given: $out"
grep -q "trainbench env install pytorch" <<<"$out" || fail "no way to install given: $out"

echo "deb: with the user's own studio PyTorch environment, it trains"
envs="$home/.local/share/trainbench/envs"
as_user mkdir -p "$envs"
cp -al "$TRAINBENCH_HOME/envs/torch-$TORCH_VERSION" "$envs/"
[ -x /usr/bin/python3 ] || fail "no /usr/bin/python3 to give the user's environment"
ln -sfn /usr/bin/python3 "$envs/torch-$TORCH_VERSION/bin/python"
out=$(as_user "${run[@]}") || fail "the run failed: $out"
python3 - "$out" "$home" <<'PY' || fail "unexpected result: $out"
import json, sys
v = json.loads(sys.argv[1])
run = v["runs"][0]
assert run["status"] == "completed", run
assert run["throughput_samples_per_s"] > 0, run
PY
db=$(as_user trainbench runs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["database"]["path"])')
[ "$db" = "$home/.local/share/trainbench/trainbench.sqlite" ] || fail "the run was stored in $db"
echo "deb: passed (installed $(basename "$deb"), trained as $user, stored in $db)"
