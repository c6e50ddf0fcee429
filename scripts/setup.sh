#!/usr/bin/env bash
# Installs what TrainBench needs on a Debian 12 machine and skips what is there:
# Debian packages, a Rust toolchain, the studio's PyTorch environment (torch
# 2.13.0 from PyPI, whose libtorch the tch worker links) and the UI's packages.
#
#   scripts/setup.sh         what `make run` needs: TensorFlow and JAX are left to
#                            be installed on demand (the wizard's Install, or
#                            `trainbench env install tensorflow|jax`)
#   scripts/setup.sh --all   also TensorFlow and JAX (`make setup-all`, `make test`)
#   scripts/setup.sh --test  also what only the tests use (`make test`): an SSH
#                            server, Slurm and munge, WebKitWebDriver, Xvfb,
#                            ImageMagick, poppler, cJSON, ruff, the Python MCP
#                            client (`mcp` from PyPI). Running the
#                            studio needs none of them, so `make run` installs
#                            none (and starts no service).
#   scripts/setup.sh --torch-2.11
#                            also PyTorch 2.11 (`make kit`, `make test`): the
#                            libtorch the second libtorch worker links, built
#                            for the GPU machines' PyTorch (docs/kit.md)
#   scripts/setup.sh --print-packages [--test]
#                            prints every Debian package that set-up would
#                            install on a bare machine, one line, and changes
#                            nothing (a test checks `make run` installs no
#                            service).
#
# Each step says what it does and how long it took; the total comes last.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

all=0
tests=0
print=0
torch211=0
for arg in "$@"; do
  case "$arg" in
    --all) all=1 ;;
    --test) tests=1 ;;
    --print-packages) print=1 ;;
    --torch-2.11) torch211=1 ;;
    *) echo "setup.sh: unknown argument $arg (expected --all, --test, --torch-2.11 or --print-packages)" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }
setup_start=$SECONDS
step_start=$SECONDS
# Ends a step: what it did and how long it took.
took() { say "$* ($((SECONDS - step_start)) s)"; step_start=$SECONDS; }
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# 1. Debian packages.
missing=()
# Whether it is there already (never, with --print-packages: every package is listed).
has() { [ "$print" = 0 ] && "$@" >/dev/null 2>&1; }
has command -v cc || missing+=(build-essential)
has command -v g++ || missing+=(g++)
has command -v make || missing+=(make)
has command -v pkg-config || missing+=(pkg-config)
has command -v curl || missing+=(curl ca-certificates)
has command -v git || missing+=(git)
# mold links the Rust binaries several times faster than GNU ld (scripts/env.sh).
has command -v mold || missing+=(mold)
has command -v python3 || missing+=(python3)
has python3 -c 'import venv, ensurepip' || missing+=(python3-venv)
# The desktop app: WebKitGTK to build and run the Tauri window.
has dpkg -s libwebkit2gtk-4.1-dev || missing+=(libwebkit2gtk-4.1-dev)
# Remote hosts: the studio drives the system ssh client.
has command -v ssh || missing+=(openssh-client)
if [ "$tests" = 1 ]; then
  # poppler-utils: the report tests render PDFs with pdftoppm and read them with pdftotext.
  has command -v pdftoppm || missing+=(poppler-utils)
  # The desktop's end-to-end test: WebKitWebDriver, a virtual display, screenshots.
  has command -v WebKitWebDriver || missing+=(webkit2gtk-driver)
  has command -v Xvfb || missing+=(xvfb xauth)
  has command -v import || missing+=(imagemagick)
  # Notifications in the end-to-end test: a session bus of its own, a
  # notification service (dunst) and dbus-monitor to read what was sent;
  # another window (xmessage) given the focus with xdotool.
  has command -v dbus-daemon || missing+=(dbus-daemon)
  has command -v dbus-monitor || missing+=(dbus-bin)
  has command -v dunst || missing+=(dunst)
  has command -v xdotool || missing+=(xdotool)
  has command -v xmessage || missing+=(x11-utils)
  # The HTML report is opened in a real headless browser (Chromium and its
  # chromedriver, from Debian) to check its charts and that it fetches nothing.
  has command -v chromedriver || missing+=(chromium chromium-driver)
  # The remote tests start their own sshd on 127.0.0.1 (never the machine's port 22).
  has test -x /usr/sbin/sshd || missing+=(openssh-server)
  # Slurm: the tests start a single-machine cluster (munged, slurmctld, two slurmd).
  has command -v slurmctld || missing+=(slurm-wlm)
  has command -v munged || missing+=(munge)
  # patchelf: a test points a copy of the libtorch worker away from the folder
  # it was built against, as on another account, and checks it still trains.
  has command -v patchelf || missing+=(patchelf)
  # The fake libnvidia-ml.so the tests build reads its JSON script with cJSON.
  has dpkg -s libcjson-dev || missing+=(libcjson-dev)
fi
# Node.js builds the UI (Debian 12's nodejs 18 is enough: vite 6, vitest 3).
if ! has command -v npm || ! has node -e 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)'; then
  missing+=(nodejs npm)
fi
if [ "$print" = 1 ]; then
  echo "${missing[*]}"
  exit 0
fi
apt_install() {
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
# What runs beside the steps below (apt, environments) is waited for, not
# stopped, if set-up fails before it is: dpkg stopped half-way leaves the
# system to repair.
apt_pid=""
env_pids=()
trap 'if [ -n "$apt_pid" ]; then wait "$apt_pid"; fi; for p in "${env_pids[@]}"; do wait "$p"; done' EXIT
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  if [[ " ${missing[*]} " == *" python3"* || " ${missing[*]} " == *" curl "* ]]; then
    apt_install
    took "Debian packages installed"
  else
    # Nothing the environments' steps use is missing (Python with venv,
    # curl): the packages install beside them, mostly downloading and
    # unpacking while uv does the same, and are waited for before the UI's
    # step (Node.js may be among them).
    apt_log="$(mktemp)"
    apt_start=$SECONDS
    apt_install >"$apt_log" 2>&1 &
    apt_pid=$!
  fi
else
  took "Debian packages present"
fi
# The Debian packages installed beside the next steps, if so: waited for,
# what apt printed shown.
apt_wait() {
  [ -n "$apt_pid" ] || return 0
  local rc=0
  wait "$apt_pid" || rc=$?
  apt_pid=""
  cat "$apt_log"
  rm -f "$apt_log"
  if [ "$rc" -ne 0 ]; then
    say "installing the Debian packages failed (exit $rc): apt's output above"
    exit "$rc"
  fi
  say "Debian packages installed, beside the steps above ($((SECONDS - apt_start)) s)"
}

# 2. Rust (Debian 12's own cargo is too old for this workspace).
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    say "installing the Rust toolchain with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy -c rustfmt
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
fi
# The workspace's release (rust-toolchain.toml): an installed stable of that
# release is named so, rather than downloaded again.
want_rust="$(sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml)"
if command -v rustup >/dev/null 2>&1 && ! rustup toolchain list | grep -q "^$want_rust-"; then
  stable_rustc="$(rustup which --toolchain stable rustc 2>/dev/null || true)"
  if [ -n "$stable_rustc" ] && "$stable_rustc" --version | grep -q "^rustc $want_rust "; then
    rustup toolchain link "$want_rust" "$(dirname "$(dirname "$stable_rustc")")"
  fi
fi
if command -v rustup >/dev/null 2>&1; then
  for c in clippy rustfmt; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
  done
fi
took "Rust: $(cargo --version)"

# 3. The framework environments, each rebuilt only when its requirements file
#    changes (the marker holds the file's SHA-256, as `trainbench env install`
#    writes it). PyTorch first: the tch worker links its libtorch.
#    On a machine with an NVIDIA driver, TensorFlow and JAX get their CUDA builds.
gpu=""
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then gpu="-cuda"; fi
# uv (from PyPI, pinned) creates the environments: it downloads in parallel
# (on this project's 2-core machine the JAX environment took 38 s with pip and
# 2 s with uv, empty caches; docs/setup-times.md). pip stays the fallback.
UV_VERSION=0.13.9
uv_dir="$TRAINBENCH_HOME/tools/uv"
UV="$uv_dir/bin/uv"
if ! "$UV" --version 2>/dev/null | grep -q "^uv $UV_VERSION\b"; then
  rm -rf "$uv_dir"
  if python3 -m venv "$uv_dir" && "$uv_dir/bin/python" -m pip install -q "uv==$UV_VERSION"; then
    took "uv $UV_VERSION installed in $uv_dir"
  else
    say "uv could not be installed: environments are made with pip"
    UV=""
  fi
fi
export UV_PYTHON_DOWNLOADS=never
make_env() {  # NAME REQUIREMENTS IMPORTS (what must import afterwards)
  local dir="$TRAINBENCH_HOME/envs/$1" req="$2" import="$3"
  local want; want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ -f "$dir/.trainbench-ready" ] && [ "$(cat "$dir/.trainbench-ready")" = "$want" ] && [ -x "$dir/bin/python" ]; then
    took "environment $1 ready"
    return
  fi
  say "creating environment $1 from $req (PyPI; large the first time)"
  rm -f "$dir/.trainbench-ready"
  mkdir -p "$(dirname "$dir")"
  if [ -n "$UV" ]; then
    [ -x "$dir/bin/python" ] || "$UV" venv --quiet --allow-existing --python python3 "$dir"
    # Compiled to bytecode now, as pip does by default: where Python may not
    # write it (PYTHONDONTWRITEBYTECODE, a read-only install) every worker
    # start would compile TensorFlow's sources again (12 s of CPU against 4.4 s
    # for `import tensorflow` here).
    "$UV" pip install --compile-bytecode --python "$dir/bin/python" -r "$req"
    # The MNIST sample's package alone (envs/mnist-sample.txt says why).
    "$UV" pip install --compile-bytecode --python "$dir/bin/python" --no-deps -r envs/mnist-sample.txt
  else
    [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
    "$dir/bin/python" -m pip install -q --upgrade pip
    "$dir/bin/python" -m pip install --progress-bar off -r "$req"
    "$dir/bin/python" -m pip install --progress-bar off --no-deps -r envs/mnist-sample.txt
  fi
  "$dir/bin/python" -c "import $import"
  echo "$want" > "$dir/.trainbench-ready"
  took "environment $1 created: $(du -sh "$dir" | cut -f1) in $dir"
}
# Several environments are made at once (`--all`, `--torch-2.11`): the
# others are started beside with a log each, printed once they have ended,
# and PyTorch's is made in the foreground, its output shown as it comes
# (`make run` makes only that one). Each downloads, unpacks and compiles
# its bytecode while the others do; uv's cache takes several uv processes
# at once.
env_logs=()
make_env_beside() {
  local log
  log="$(mktemp)"
  make_env "$@" >"$log" 2>&1 &
  env_pids+=("$!")
  env_logs+=("$log")
}
envs_wait() {
  local i r rc=0
  for i in "${!env_pids[@]}"; do
    r=0
    wait "${env_pids[$i]}" || r=$?
    cat "${env_logs[$i]}"
    rm -f "${env_logs[$i]}"
    [ "$r" -eq 0 ] || rc=$r
  done
  env_pids=()
  env_logs=()
  if [ "$rc" -ne 0 ]; then say "an environment could not be made: its output above"; exit "$rc"; fi
}
if [ "$all" = 1 ]; then
  make_env_beside tensorflow-2.21.0 "envs/tensorflow$gpu.txt" "tensorflow, mlxtend"
  make_env_beside jax-0.10.2 "envs/jax$gpu.txt" "jax, mlxtend"
else
  say "TensorFlow and JAX: installed on demand (the wizard's Install, \`trainbench env install tensorflow|jax\`, or \`make setup-all\`)"
fi
if [ "$torch211" = 1 ]; then
  make_env_beside "torch-$TORCH_211_VERSION" envs/torch-2.11.txt torch
fi
make_env "torch-$TORCH_VERSION" envs/torch.txt "torch, mlxtend"
envs_wait
"$TORCH_ENV/bin/python" -c "import torch; assert torch.__version__.split('+')[0] == '$TORCH_VERSION', torch.__version__"
if [ "$torch211" = 1 ]; then
  "$TORCH_211_ENV/bin/python" -c "import torch; assert torch.__version__.split('+')[0] == '$TORCH_211_VERSION', torch.__version__"
fi
step_start=$SECONDS

# 4. The UI's packages (npm registry), reinstalled when the lock file changes.
apt_wait
want="$(sha256sum ui/package-lock.json | cut -d' ' -f1)"
if [ "$(cat ui/node_modules/.trainbench-lock 2>/dev/null)" != "$want" ]; then
  say "installing the UI's packages (npm install, versions from ui/package-lock.json)"
  # Not `npm ci`: npm 11 writes lock files without the other platforms'
  # optional binaries (Tauri CLI, rollup), which `npm ci` then refuses.
  (cd ui && npm install --no-audit --no-fund --loglevel=error)
  echo "$want" > ui/node_modules/.trainbench-lock
  took "UI packages installed"
else
  took "UI packages present"
fi
# 5. The tests' linters and the MCP client (`--test` only: running the studio
#    needs none):
#    ruff for the Python code (the UI's linter, Biome, is one of its packages).
if [ "$tests" = 1 ]; then
  # A test tool in an environment of its own: DIR, the distribution to
  # check the version of, its version, the requirement to install, what it
  # is (said when installed).
  tool_env() {
    if ! "$1/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('$2') != '$3')" 2>/dev/null; then
      rm -rf "$1"
      if [ -n "$UV" ]; then
        "$UV" venv -q --python python3 "$1" && VIRTUAL_ENV="$1" "$UV" pip install -q "$4"
      else
        python3 -m venv "$1" && "$1/bin/python" -m pip install -q "$4"
      fi
      took "$5 installed in $1"
    fi
  }
  RUFF_VERSION=0.17.6
  tool_env "$TRAINBENCH_HOME/tools/ruff" ruff "$RUFF_VERSION" "ruff==$RUFF_VERSION" "ruff $RUFF_VERSION"
  # The MCP client `crates/cli/tests/mcp.rs` drives `trainbench mcp` with:
  # the Python SDK from PyPI, pinned.
  MCP_CLIENT_VERSION=2.3.0
  tool_env "$TRAINBENCH_HOME/tools/mcp-client" mcp "$MCP_CLIENT_VERSION" "mcp==$MCP_CLIENT_VERSION" "the MCP client (mcp $MCP_CLIENT_VERSION)"
  # Ray for the Ray cluster test (crates/cli/tests/ray.rs starts a head and
  # two worker nodes on 127.0.0.1): `ray[default]` (its dashboard serves the
  # job API), pinned.
  RAY_VERSION=2.60.0
  tool_env "$TRAINBENCH_HOME/tools/ray" ray "$RAY_VERSION" "ray[default]==$RAY_VERSION" "Ray $RAY_VERSION"
  # pytest for the Python workers' unit tests (tests/workers), run
  # with the PyTorch environment's Python: its packages in a folder of their
  # own on PYTHONPATH, every version pinned.
  PYTEST_PACKAGES="pytest==8.4.2 iniconfig==2.3.1 pluggy==1.7.0 packaging==26.4 pygments==2.21.0"
  pytest_dir="$TRAINBENCH_HOME/tools/pytest"
  if [ "$(cat "$pytest_dir/.trainbench-packages" 2>/dev/null)" != "$PYTEST_PACKAGES" ]; then
    rm -rf "$pytest_dir"
    if [ -n "$UV" ]; then
      # shellcheck disable=SC2086
      "$UV" pip install -q --python "$TORCH_ENV/bin/python" --target "$pytest_dir" $PYTEST_PACKAGES
    else
      # shellcheck disable=SC2086
      "$TORCH_ENV/bin/python" -m pip install -q --target "$pytest_dir" $PYTEST_PACKAGES
    fi
    printf '%s' "$PYTEST_PACKAGES" >"$pytest_dir/.trainbench-packages"
    took "pytest installed in $pytest_dir"
  fi
  # mypy, the type checker of the Python workers (workers/python/mypy.ini),
  # in an environment of its own, every version pinned; it reads the
  # workers' packages (numpy, torch) from the PyTorch environment
  # (--python-executable), so none of them is installed here.
  MYPY_PACKAGES="mypy==2.4.1 mypy_extensions==1.2.0 typing_extensions==4.16.0 pathspec==1.1.1 librt==0.17.0 ast_serialize==0.13.1"
  mypy_dir="$TRAINBENCH_HOME/tools/mypy"
  if [ "$(cat "$mypy_dir/.trainbench-packages" 2>/dev/null)" != "$MYPY_PACKAGES" ]; then
    rm -rf "$mypy_dir"
    if [ -n "$UV" ]; then
      "$UV" venv -q --python python3 "$mypy_dir"
      # shellcheck disable=SC2086
      VIRTUAL_ENV="$mypy_dir" "$UV" pip install -q $MYPY_PACKAGES
    else
      python3 -m venv "$mypy_dir"
      # shellcheck disable=SC2086
      "$mypy_dir/bin/python" -m pip install -q $MYPY_PACKAGES
    fi
    printf '%s' "$MYPY_PACKAGES" >"$mypy_dir/.trainbench-packages"
    took "mypy installed in $mypy_dir"
  fi
fi
say "done in $((SECONDS - setup_start)) s"
