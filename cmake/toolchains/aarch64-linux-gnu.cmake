# Cross-build for aarch64 Linux (the Kunpeng hosts of Ascend servers) with Debian's
# g++-aarch64-linux-gnu; tests run under qemu-aarch64 (Debian's qemu-user).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Libraries and packages come from the target's root (Debian's arm64-cross packages), never
# from the host's x86-64 ones. Eigen is header-only: the host's copy serves. GoogleTest is
# then built from Debian's source package (tests/CMakeLists.txt).
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(Eigen3_DIR /usr/share/eigen3/cmake CACHE PATH "Eigen's package (header-only)")

# ctest (and gtest_discover_tests) run target programs through the emulator; the scripts of
# the test suite receive it as their first word. QEMU_LD_PREFIX finds the target's loader.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
