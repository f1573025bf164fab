#!/usr/bin/env bash
# Builds executorch-ggml's runtime against the executorch wheel of .venv with the contract kit:
#   bash scoreboard/ggml/build.sh CHECKOUT GGML_SOURCE FLATBUFFERS_INCLUDE [BUILD_DIR]
# CHECKOUT: a checkout of github.com/larryliu0820/executorch-ggml (scoreboard/README.md names the commit
# scored and what it needed); GGML_SOURCE: a ggml source tree (its own pin, a fork of llama.cpp, is not
# public here: upstream ggml stands in); FLATBUFFERS_INCLUDE: flatbuffers 24.3.25's include/ directory.
# Prints the library's path; the descriptor (scoreboard/ggml/descriptor.py) loads it from
# $EXECUTORCH_GGML_LIBRARY and imports the Python side from $CHECKOUT/python.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,8p' "$0" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${4:-$repo/build/executorch-ggml}
python=$repo/.venv/bin/python
"$repo/.venv/bin/cmake" -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DGGML_CHECKOUT="$(cd "$1" && pwd)" -DGGML_SOURCE="$(cd "$2" && pwd)" -DFLATBUFFERS_INCLUDE="$(cd "$3" && pwd)" \
  -DBackendKit_DIR="$("$python" -c 'import backend_kit, os; print(os.path.join(os.path.dirname(backend_kit.__file__), "cmake"))')" \
  -DPython_EXECUTABLE="$python" >"$build.configure.log" 2>&1 || { tail -20 "$build.configure.log" >&2; exit 1; }
"$repo/.venv/bin/cmake" --build "$build" --parallel 2 >"$build.build.log" 2>&1 || { grep -m5 -B2 -A3 "error" "$build.build.log" >&2; exit 1; }
echo "$build/libggml_backend.so"
