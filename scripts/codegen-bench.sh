#!/usr/bin/env bash
# What a stencil costs the user's build: a crate of N stencils against the same crate with N
# plain functions of the same bodies, both built (incrementally, dev profile) after touching
# their source, medians of REPS builds each. Prints the difference per stencil.
#
#   scripts/codegen-bench.sh [N=50] [REPS=5] [OPT]
#
# OPT (e.g. 3) builds the macros and their dependencies optimised, as a user's `[profile.dev.build-override]
# opt-level = 3` does; left out, they run as Cargo builds proc macros by default (opt-level 0).
#
# The crates live under target/codegen-bench/ and share one target directory, so the
# dependencies (clforge and its macros) are built once, before the timed builds.
set -euo pipefail
N=${1:-50}
REPS=${2:-5}
OPT=${3:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR="$ROOT/target/codegen-bench"
export CARGO_TARGET_DIR="$DIR/target"
mkdir -p "$DIR"

make_crate() { # name, body generator
    local name=$1 kind=$2 src="$DIR/$1"
    mkdir -p "$src/src"
    cat > "$src/Cargo.toml" <<TOML
[package]
name = "$name"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
clforge = { path = "$ROOT" }

[workspace]
TOML
    if [ -n "$OPT" ]; then
        printf '\n[profile.dev.build-override]\nopt-level = %s\n' "$OPT" >> "$src/Cargo.toml"
    fi
    {
        echo "#![allow(dead_code, clippy::all)]"
        echo "use clforge::prelude::*;"
        for i in $(seq 1 "$N"); do
            if [ "$kind" = stencil ]; then
                echo "#[clforge::stencil]"
                echo "pub fn s$i(u: &Grid<f32>, k: f32) -> f32 {"
                echo "    k * (u.at(1, 0) + u.at(-1, 0) + u.at(0, 1) + u.at(0, -1)) - ${i}.0 * u.at(0, 0)"
                echo "}"
            else
                echo "pub fn s$i(u: &[f32], x: usize, n: usize, k: f32) -> f32 {"
                echo "    k * (u[x + 1] + u[x - 1] + u[x + n] + u[x - n]) - ${i}.0 * u[x]"
                echo "}"
            fi
        done
    } > "$src/src/lib.rs"
}

median_build() { # crate dir -> median seconds of REPS builds after a touch
    local src=$1 times=()
    (cd "$src" && cargo build -q 2>/dev/null)
    for _ in $(seq 1 "$REPS"); do
        touch "$src/src/lib.rs"
        local t0 t1
        t0=$(date +%s.%N)
        (cd "$src" && cargo build -q)
        t1=$(date +%s.%N)
        times+=("$(echo "$t1 - $t0" | bc -l)")
    done
    printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

make_crate codegen_stencils stencil
make_crate codegen_plain plain
stencils=$(median_build "$DIR/codegen_stencils")
plain=$(median_build "$DIR/codegen_plain")
per=$(echo "($stencils - $plain) * 1000 / $N" | bc -l)
printf 'codegen: %d stencils %.3f s, %d plain functions %.3f s (medians of %d builds, macros at opt-level %s): %.1f ms per stencil\n' \
    "$N" "$stencils" "$N" "$plain" "$REPS" "${OPT:-0}" "$per"
