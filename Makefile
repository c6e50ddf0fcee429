# The README's two commands: `make run` and `make test`. Both set up what is
# missing first (scripts/setup.sh) and skip what is already there.
SHELL := /bin/bash
.PHONY: run test setup setup-all build build-cli tch-2.11 bench deb cli-demo kit gpu-check gpu-session screenshots

## What `make run` needs (PyTorch's environment; TensorFlow and JAX on demand).
setup:
	@bash scripts/setup.sh

## Every framework environment now (what `make test` installs).
setup-all:
	@bash scripts/setup.sh --all

## One cargo invocation for the worker, the CLI and the studio, so that the
## crates they share are built once with one feature set. Extra cargo flags:
## `make build CARGO_FLAGS=--timings` (docs/build-times.md).
build: setup ui/dist/index.html
	@source scripts/env.sh && time cargo build --release --locked $(CARGO_FLAGS) -p trainbench-engine-tch -p trainbench-cli -p trainbench-studio

## The UI, rebuilt only when its sources changed: a rewritten ui/dist would
## make cargo re-embed it and rebuild the studio crate.
UI_SOURCES := $(shell find ui/src ui/public -type f 2>/dev/null) ui/index.html ui/package.json ui/package-lock.json $(wildcard ui/vite.config.*)
ui/dist/index.html: $(UI_SOURCES)
	@npm --prefix ui run build --silent

## The CLI and the libtorch worker only (what the kit and gpu-check need).
build-cli: setup
	@source scripts/env.sh && cargo build --release --locked $(CARGO_FLAGS) -p trainbench-engine-tch -p trainbench-cli

## The libtorch worker built for PyTorch 2.11, the GPU machines' release
## (docs/kit.md): target/tch-2.11/release/trainbench-worker-tch.
tch-2.11:
	@bash scripts/setup.sh --torch-2.11 && bash scripts/build-tch-2.11.sh --release

## The bench kit (docs/kit.md): target/kit, to copy to a machine without the
## studio, with a libtorch worker for PyTorch 2.13 and one for 2.11.
kit: build-cli tch-2.11
	@rm -rf target/kit && source scripts/env.sh && ./target/release/trainbench kit build -o target/kit --measured docs/gpu-results

## The GPU acceptance suite on this machine's GPUs (docs/kit.md); exits 3 without a GPU.
gpu-check: build-cli
	@source scripts/env.sh && ./target/release/trainbench gpu-check --out target/gpu-check/$$(date -u +%Y%m%d-%H%M%S)

## The most valuable GPU figures within a time budget, with timm and Hugging Face
## peers on the same GPU (docs/kit.md): `make gpu-session BUDGET=540`; exits 3 without a GPU.
BUDGET ?= 540
gpu-session: build-cli
	@source scripts/env.sh && ./target/release/trainbench gpu-session --budget $(BUDGET) --measured docs/gpu-results --out target/gpu-session/$$(date -u +%Y%m%d-%H%M%S)

## Open the desktop studio (without a display: the headless quick benchmark).
run: build
	@if [ -n "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ]; then \
		source scripts/env.sh && ./target/release/trainbench-studio; \
	else \
		echo "make run: no display (DISPLAY/WAYLAND_DISPLAY unset): running the headless quick benchmark instead"; \
		source scripts/env.sh && ./target/release/trainbench run; \
	fi

## Benchmark a small model on this machine's device (the GPU if there is one)
## with the CLI, store the run and print its summary.
cli-demo: build
	@source scripts/env.sh && ./target/release/trainbench run

## A Debian package of the studio (Tauri's bundler, offline): target/release/bundle/deb/.
deb: build
	@source scripts/env.sh && cd src-tauri && TAURI_FRONTEND_PATH=../ui ../ui/node_modules/.bin/tauri build --bundles deb

## Set up, then run every check and test (what CI runs).
test:
	@bash scripts/test.sh

## Refresh the README's pictures (docs/screenshots/) from the real window
## under Xvfb (the end-to-end test's run; `make test` leaves them alone).
screenshots:
	@bash scripts/setup.sh --test && source scripts/env.sh && (cd ui && npm run --silent build) \
		&& (command -v tauri-driver >/dev/null || cargo install tauri-driver --version 2.1.0 --locked) \
		&& cargo build --workspace --all-targets --locked \
		&& E2E_REFRESH_SCREENSHOTS=1 bash ui/e2e/run.sh

## Benchmarks (see bench/README.md).
bench: build
	@source scripts/env.sh && python bench/frameworks.py --repeats 3 && python bench/tch_vs_python.py \
		&& python bench/harness_overhead.py && python bench/harness_overhead.py --framework pytorch
