#!/bin/sh
# Installs the build tree into a scratch prefix, then builds and runs the consumer twice:
# once with CMake's find_package, once with a plain compiler line from pkg-config.
# Cross builds pass ACLNN_TEST_TOOLCHAIN, ACLNN_TEST_CC and ACLNN_TEST_EMULATOR (tests/CMakeLists.txt).
set -eu
build_dir="$1"
work="$2"
here=$(cd "$(dirname "$0")" && pwd)
run="${ACLNN_TEST_EMULATOR:-}"
toolchain=""
if [ -n "${ACLNN_TEST_TOOLCHAIN:-}" ]; then
  # a cross toolchain searches packages under the target's root only: the package is named directly
  toolchain="-DCMAKE_TOOLCHAIN_FILE=$ACLNN_TEST_TOOLCHAIN -Daclnn_convbwd_DIR=$work/prefix/share/cmake/aclnn_convbwd"
fi
rm -rf "$work"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
# shellcheck disable=SC2086
cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" $toolchain >/dev/null
cmake --build "$work/cmake-build" >/dev/null
libdir=$(dirname "$(find "$work/prefix" -name 'libaclnn_convbwd.so' | head -n 1)")
LD_LIBRARY_PATH="$libdir" $run "$work/cmake-build/consumer"
PKG_CONFIG_PATH="$libdir/pkgconfig" "${ACLNN_TEST_CC:-cc}" "$here/main.c" -o "$work/consumer-pc" $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs aclnn_convbwd)
LD_LIBRARY_PATH="$libdir" $run "$work/consumer-pc"
test -f "$work/prefix/include/acl/acl.h" && test -f "$work/prefix/include/aclnnop/aclnn_convolution_backward.h" \
  && test -f "$work/prefix/include/aclnn/opdev/op_errno.h"
echo "installed layout ok"
