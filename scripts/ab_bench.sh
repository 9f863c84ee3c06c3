#!/usr/bin/env bash
# Before/after timing of a change: our backward of each suite layer with two builds of the library,
# interleaved layer by layer and round by round (this VM's speed drifts by up to 2x within minutes),
# each the fastest of a few calls (tests/benchmark/ab_time.cpp); prints each layer's best time per
# build, their ratio, and the geomean of the ratios. No other engine runs in the process.
#
#   scripts/ab_bench.sh BEFORE_LIB_DIR AFTER_LIB_DIR [rounds=4] [calls=8] [filter] [dtype=float] [outputs=111]
# (outputs: ab_time's, an output mask such as 100 for gradInput alone, or `forward` for the forward pass)
#
# A LIB_DIR holds libaclnn_convbwd.so.0 (copy build/release/src/libaclnn_convbwd.so* there before and
# after the change). Uses the release build's ab_time and shapes.txt; OMP_NUM_THREADS and
# ACLNN_CONVBWD_ISA pass through (set OMP_NUM_THREADS=2 for the suite's 2-thread figures).
set -euo pipefail
before="$1" after="$2" rounds="${3:-4}" calls="${4:-8}" filter="${5:-}" dtype="${6:-float}" outputs="${7:-111}"
bench="$(cd "$(dirname "$0")/.." && pwd)/build/release/tests/benchmark"
for dir in "$before" "$after"; do
  [ -e "$dir/libaclnn_convbwd.so.0" ] || { echo "no libaclnn_convbwd.so.0 in $dir" >&2; exit 1; }
done
# (the suite's layer names, those containing one of the filter's comma-separated substrings)
layers=$(awk -v filter="$filter" '!/^#/ && NF {
  n = split(filter, parts, ","); keep = n == 0
  for (i = 1; i <= n; ++i) if (parts[i] != "" && index($1, parts[i]) > 0) keep = 1
  if (keep) print $1 }' "$bench/shapes.txt")
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for round in $(seq 1 "$rounds"); do
  for layer in $layers; do
    for side in before after; do
      dir=$([ "$side" = before ] && echo "$before" || echo "$after")
      LD_LIBRARY_PATH="$dir" "$bench/ab_time" "$bench/shapes.txt" "$calls" "$layer" "$dtype" "$outputs" |
        awk -v L="$layer" -v S="$side" '$1 == L {print S, L, $2}' >>"$results"
    done
  done
done
awk '
  { key = $2; if (!(key in order)) { order[key] = ++n; names[n] = key }
    if (!((key, $1) in best) || $3 < best[key, $1]) best[key, $1] = $3 }
  END {
    printf "| layer | before ms | after ms | after/before |\n|---|---:|---:|---:|\n"
    for (i = 1; i <= n; ++i) {
      k = names[i]; r = best[k, "after"] / best[k, "before"]; logs += log(r)
      printf "| %s | %.2f | %.2f | %.3f |\n", k, best[k, "before"], best[k, "after"], r
    }
    if (n > 0) printf "| geomean | | | %.3f |\n", exp(logs / n)
  }' "$results"
