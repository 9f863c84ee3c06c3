#!/bin/sh
# The AMX hardware check (kernels/amx/amx.h), one command on a CPU with AMX-BF16 tiles, from a release
# build (cmake --preset release && cmake --build --preset release):
#   1. test_amx: the CPU's tiles give the emulation's bits on random operands of every kind (and its
#      VDPBF16PS and FMAs the order's);
#   2. the suite's layers (scaled down, backward and forward) in BF16 give the same hashes with the
#      CPU's tiles (ACLNN_CONVBWD_AMX=1) as with their emulation (ACLNN_CONVBWD_AMX=emulate), and the
#      tiles were taken (the verbose lines say ":amx");
#   3. the same order on this CPU's VDPBF16PS and FMAs gives the committed "tiles" hashes.
# Exits non-zero where any of that fails or the CPU has no tiles. usage: scripts/amx_check.sh [build dir]
set -eu
cd "$(dirname "$0")/.."
build="${1:-build/release}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$build/tests/test_amx" --gtest_brief=1 >"$out/tiles.txt" 2>&1 || { cat "$out/tiles.txt"; exit 1; }
if grep -q "SKIPPED" "$out/tiles.txt"; then
  cat "$out/tiles.txt"
  echo "amx_check: this CPU or its operating system gives no AMX-BF16 tiles"
  exit 1
fi
run() {
  if ! SUITE_HASHES_PRINT=1 ACLNN_CONVBWD_VERBOSE=1 "$@" "$build/tests/test_suite_hashes" >"$out/run.txt" 2>&1; then
    tail -40 "$out/run.txt" >&2
    echo "amx_check: test_suite_hashes failed ($*)" >&2
    exit 1
  fi
  grep ' bf16 ' "$out/run.txt" | grep -v '^aclnn' || true
}
run env ACLNN_CONVBWD_AMX=1 ACLNN_CONVBWD_ISA=avx512 >"$out/hardware.txt"
taken=$(grep -cE ':amx([^_a-z]|$)' "$out/run.txt" || true)
run env ACLNN_CONVBWD_ISA=avx512 ACLNN_CONVBWD_AMX=emulate >"$out/emulated.txt"
if [ "$taken" -eq 0 ] || [ ! -s "$out/hardware.txt" ]; then
  echo "amx_check: no execution took the CPU's tiles"
  exit 1
fi
if ! diff "$out/emulated.txt" "$out/hardware.txt"; then
  echo "amx_check: the CPU's tiles and their emulation disagree (above: < emulated, > hardware)"
  exit 1
fi
# 3. the other implementations of the order on this host's CPU (its VDPBF16PS, its FMAs): the committed "tiles" hashes
if ! "$build/tests/test_suite_hashes" --gtest_filter='*Tiles*' --gtest_brief=1 >"$out/others.txt" 2>&1; then
  cat "$out/others.txt"
  echo "amx_check: VDPBF16PS or the FMAs in the tiles' order disagree with the committed hashes on this CPU"
  exit 1
fi
echo "amx_check: passed ($(wc -l <"$out/hardware.txt") BF16 layers, $taken executions on the CPU's tiles, the same hashes as the emulation; VDPBF16PS and the FMAs give the committed tiles hashes)"
