#!/usr/bin/env bash
# Builds the fuzz targets with clang (ASan + UBSan + libFuzzer) and runs each
# for RUNS executions (default 1,000,000) from the committed seed corpus.
# Needs clang and libclang-rt (Debian: apt-get install clang libclang-rt-14-dev).
#   reference_backend/fuzz/run_fuzz.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-1000000}
BUILD=build/fuzz
SITE=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
mkdir -p "$BUILD"
# Configure and build quietly, but show the log when either fails.
quiet() { "$@" >"$BUILD/build.log" 2>&1 || { echo "fuzz build failed: $*"; tail -40 "$BUILD/build.log"; exit 1; }; }
PATH="$PWD/.venv/bin:$PATH" quiet cmake -S reference_backend/fuzz -B "$BUILD" -G Ninja \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$SITE/executorch"
PATH="$PWD/.venv/bin:$PATH" quiet cmake --build "$BUILD"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for target in fuzz_blob_header fuzz_backend_init; do
  work=$(mktemp -d)
  cp reference_backend/fuzz/corpus/* "$work/"
  start=$(date +%s)
  "$BUILD/$target" -runs="$RUNS" -max_len=8192 -print_final_stats=1 "$work" 2> "$BUILD/$target.log" || {
    echo "$target: FAILED, see $BUILD/$target.log"; tail -30 "$BUILD/$target.log"; exit 1; }
  end=$(date +%s)
  execs=$(grep -m1 "stat::number_of_executed_units" "$BUILD/$target.log" | awk '{print $2}')
  echo "$target: $execs executions in $((end - start)) s, no crash, no leak"
  rm -rf "$work"
done
