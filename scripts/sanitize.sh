#!/usr/bin/env bash
# Builds the reference runtime with AddressSanitizer + UBSan (CMake option
# REFERENCE_BACKEND_SANITIZE) and runs the reference backend's runtime tests
# against that build, inside the normal Python (libasan preloaded).
#   bash scripts/sanitize.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build/sanitize
SITE=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
PATH="$PWD/.venv/bin:$PATH" cmake -S reference_backend/runtime -B "$BUILD" -G Ninja \
  -DREFERENCE_BACKEND_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$SITE/executorch" >/dev/null
PATH="$PWD/.venv/bin:$PATH" cmake --build "$BUILD" >/dev/null
ASAN_LIB=$(${CXX:-c++} -print-file-name=libasan.so)
UBSAN_LIB=$(${CXX:-c++} -print-file-name=libubsan.so)
# Python itself does not free everything at exit: leak checking is for the
# fuzzers (reference_backend/fuzz/run_fuzz.sh), not for this run.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export REFERENCE_BACKEND_LIBRARY="$PWD/$BUILD/libreference_backend_runtime.so"
LD_PRELOAD="$ASAN_LIB:$UBSAN_LIB" .venv/bin/python -m pytest -p no:cacheprovider -q \
  reference_backend/tests "$@"
