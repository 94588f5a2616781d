#!/bin/sh
# Registers and spills of every dumped ke_mma build (CLFORGE_DUMP_BINARIES=DIR on the GPU
# machine): one line per program, its shape's defines, then ptxas' verdict for ke_mma.
# Usage: scripts/probes/ptxas_mma.sh DIR
for o in "$1"/*.options; do
  grep -q MSPW "$o" || continue
  b=${o%.options}.bin
  tr -d '\000' < "$b" > /tmp/ptxas_mma.ptx
  shape=$(tr ' ' '\n' < "$o" | grep -E '^(MSPW|MRW|MW|MQC|MTC|NQ)=' | tr '\n' ' ')
  regs=$(/usr/local/cuda/bin/ptxas -arch=sm_90 -v /tmp/ptxas_mma.ptx -o /dev/null 2>&1 \
    | grep -A2 "_ke_mma" | grep -E "registers|spill" | tr -s ' ' | tr '\n' ' ')
  echo "$shape: $regs"
done
