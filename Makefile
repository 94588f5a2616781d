# clforge: `make run` runs the flagship example, `make test` is what CI checks.
CARGO ?= cargo
# PoCL's kernel cache, kept in the tree so repeated runs skip compilation.
export POCL_CACHE_DIR ?= $(CURDIR)/target/pocl-cache

.PHONY: deps run test lint bench-quick

deps:
	@scripts/install-deps.sh

run: deps
	$(CARGO) run --release --example poisson_cylinder

test: deps lint
	$(CARGO) test --workspace --all-targets
	$(CARGO) test --workspace --doc

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# Smoke run of the benchmark (under a minute on PoCL); timings are reported, never asserted.
bench-quick:
	$(CARGO) run --release --bin clforge-bench -- stencils --quick --json target/bench-quick.json
