#!/usr/bin/env bash
# Installs what TrainBench needs on a Debian 12 machine and skips what is there:
# Debian packages, a Rust toolchain, and the studio's PyTorch environment
# (torch 2.13.0 from PyPI, whose libtorch the tch worker links).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# 1. Debian packages.
missing=()
command -v cc >/dev/null 2>&1 || missing+=(build-essential)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v curl >/dev/null 2>&1 || missing+=(curl ca-certificates)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then missing+=(python3-venv); fi
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  say "Debian packages present"
fi

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
if command -v rustup >/dev/null 2>&1; then
  for c in clippy rustfmt; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
  done
fi
say "$(cargo --version)"

# 3. The PyTorch environment, rebuilt only when envs/torch.txt changes.
want="$(sha256sum envs/torch.txt | cut -d' ' -f1)"
marker="$TORCH_ENV/.trainbench-ready"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ] && [ -x "$TORCH_ENV/bin/python" ]; then
  say "PyTorch environment ready at $TORCH_ENV"
else
  say "creating the PyTorch environment at $TORCH_ENV (torch $TORCH_VERSION from PyPI, several GB the first time)"
  mkdir -p "$(dirname "$TORCH_ENV")"
  python3 -m venv "$TORCH_ENV"
  "$TORCH_ENV/bin/python" -m pip install -q --upgrade pip
  "$TORCH_ENV/bin/python" -m pip install --progress-bar off -r envs/torch.txt
  "$TORCH_ENV/bin/python" -c "import torch, mlxtend; assert torch.__version__.split('+')[0] == '$TORCH_VERSION', torch.__version__"
  echo "$want" > "$marker"
  say "PyTorch environment ready"
fi
