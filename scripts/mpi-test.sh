#!/usr/bin/env bash
# MPI tests (issue 13): the jacobi_ranks example on 1, 2 and 4 ranks (each rank checks the
# split run against one device bit for bit and a max-reduction), then misuse: a rank that
# fails makes every rank return an error naming it, and a job of the wrong size is refused on
# every rank; neither may hang. PoCL gets one thread per rank (2 cores).
set -euo pipefail
bin=${1:?usage: mpi-test.sh path/to/jacobi_ranks}
export POCL_MAX_PTHREAD_COUNT=1 RUST_BACKTRACE=0
run() { timeout 300 mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$@"; }

for n in 1 2 4; do
    out=$(run "$n" "$bin" --nx 64 --ny 48 --steps 30 --depth 3)
    echo "$out"
    [ "$(grep -c 'equal one device bit for bit' <<<"$out")" -eq "$n" ] || { echo "FAIL: $n ranks"; exit 1; }
done

# A failing rank: every rank reports an error naming rank 1, the job ends (timeout = hang).
set +e
out=$(run 4 "$bin" --nx 64 --ny 48 --steps 30 --depth 3 --fail-rank 1 --fail-at 7 2>&1)
rc=$?
set -e
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { echo "FAIL: a failing rank gave exit $rc"; echo "$out"; exit 1; }
for r in 0 2 3; do
    grep -q "rank $r error: MPI rank 1 of 4: stopped" <<<"$out" || { echo "FAIL: rank $r did not name rank 1"; echo "$out"; exit 1; }
done
grep -q "rank 1 error: rank 1: injected failure" <<<"$out" || { echo "FAIL: rank 1's own error"; echo "$out"; exit 1; }
echo "a failing rank: every rank returned an error naming rank 1"

# The wrong number of ranks: refused on every rank.
set +e
out=$(run 2 "$bin" --expect 4 2>&1)
rc=$?
set -e
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || { echo "FAIL: --expect 4 on 2 ranks gave exit $rc"; exit 1; }
[ "$(grep -c 'planned for 4 ranks but the job has 2' <<<"$out")" -eq 2 ] || { echo "FAIL: not refused on both ranks"; echo "$out"; exit 1; }
echo "a mismatched rank count: refused on every rank"
echo "mpi tests passed"
