#!/bin/sh
# Where ke_mma's time goes on the GPU machine: the same kernels with parts switched off
# (CLFORGE_FORMING_PROBE; the bench then skips its check: the matrices are wrong).
# Usage: scripts/probes/forming_probes.sh BENCH OUTDIR
B=$1; O=$2
mkdir -p /etc/OpenCL/vendors && [ -e /etc/OpenCL/vendors/nvidia.icd ] || echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
run() {
  name=$1; shift
  CLFORGE_FORMING_PROBE="$*" CLFORGE_DEVICE=gpu $B element-matrices --device-only --min-order 5 --max-order 6 \
    --kernels mma-3x8x16,mma-3x8x12 --reps 20 > $O/probe-$name.txt 2>&1
  echo "== $name: $*"; grep "^  mma" $O/probe-$name.txt | awk '{print $1, $2}'
}
run base ""
run noproducts -D CLFORGE_PROBE_NO_PRODUCTS=1
run nostaging -D CLFORGE_PROBE_NO_STAGING=1
run neither -D CLFORGE_PROBE_NO_PRODUCTS=1 -D CLFORGE_PROBE_NO_STAGING=1
