# CMake toolchain file: aarch64 Linux (glibc) with Debian's cross compilers
# (apt-get install g++-aarch64-linux-gnu). Builds the conformance runner and a
# backend's runtime against an aarch64 executorch wheel unpacked on this host
# (scripts/cross_build_runner.py does it all; docs/device-runner.md):
#
#   cmake -S runner -B build/runner-aarch64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=conformance/device_runner/toolchains/aarch64-linux-gnu.cmake \
#     -DCMAKE_PREFIX_PATH="<unpacked wheel>/executorch;<the backend's aarch64 prefix>" ...
#
# Headers and libraries are searched in the sysroot only: Debian's
# /usr/aarch64-linux-gnu (libc, libstdc++ for aarch64), or -DCROSS_SYSROOT=DIR.
# CMake packages may also come from the host paths on CMAKE_PREFIX_PATH: the
# unpacked wheel and the cross-built backend are there (aarch64 code kept
# outside the sysroot). The executorch package locates its own files relative
# to itself, so it needs no sysroot prefix.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
if(NOT CROSS_SYSROOT)
  set(CROSS_SYSROOT /usr/aarch64-linux-gnu)
endif()
# try_compile projects read this file again: give them the same sysroot.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CROSS_SYSROOT)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH ${CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
