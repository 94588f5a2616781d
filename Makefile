# clforge: `make run` runs the flagship example, `make test` is what CI checks.
CARGO ?= cargo
# PoCL's kernel cache, kept in the tree so repeated runs skip compilation.
export POCL_CACHE_DIR ?= $(CURDIR)/target/pocl-cache
# `make test` builds everything once, with MPI (a second feature set would rebuild the world).
TEST_FEATURES ?= --features clforge/mpi
# The tests run under cargo-nextest where it is installed (CI's machines have it): one process
# per test, both cores busy across all test binaries, half the wall time of `cargo test` on 2
# cores (434 s against 826 s cold; docs/ARCHITECTURE.md "Tests"). Without it, `cargo test`.
NEXTEST := $(shell $(CARGO) nextest --version >/dev/null 2>&1 && echo yes)
# Binaries run by `make test` after the tests: built once by `cargo build --workspace
# --all-targets` with the test build's features (a `cargo run --bin` selects one package,
# resolves its dependencies' features without the others' dev-dependencies and so recompiles the
# whole graph: 111 s in CI).
BIN := target/debug

.PHONY: deps run test lint lint-nompi lint-all built examples-smoke mpi-test bench-quick bench-codegen bench-smoke bench-smoke-a bench-smoke-b \
	difftest difftest-long

deps:
	@scripts/install-deps.sh

run: deps
	$(CARGO) run --release --example poisson_cylinder

test: deps lint
ifeq ($(NEXTEST),yes)
	$(CARGO) nextest run --workspace --lib --bins --tests $(TEST_FEATURES) --no-fail-fast
else
	$(CARGO) test --workspace --lib --bins --tests $(TEST_FEATURES)
endif
	$(CARGO) test --workspace --doc $(TEST_FEATURES)
	# The runs after the tests, two at a time (each is mostly single-threaded PoCL builds),
	# longest first.
	$(MAKE) -j2 --output-sync=target difftest bench-smoke-a mpi-test bench-smoke-b examples-smoke

# Every binary with the test build's features (nothing recompiles when the tests built them).
built:
	$(CARGO) build --workspace --all-targets $(TEST_FEATURES)

# The examples as `make test` runs them (small sizes; split over local devices where they can).
examples-smoke: built
	$(BIN)/examples/custom_template
	$(BIN)/examples/elastic_wave_unstructured --steps 20
	$(BIN)/examples/elastic_wave_unstructured --steps 20 --f64
	$(BIN)/examples/heat_forms --steps 50 --out target/heat_forms.png
	$(BIN)/examples/acoustics_forms --out target/acoustics_forms.png
	$(BIN)/examples/supg_forms --out target/supg_forms.png
	$(BIN)/examples/poisson_cylinder --nx 128 --ny 64 --tol 1e-4 --devices 3 --out target/poisson_split.png
	$(BIN)/examples/elastic_wave --nx 128 --ny 64 --steps 40 --frames 20 --devices 2 --out target/elastic_split
	$(BIN)/examples/gray_scott --n 64 --steps 200 --report-every 100 --devices 2 --out target/gray_scott.png
	$(BIN)/examples/ising --size 64 --steps 40 --devices 3 --out target/ising_split.png
	$(BIN)/examples/pollution_transport --size 96x48 --steps 40 --quiet --devices 3 --out target/pollution_split

# Differential tester (docs/DIFFTEST.md): random stencils through the real macro, host vs every
# variant on the device; any difference fails. The short run is part of `make test`; the long
# run (10^4 stencils in batches of 200) is on demand. DIFFTEST_SEED picks other stencils.
DIFFTEST_SEED ?= 1
DIFFTEST_COUNT ?= 30
difftest: built
	$(BIN)/clforge-difftest --seed $(DIFFTEST_SEED) --count $(DIFFTEST_COUNT) --shrink 3

difftest-long:
	$(CARGO) run --release -p clforge-difftest -- --seed $(DIFFTEST_SEED) --first 100000 --count 10000 \
		--batch 200 --shrink 20 --summary target/difftest/summary.md

# The benchmark's quick mode as a smoke test in the dev profile (it checks every kernel
# against the host reference before timing; timings are reported, never asserted).
# What a stencil adds to a user's build (docs/PERFORMANCE.md, "Build time of a stencil").
bench-codegen:
	scripts/codegen-bench.sh 50 5

bench-smoke: bench-smoke-a bench-smoke-b

# The two halves of the smoke run (about equal on PoCL), which `make test` runs side by side.
bench-smoke-a: built
	$(BIN)/clforge-bench stencils --quick --json target/bench-smoke.json
	$(BIN)/clforge-bench sweeps --quick --json target/bench-sweeps-smoke.json

bench-smoke-b: built
	$(BIN)/clforge-bench elements --quick --json target/bench-elements-smoke.json
	$(BIN)/clforge-bench lattice --quick --json target/bench-lattice-smoke.json
	$(BIN)/clforge-bench fracture --quick --json target/bench-fracture-smoke.json
	$(BIN)/clforge-bench element-matrices --quick --sizes 16 --json target/bench-element-matrices-smoke.json
	$(BIN)/clforge-bench scaling --quick --json target/bench-scaling-smoke.json
	$(BIN)/clforge-bench fracture-study --quick --json target/bench-fracture-study-smoke.json

# Clippy with MPI on everything (`make test`). Without MPI (the default build) on the library whose
# code has `cfg(feature = "mpi")` branches, the runtime: `make lint-all` (it re-checks the
# dependencies whose features differ: over a minute of CI's 20, which `make test` no longer has).
# The MPI code is additive (`cfg(feature = "mpi")` items only, no `cfg(not(..))`), so the
# default build differs from the checked one only by items left out.
lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets $(TEST_FEATURES) -- -D warnings

lint-nompi:
	$(CARGO) clippy -p clforge-runtime --lib -- -D warnings

lint-all: lint lint-nompi

# MPI across ranks on PoCL (scripts/mpi-test.sh): 1, 2 and 4 ranks equal one device bit for
# bit; a failing rank and a wrong rank count are errors on every rank, without a hang.
mpi-test: built
	scripts/mpi-test.sh $(BIN)/examples/jacobi_ranks $(BIN)/examples/poisson_cylinder \
		$(BIN)/examples/elastic_wave $(BIN)/examples/ising $(BIN)/examples/pollution_transport

# Smoke run of the benchmark suites (stencils under a minute, elements ~10 s on PoCL); timings
# are reported, never asserted.
bench-quick:
	$(CARGO) run --release --bin clforge-bench -- stencils --quick --json target/bench-quick.json
	$(CARGO) run --release --bin clforge-bench -- elements --quick --json target/bench-elements-quick.json
