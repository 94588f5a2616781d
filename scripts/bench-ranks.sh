#!/usr/bin/env bash
# Scaling across MPI ranks on this machine's CPU (issue 13, item 4): the 2-D Jacobi of
# examples/jacobi_ranks on 1 and 2 ranks, each rank a PoCL device with one thread, weak (ROWS
# rows per rank) and strong (one grid of 2 x ROWS rows), with exchanges overlapped and
# exchange-first; depth 8. Each run is also checked against one device bit for bit by the
# example. Prints the median of REPS runs of the wall time per step (the slowest rank's, the
# final gather included) and the efficiency against one rank. Timings are reported, never
# asserted. Usage: scripts/bench-ranks.sh [path/to/jacobi_ranks] (build it with
# `cargo build --release --features mpi --example jacobi_ranks`).
set -euo pipefail
bin=${1:-target/release/examples/jacobi_ranks}
nx=${NX:-1024}
rows=${ROWS:-1024}
steps=${STEPS:-600}
reps=${REPS:-5}
export POCL_MAX_PTHREAD_COUNT=1 RUST_BACKTRACE=0
# median wall time per step (us) of `reps` runs: ranks, rows, extra flag
median() {
    local n=$1 ny=$2 flag=${3:-} t=()
    for _ in $(seq "$reps"); do
        # shellcheck disable=SC2086 # $flag is empty or one flag
        t+=("$(timeout 600 mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$n" "$bin" --nx "$nx" \
            --ny "$ny" --steps "$steps" --depth 8 --time $flag | sed -n 's/^timing: .*: \([0-9.]*\) us per step.*/\1/p')")
    done
    printf '%s\n' "${t[@]}" | sort -g | sed -n "$(((reps + 1) / 2))p"
}
echo "jacobi_ranks on $(nproc) cores, PoCL one thread per rank, ${nx} columns, depth 8, $steps steps, median of $reps"
weak1=$(median 1 "$rows")
strong1=$(median 1 $((2 * rows)))
printf '%-7s %-6s %-11s %12s %8s\n' scaling ranks exchange "us/step" "eff"
printf '%-7s %-6s %-11s %12s %8s\n' weak 1 - "$weak1" 100%
printf '%-7s %-6s %-11s %12s %8s\n' strong 1 - "$strong1" 100%
for mode in overlapped first; do
    flag=$([ "$mode" = first ] && echo --exchange-first || true)
    w=$(median 2 $((2 * rows)) "$flag")
    s=$(median 2 $((2 * rows)) "$flag")
    printf '%-7s %-6s %-11s %12s %7.1f%%\n' weak 2 "$mode" "$w" "$(awk "BEGIN{print 100 * $weak1 / $w}")"
    printf '%-7s %-6s %-11s %12s %7.1f%%\n' strong 2 "$mode" "$s" "$(awk "BEGIN{print 100 * $strong1 / $s / 2}")"
done
