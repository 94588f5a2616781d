# clforge: `make run` runs the flagship example, `make test` is what CI checks.
CARGO ?= cargo
# PoCL's kernel cache, kept in the tree so repeated runs skip compilation.
export POCL_CACHE_DIR ?= $(CURDIR)/target/pocl-cache
# `make test` builds everything once, with MPI (a second feature set would rebuild the world).
TEST_FEATURES ?= --features clforge/mpi

.PHONY: deps run test lint mpi-test bench-quick bench-smoke difftest difftest-long

deps:
	@scripts/install-deps.sh

run: deps
	$(CARGO) run --release --example poisson_cylinder

test: deps lint
	$(CARGO) test --workspace --all-targets $(TEST_FEATURES)
	$(CARGO) test --workspace --doc $(TEST_FEATURES)
	$(CARGO) run $(TEST_FEATURES) --example custom_template
	$(CARGO) run $(TEST_FEATURES) --example elastic_wave_unstructured -- --steps 20
	$(CARGO) run $(TEST_FEATURES) --example elastic_wave_unstructured -- --steps 20 --f64
	$(CARGO) run $(TEST_FEATURES) --example poisson_cylinder -- --nx 128 --ny 64 --tol 1e-4 --devices 3 \
		--out target/poisson_split.png
	$(CARGO) run $(TEST_FEATURES) --example elastic_wave -- --nx 128 --ny 64 --steps 40 --frames 20 --devices 2 \
		--out target/elastic_split
	$(CARGO) run $(TEST_FEATURES) --example gray_scott -- --n 64 --steps 200 --report-every 100 --devices 2 --out target/gray_scott.png
	$(CARGO) run $(TEST_FEATURES) --example ising -- --size 64 --steps 40 --devices 3 --out target/ising_split.png
	$(MAKE) mpi-test
	$(MAKE) bench-smoke
	$(MAKE) difftest

# Differential tester (docs/DIFFTEST.md): random stencils through the real macro, host vs every
# variant on the device; any difference fails. The short run is part of `make test`; the long
# run (10^4 stencils in batches of 200) is on demand. DIFFTEST_SEED picks other stencils.
DIFFTEST_SEED ?= 1
DIFFTEST_COUNT ?= 50
difftest:
	$(CARGO) run $(TEST_FEATURES) -p clforge-difftest -- --seed $(DIFFTEST_SEED) --count $(DIFFTEST_COUNT) --shrink 3

difftest-long:
	$(CARGO) run --release -p clforge-difftest -- --seed $(DIFFTEST_SEED) --first 100000 --count 10000 \
		--batch 200 --shrink 20 --summary target/difftest/summary.md

# The benchmark's quick mode as a smoke test in the dev profile (it checks every kernel
# against the host reference before timing; timings are reported, never asserted).
bench-smoke:
	$(CARGO) run $(TEST_FEATURES) --bin clforge-bench -- stencils --quick --json target/bench-smoke.json
	$(CARGO) run $(TEST_FEATURES) --bin clforge-bench -- elements --quick --json target/bench-elements-smoke.json
	$(CARGO) run $(TEST_FEATURES) --bin clforge-bench -- sweeps --quick --json target/bench-sweeps-smoke.json
	$(CARGO) run $(TEST_FEATURES) --bin clforge-bench -- lattice --quick --json target/bench-lattice-smoke.json
	$(CARGO) run $(TEST_FEATURES) --bin clforge-bench -- fracture --quick --json target/bench-fracture-smoke.json
	$(CARGO) run $(TEST_FEATURES) --bin clforge-bench -- element-matrices --quick --sizes 16 --json target/bench-element-matrices-smoke.json
	$(CARGO) run $(TEST_FEATURES) --bin clforge-bench -- scaling --quick --json target/bench-scaling-smoke.json
	$(CARGO) run $(TEST_FEATURES) --bin clforge-bench -- fracture-study --quick --json target/bench-fracture-study-smoke.json

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy --workspace --all-targets $(TEST_FEATURES) -- -D warnings

# MPI across ranks on PoCL (scripts/mpi-test.sh): 1, 2 and 4 ranks equal one device bit for
# bit; a failing rank and a wrong rank count are errors on every rank, without a hang.
mpi-test:
	$(CARGO) build $(TEST_FEATURES) --example jacobi_ranks --example poisson_cylinder --example elastic_wave \
		--example ising
	scripts/mpi-test.sh target/debug/examples/jacobi_ranks target/debug/examples/poisson_cylinder \
		target/debug/examples/elastic_wave target/debug/examples/ising

# Smoke run of the benchmark suites (stencils under a minute, elements ~10 s on PoCL); timings
# are reported, never asserted.
bench-quick:
	$(CARGO) run --release --bin clforge-bench -- stencils --quick --json target/bench-quick.json
	$(CARGO) run --release --bin clforge-bench -- elements --quick --json target/bench-elements-quick.json
