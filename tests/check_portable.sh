#!/bin/sh
# The default x86-64 build runs on any x86-64 CPU: AVX (ymm) and AVX-512 (zmm) instructions occur
# only in the translation units for those instruction sets (functions named *avx*: micro-kernels
# and their packers), which run only after cpuid says the CPU has them; AMX's (tmm, the tile
# configuration) only in functions named *amx*, which run only where kernels/amx/amx.cpp found tiles.
set -eu
lib="$1"
objdump -d --no-show-raw-insn "$lib" | awk '
  /^[0-9a-f]+ <.*>:$/ { name = $2; next }
  /%[yz]mm/ && name !~ /avx/ { bad[name] = 1 }
  /%tmm|tilecfg|tilerelease/ && name !~ /amx/ { bad[name] = 1 }
  /%[yz]mm/ && name ~ /avx/ { good[name] = 1 }
  END {
    status = 0
    for (n in bad) { print "AVX instructions outside a dispatched micro-kernel: " n; status = 1 }
    count = 0
    for (n in good) count++
    print "functions with AVX instructions, all dispatched by cpuid: " count
    if (count == 0) { print "no AVX micro-kernel found"; status = 1 }
    exit status
  }'
