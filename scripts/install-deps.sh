#!/usr/bin/env bash
# Installs what clforge needs and the machine lacks: an OpenCL runtime (PoCL on the CPU when
# no OpenCL platform is present), the OpenCL loader's development files that `ocl` links, and
# Open MPI (with libclang for its bindings) for the `mpi` feature.
set -euo pipefail

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

need=()
# `ocl` links libOpenCL.so: the loader and its -dev symlink.
have_pkg ocl-icd-libopencl1 || need+=(ocl-icd-libopencl1)
have_pkg ocl-icd-opencl-dev || need+=(ocl-icd-opencl-dev)
have_pkg clinfo || need+=(clinfo)
# MPI across hosts (feature `mpi`, the `mpi` crate): Open MPI's launcher and headers, and
# libclang for the bindings' generator (bindgen).
have_pkg openmpi-bin || need+=(openmpi-bin)
have_pkg libopenmpi-dev || need+=(libopenmpi-dev)
have_pkg libclang-dev || need+=(libclang-dev)
# An OpenCL platform: keep the one present (e.g. a GPU driver), else PoCL on the CPU.
platforms=0
if command -v clinfo >/dev/null 2>&1; then
    platforms=$(clinfo -l 2>/dev/null | grep -c '^Platform' || true)
fi
if [ "$platforms" -eq 0 ] && ! have_pkg pocl-opencl-icd; then
    need+=(pocl-opencl-icd)
fi

if [ ${#need[@]} -gt 0 ]; then
    echo "installing: ${need[*]}"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
clinfo -l
