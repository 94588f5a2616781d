#!/usr/bin/env bash
# MPI tests (issue 13): the jacobi_ranks example on 1, 2 and 4 ranks (each rank checks the
# split run against one device bit for bit and a max-reduction), then misuse: a rank that
# fails makes every rank return an error naming it, and a job of the wrong size is refused on
# every rank; neither may hang. PoCL gets one thread per rank (2 cores).
set -euo pipefail
bin=${1:?usage: mpi-test.sh path/to/jacobi_ranks [path/to/poisson_cylinder [path/to/elastic_wave [path/to/ising [path/to/pollution_transport]]]]}
poisson=${2:-}
elastic=${3:-}
ising=${4:-}
pollution=${5:-}
export POCL_MAX_PTHREAD_COUNT=1 RUST_BACKTRACE=0
# Open MPI ends a job when one process exits non-zero; the failure tests let every rank finish
# so that each rank's own outcome can be read.
run() { timeout 300 mpirun --allow-run-as-root --oversubscribe --bind-to none --mca orte_abort_on_non_zero_status 0 -np "$@"; }

# Exchanges overlap interior work by default; --exchange-first exchanges before launching.
for job in 1 2 4 "2 --exchange-first"; do
    read -r n flags <<<"$job"
    # shellcheck disable=SC2086 # $flags is empty or one flag
    out=$(run "$n" "$bin" --nx 64 --ny 48 --steps 30 --depth 3 $flags)
    echo "$out"
    [ "$(grep -c 'sweeps equal one device bit for bit' <<<"$out")" -eq "$n" ] || { echo "FAIL: $job ranks"; exit 1; }
done

# `fails R AT`: 4 ranks, rank R stops with an error at step AT; the job must end (timeout =
# hang), every other rank must report an error naming rank R, and R its own.
fails() {
    local bad=$1 at=$2 reports rc out
    reports=$(mktemp -d)
    set +e
    out=$(run 4 "$bin" --nx 64 --ny 48 --steps 30 --depth 3 --fail-rank "$bad" --fail-at "$at" --report-dir "$reports" 2>&1)
    rc=$?
    set -e
    [ "$rc" -ne 124 ] || { echo "FAIL: rank $bad failing at step $at hung the job"; echo "$out"; exit 1; }
    for r in 0 1 2 3; do
        [ "$r" -ne "$bad" ] || continue
        grep -q "rank $r error: MPI rank $bad of 4" "$reports/rank-$r.txt" \
            || { echo "FAIL: rank $r did not name rank $bad"; cat "$reports"/*; exit 1; }
    done
    grep -q "rank $bad error: rank $bad: injected failure" "$reports/rank-$bad.txt" \
        || { echo "FAIL: rank $bad's own error"; exit 1; }
    rm -rf "$reports"
}
fails 1 7
echo "a failing rank: every rank returned an error naming rank 1"
# Between two sweeps (step 31 of 30 Jacobi steps): the ranks sweep in turn, waiting on each other.
fails 2 31
echo "a rank failing between sweeps: every rank returned an error naming rank 2"

# The wrong number of ranks: refused on every rank.
reports=$(mktemp -d)
set +e
out=$(run 2 "$bin" --expect 4 --report-dir "$reports" 2>&1)
rc=$?
set -e
[ "$rc" -ne 124 ] || { echo "FAIL: --expect 4 on 2 ranks hung"; exit 1; }
for r in 0 1; do
    grep -q "planned for 4 ranks but the job has 2" "$reports/rank-$r.txt" \
        || { echo "FAIL: rank $r did not refuse"; echo "$out"; exit 1; }
done
rm -rf "$reports"
echo "a mismatched rank count: refused on every rank"

# The flagship example unchanged under mpirun: the same picture as on one device.
if [ -n "$poisson" ]; then
    out_dir=$(mktemp -d)
    "$poisson" --nx 128 --ny 64 --tol 1e-4 --out "$out_dir/one.png" >/dev/null
    run 2 "$poisson" --ranks --nx 128 --ny 64 --tol 1e-4 --out "$out_dir/ranks.png" >/dev/null
    cmp "$out_dir/one.png" "$out_dir/ranks.png" || { echo "FAIL: poisson_cylinder on 2 ranks differs"; exit 1; }
    rm -rf "$out_dir"
    echo "poisson_cylinder on 2 ranks: the same picture as on one device"
fi
# The explicit FEM step across ranks: the same frames as the same cut over two local devices.
if [ -n "$elastic" ]; then
    out_dir=$(mktemp -d)
    "$elastic" --nx 128 --ny 64 --steps 40 --frames 20 --devices 2 --out "$out_dir/devices" >/dev/null
    run 2 "$elastic" --nx 128 --ny 64 --steps 40 --frames 20 --ranks --out "$out_dir/ranks" >/dev/null
    for f in elastic_wave_0020.png elastic_wave_0040.png; do
        cmp "$out_dir/devices/$f" "$out_dir/ranks/$f" || { echo "FAIL: elastic_wave on 2 ranks differs ($f)"; exit 1; }
    done
    rm -rf "$out_dir"
    echo "elastic_wave on 2 ranks: the same frames as on 2 local devices"
fi
# A lattice rule across ranks: the same spins as on one device.
if [ -n "$ising" ]; then
    out_dir=$(mktemp -d)
    "$ising" --size 64 --steps 40 --out "$out_dir/one.png" >/dev/null
    run 2 "$ising" --size 64 --steps 40 --ranks --out "$out_dir/ranks.png" >/dev/null
    cmp "$out_dir/one.png" "$out_dir/ranks.png" || { echo "FAIL: ising on 2 ranks differs"; exit 1; }
    rm -rf "$out_dir"
    echo "ising on 2 ranks: the same spins as on one device"
fi
# The sweep example across ranks: split sweeps checked against the host's sequential sweeps
# (its self-checks) and the same picture as on one device.
if [ -n "$pollution" ]; then
    out_dir=$(mktemp -d)
    "$pollution" --size 96x48 --steps 40 --quiet --out "$out_dir/one" >/dev/null
    out=$(run 2 "$pollution" --size 96x48 --steps 40 --quiet --ranks --out "$out_dir/ranks")
    [ "$(grep -c 'is bitwise equal to apply_host' <<<"$out")" -eq 2 ] \
        || { echo "FAIL: pollution_transport's self-checks on 2 ranks"; echo "$out"; exit 1; }
    cmp "$out_dir/one/concentration.png" "$out_dir/ranks/concentration.png" \
        || { echo "FAIL: pollution_transport on 2 ranks differs"; exit 1; }
    rm -rf "$out_dir"
    echo "pollution_transport on 2 ranks: the same picture as on one device"
fi
echo "mpi tests passed"
