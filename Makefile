# The README's two commands: `make run` and `make test`. Both set up what is
# missing first (scripts/setup.sh) and skip what is already there.
SHELL := /bin/bash
.PHONY: run test setup build bench

setup:
	@bash scripts/setup.sh

build: setup
	@source scripts/env.sh && cargo build --release --locked -p trainbench-engine-tch -p trainbench-cli

## Benchmark a small model on this machine's device (the GPU if there is one),
## store the run and print its summary.
run: build
	@source scripts/env.sh && ./target/release/trainbench run

## Set up, then run every check and test (what CI runs).
test:
	@bash scripts/test.sh

## Benchmarks (see bench/README.md).
bench: build
	@source scripts/env.sh && python bench/frameworks.py --repeats 3 && python bench/tch_vs_python.py \
		&& python bench/harness_overhead.py && python bench/harness_overhead.py --framework pytorch
