#!/bin/sh
# Installs the build tree into a scratch prefix, then, after sourcing its set_env.sh alone (which
# puts the prefix on CMAKE_PREFIX_PATH and PKG_CONFIG_PATH), builds and runs the consumer twice:
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
unset CMAKE_PREFIX_PATH PKG_CONFIG_PATH LD_LIBRARY_PATH
. "$work/prefix/set_env.sh"
# shellcheck disable=SC2086
cmake -S "$here" -B "$work/cmake-build" $toolchain >/dev/null
cmake --build "$work/cmake-build" >/dev/null
$run "$work/cmake-build/consumer"
# shellcheck disable=SC2046
"${ACLNN_TEST_CC:-cc}" "$here/main.c" -o "$work/consumer-pc" $(pkg-config --cflags --libs aclnn_convbwd)
$run "$work/consumer-pc"
grep -q '^Description:.*aclnnConvolution,.*aclnnConvDepthwise2d' "$(pkg-config --variable=pcfiledir aclnn_convbwd)/aclnn_convbwd.pc" \
  || { echo "FAIL: the pkg-config Description does not name every operator"; exit 1; }
test -f "$work/prefix/include/acl/acl.h" && test -f "$work/prefix/include/aclnnop/aclnn_convolution_backward.h" \
  && test -f "$work/prefix/include/aclnn/opdev/op_errno.h"
echo "installed layout ok"
