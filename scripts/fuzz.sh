#!/bin/sh
# Builds the libFuzzer target (preset `fuzz`: clang, address + undefined sanitizers) and runs it
# for SECONDS (default 60) from the committed seed corpus. New inputs go to a scratch copy.
# usage: scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
set -eu
cd "$(dirname "$0")/.."
seconds="${1:-60}"
[ $# -gt 0 ] && shift
./scripts/install_deps.sh --fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j2
corpus=build/fuzz/corpus
rm -rf "$corpus" && mkdir -p "$corpus" && cp tests/fuzz/corpus/* "$corpus"/
cd build/fuzz  # crash artifacts land here
OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" ./tests/fuzz/fuzz_conv_backward -max_total_time="$seconds" -timeout=30 \
  -print_final_stats=1 "$@" corpus
