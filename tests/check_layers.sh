#!/bin/sh
# The include graph points down (docs/architecture.md, "Layers"): every #include "kernels/<folder>/..."
# of a file under kernels/ or src/ is one its folder may use. Run from the repository root, or with the
# root as the first argument.
set -eu
cd "${1:-.}"
# folder -> the kernels/ folders its files may include (besides src/common and the headers).
allowed() {
  case "$1" in
    kernels/core) echo "core" ;;
    kernels/common) echo "core common" ;;
    kernels/amx) echo "core common amx" ;;
    kernels/kits) echo "core common amx kits" ;;
    kernels/matmul) echo "core common amx kits matmul" ;;
    kernels/gemm | kernels/direct | kernels/winograd | kernels/ref | kernels/bias)
      echo "core common kits matmul ${1#kernels/}" ;;
    kernels/conv) echo "core common amx kits matmul gemm direct winograd ref bias conv" ;;
    kernels/deform) echo "core common kits matmul ref deform" ;;
    kernels/quant) echo "core common kits ref quant" ;;
    src/conv) echo "core conv" ;;
    src/deform) echo "core deform" ;;
    src/quant) echo "core quant" ;;
    src/common | src/runtime | src/meta) echo "" ;;
    *) echo "?" ;;
  esac
}
status=0
for file in $(find kernels src -name '*.h' -o -name '*.cpp' | sort); do
  folder=$(dirname "$file")
  may=$(allowed "$folder")
  if [ "$may" = "?" ]; then
    echo "$file: its folder has no place in the layers (tests/check_layers.sh)"
    status=1
    continue
  fi
  # (a kernel includes nothing of src/ but its ground, src/common)
  case "$folder" in
    kernels/*)
      for include in $(sed -n 's/^#include "\(\(runtime\|meta\|conv\)\/[^"]*\)".*/\1/p' "$file"); do
        echo "$file includes $include: kernels/ may include only src/common of src/"
        status=1
      done
      ;;
  esac
  for include in $(sed -n 's/^#include "\(kernels\/[a-z_]*\/[^"]*\)".*/\1/p' "$file"); do
    target=$(echo "$include" | cut -d/ -f2)
    case " $may " in *" $target "*) continue ;; esac
    echo "$file includes $include: $folder may include only kernels/{$(echo "$may" | tr ' ' ',')}"
    status=1
  done
done
[ $status -eq 0 ] && echo "the includes point down"
exit $status
