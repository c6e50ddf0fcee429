# Sourced by the Makefile and scripts (and by developers: `source scripts/env.sh`):
# where the studio keeps its framework environments, and how cargo finds libtorch.
TRAINBENCH_HOME="${TRAINBENCH_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/trainbench}"
TORCH_VERSION=2.13.0
TORCH_ENV="$TRAINBENCH_HOME/envs/torch-$TORCH_VERSION"
# The second libtorch worker's (crates/engine-tch-2.11): the GPU machines' PyTorch.
TORCH_211_VERSION=2.11.0
TORCH_211_ENV="$TRAINBENCH_HOME/envs/torch-$TORCH_211_VERSION"
export TRAINBENCH_HOME
# torch-sys finds libtorch through the Python environment that holds torch.
export LIBTORCH_USE_PYTORCH=1
export VIRTUAL_ENV="$TORCH_ENV"
case ":$PATH:" in *":$TORCH_ENV/bin:"*) ;; *) export PATH="$TORCH_ENV/bin:$PATH" ;; esac
# Link with mold where it is installed (setup.sh installs it): several times
# faster than GNU ld for the studio's large binaries (docs/build-times.md).
if command -v mold >/dev/null 2>&1; then
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C link-arg=-fuse-ld=mold"
fi
