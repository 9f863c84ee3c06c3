#!/bin/bash
# The doc samples (and our forward operators' sample) built the three ways CANN users build them, against an installed toolkit home
# (cmake --install into <work>/Ascend/cann), each run checking the printed numbers:
#   1. ops-nn build.sh's link line (-lopapi_nn -lopapi_math -lascendcl|-lacl_rt -lnnopbase, no
#      rpath) after sourcing set_env.sh;
#   2. a CMake project written like the ops-nn examples' (toolkit at ASCEND_HOME_PATH),
#      -DCMAKE_SKIP_RPATH=TRUE, after sourcing ${ASCEND_HOME_PATH}/bin/setenv.bash as their run.sh
#      does; and one written like CANN's quick-start guide (toolkit at ASCEND_CUSTOM_PATH, else
#      /usr/local/Ascend/cann) after sourcing set_env.sh alone;
#   3. a Python ctypes program loading libascendcl.so, libnnopbase.so and libopapi.so by path.
# usage: run.sh <build dir> <work dir> <source dir> <arch>-linux
# Cross builds pass ACLNN_TEST_CXX, ACLNN_TEST_TOOLCHAIN and ACLNN_TEST_EMULATOR
# (tests/CMakeLists.txt); the ctypes part then needs a target Python and is skipped.
set -euo pipefail
build_dir="$1"
work="$2"
source_dir="$3"
arch_dir="$4"  # <arch>-linux
here="$source_dir/tests/cann_builds"
check="$source_dir/tests/check_sample_output.sh"
rm -rf "$work"
mkdir -p "$work"
home="$work/Ascend/cann"
cmake --install "$build_dir" --prefix "$home" >/dev/null

declare -A expected=(
  [convolution_backward_sample]="gradInputResult=2.000000x196 gradWeightResult=98.000000x4 gradBiasResult=98.000000x2"
  [conv_tbc_backward_sample]="gradInputResult=2.000000x10 gradWeightResult=5.000000x4 gradBiasResult=5.000000x2"
  [convolution_forward_sample]="convolutionResult=19.000000x8 transposedConvolutionResult=3.000000x48 convTbcResult=3.000000x12 convDepthwise2dResult=10.000000x16"
)

# Nothing from the build tree may leak in: a clean library path, then the toolkit's scripts.
unset LD_LIBRARY_PATH ASCEND_HOME_PATH ASCEND_TOOLKIT_HOME ASCEND_OPP_PATH ASCEND_CUSTOM_PATH CMAKE_PREFIX_PATH \
  PKG_CONFIG_PATH

echo "--- 0. set_env.sh: variables, and sourcing twice does not grow the paths"
(
  . "$home/set_env.sh"
  once="$LD_LIBRARY_PATH"
  . "$home/set_env.sh"
  [ "$LD_LIBRARY_PATH" = "$once" ] || { echo "FAIL: LD_LIBRARY_PATH grew: $LD_LIBRARY_PATH"; exit 1; }
  [ "$ASCEND_HOME_PATH" = "$home" ] && [ "$ASCEND_TOOLKIT_HOME" = "$home" ] && [ "$ASCEND_OPP_PATH" = "$home/opp" ] \
    || { echo "FAIL: ASCEND_* variables: $ASCEND_HOME_PATH $ASCEND_TOOLKIT_HOME $ASCEND_OPP_PATH"; exit 1; }
  [ "$once" = "$home/lib64" ] || { echo "FAIL: LD_LIBRARY_PATH=$once"; exit 1; }
  [ "$ASCEND_CUSTOM_PATH" = "$home" ] || { echo "FAIL: ASCEND_CUSTOM_PATH=$ASCEND_CUSTOM_PATH"; exit 1; }
  ASCEND_CUSTOM_PATH=/opt/elsewhere
  . "$home/set_env.sh"
  [ "$ASCEND_CUSTOM_PATH" = /opt/elsewhere ] || { echo "FAIL: a set ASCEND_CUSTOM_PATH was replaced"; exit 1; }
  [ "$CMAKE_PREFIX_PATH" = "$home" ] || { echo "FAIL: CMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"; exit 1; }
  [ "$PKG_CONFIG_PATH" = "$home/lib64/pkgconfig" ] || { echo "FAIL: PKG_CONFIG_PATH=$PKG_CONFIG_PATH"; exit 1; }
  echo ok
)
(  # what the user had set stays, after the home
  CMAKE_PREFIX_PATH=/opt/mine PKG_CONFIG_PATH=/opt/mine/pkgconfig
  . "$home/set_env.sh"
  [ "$CMAKE_PREFIX_PATH" = "$home:/opt/mine" ] || { echo "FAIL: CMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"; exit 1; }
  [ "$PKG_CONFIG_PATH" = "$home/lib64/pkgconfig:/opt/mine/pkgconfig" ] \
    || { echo "FAIL: PKG_CONFIG_PATH=$PKG_CONFIG_PATH"; exit 1; }
  echo "ok (kept the user's paths)"
)

for sample in convolution_backward_sample conv_tbc_backward_sample convolution_forward_sample; do
  source_file="$source_dir/examples/$sample.cpp"
  for runtime in ascendcl acl_rt; do
    echo "--- 1. $sample: build.sh link line with -l$runtime"
    (
      . "$home/set_env.sh"
      "${ACLNN_TEST_CXX:-g++}" "$source_file" -o "$work/$sample.$runtime" -I "$ASCEND_HOME_PATH/include" \
        -I "$ASCEND_HOME_PATH/include/aclnnop" -I "$ASCEND_HOME_PATH/include/aclnn" -L "$ASCEND_OPP_PATH/lib64" \
        -L "$ASCEND_HOME_PATH/lib64" -lopapi_nn -lopapi_math "-l$runtime" -lnnopbase
      if readelf -d "$work/$sample.$runtime" | grep -q -E "RPATH|RUNPATH"; then echo "FAIL: has an rpath"; exit 1; fi
      # One library, recorded once, whatever names the program was linked with.
      needed=$(readelf -d "$work/$sample.$runtime" | grep NEEDED | grep -c -E "aclnn|ascendcl|acl_rt|nnopbase|opapi")
      [ "$needed" -eq 1 ] || { echo "FAIL: $needed CANN libraries recorded"; exit 1; }
      # shellcheck disable=SC2086
      "$check" "$work/$sample.$runtime" ${expected[$sample]}
    )
  done

  echo "--- 2. $sample: CMake project written like CANN's quick start"
  (
    export ASCEND_HOME_PATH="$home"
    . "${ASCEND_HOME_PATH}/bin/setenv.bash"
    cmake -S "$here/quickstart" -B "$work/quickstart.$sample" -DCMAKE_SKIP_RPATH=TRUE \
      -DSAMPLE_SOURCE="$source_file" ${ACLNN_TEST_TOOLCHAIN:+"-DCMAKE_TOOLCHAIN_FILE=$ACLNN_TEST_TOOLCHAIN"} >/dev/null
    cmake --build "$work/quickstart.$sample" >/dev/null
    # shellcheck disable=SC2086
    "$check" "$work/quickstart.$sample/opapi_test" ${expected[$sample]}
  )

  echo "--- 2b. $sample: CMake project written like CANN's quick-start guide, after set_env.sh"
  (
    . "$home/set_env.sh"
    cmake -S "$here/quickstart_guide" -B "$work/guide.$sample" -DCMAKE_SKIP_RPATH=TRUE \
      -DSAMPLE_SOURCE="$source_file" ${ACLNN_TEST_TOOLCHAIN:+"-DCMAKE_TOOLCHAIN_FILE=$ACLNN_TEST_TOOLCHAIN"} >/dev/null
    cmake --build "$work/guide.$sample" >/dev/null
    # shellcheck disable=SC2086
    "$check" "$work/guide.$sample/bin/opapi_test" ${expected[$sample]}
  )
done

echo "--- 3. Python ctypes: libascendcl.so, libnnopbase.so, libopapi.so loaded by path"
if [ -n "${ACLNN_TEST_EMULATOR:-}" ]; then
  echo "skipped: the host's Python cannot load a library built for another architecture"
else
  . "$home/set_env.sh"
  python3 "$here/ctypes_backward.py" "$ASCEND_HOME_PATH/lib64"
  python3 "$here/ctypes_backward.py" "$ASCEND_HOME_PATH/$arch_dir/lib64"
fi
echo "all CANN-style builds ok"
