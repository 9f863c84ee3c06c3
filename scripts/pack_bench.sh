#!/bin/bash
# The oneDNN benchmark (tests/benchmark/conv_bench) and every library it links but the C library's own,
# packed into one folder that runs on another x86-64 Linux machine with nothing installed there (a
# many-core host lent for a while, for the thread-scaling bar), and a run over thread counts there.
#
#   scripts/pack_bench.sh pack [folder = bench_pack]
#       here, after `cmake --build --preset release`: the release build (portable: kernels chosen at
#       run time), libdnnl.so.2 and the rest, and the suite's shapes.txt; about 43 MB.
#   scripts/pack_bench.sh run OUT [folder = bench_pack] [threads = "16"] [rounds = 3]
#       there: the CPU's description (lscpu) and one whole-suite run per thread count, the library
#       beside the binary taking precedence over any installed one; OUT/conv_bench_t<N>.txt and
#       OUT/cpu.txt, also tarred as OUT/scaling.tar.gz.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-}

case "$mode" in
  pack)
    folder=${2:-bench_pack}
    bench="$root/build/release/tests/benchmark/conv_bench"
    [ -x "$bench" ] || { echo "pack_bench.sh: $bench not built (needs libdnnl-dev and the release build)" >&2; exit 1; }
    rm -rf "$folder" && mkdir -p "$folder"
    cp "$bench" "$root/tests/benchmark/shapes.txt" "$folder/"
    # Every library the loader resolves for it, but glibc's own (the machine's are used there).
    ldd "$bench" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
      case "$(basename "$lib")" in
        libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) ;;
        *) cp -L "$lib" "$folder/" ;;
      esac
    done
    echo "packed into $folder: $(ls "$folder" | tr '\n' ' ')"
    ;;
  run)
    out=${2:?"usage: pack_bench.sh run OUT [folder] [threads] [rounds]"}
    folder=${3:-bench_pack}
    threads=${4:-16}
    rounds=${5:-3}
    mkdir -p "$out"
    lscpu >"$out/cpu.txt" 2>&1 || true
    names=(cpu.txt)
    for t in $threads; do
      OMP_NUM_THREADS=$t LD_LIBRARY_PATH="$folder" "$folder/conv_bench" "$folder/shapes.txt" 3 "" "$rounds" \
        >"$out/conv_bench_t$t.txt" 2>/dev/null
      names+=("conv_bench_t$t.txt")
    done
    tar -czf "$out/scaling.tar.gz" -C "$out" "${names[@]}"
    ;;
  *)
    echo "usage: pack_bench.sh pack [folder] | run OUT [folder] [threads] [rounds]" >&2
    exit 2
    ;;
esac
