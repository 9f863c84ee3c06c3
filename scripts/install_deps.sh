#!/bin/sh
# Installs the Debian 12 packages the build and tests need; does nothing when all are present.
set -eu
# usage: install_deps.sh [--aarch64 | --fuzz | --tsan-openmp]
#   --aarch64: also the cross-compiler, qemu and GoogleTest's sources
#   --fuzz, --tsan-openmp: also clang with libFuzzer, and LLVM's OpenMP (libomp, with its TSan support)
packages="g++ cmake make pkg-config libgtest-dev libeigen3-dev python3 valgrind"
case "${1:-}" in
  --aarch64) packages="$packages g++-aarch64-linux-gnu qemu-user googletest" ;;
  --fuzz | --tsan-openmp) packages="$packages clang libclang-rt-14-dev libomp-14-dev" ;;
esac
missing=""
for package in $packages; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
