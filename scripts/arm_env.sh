#!/usr/bin/env bash
# The environment of the scoreboard's Arm rows (scoreboard/arm/): the pinned torch and executorch 1.5.1
# with tosa-tools 2026.5.0, ethos-u-vela 5.1.0 and ai_ml_sdk_model_converter 0.10.0 (the TOSA reference model,
# the Ethos-U compiler and VGF's model converter, the
# versions executorch's `ethos-u` and `vgf` extras pin) and
# the contract kit (its simulator bridge). tosa-tools pins numpy<2.2 and flatbuffers==25.2.10, so it is an
# environment of its own, .venv-arm; the suite judges from .venv and runs its vendor processes here
# (`executorch-conformance run --vendor-python .venv-arm/bin/python`). Safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
VENV=${ARM_VENV:-.venv-arm}
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
"${PIP[@]}" install "torch==${TORCH_VERSION:-2.13.0}"
"${PIP[@]}" install "executorch==${EXECUTORCH_VERSION:-1.5.1}" "torch==${TORCH_VERSION:-2.13.0}" \
  "tosa-tools==2026.5.0" "ethos-u-vela==5.1.0" "ai_ml_sdk_model_converter==0.10.0" "cmake>=3.28" ninja "crc32c>=2.7"
"${PIP[@]}" install --no-build-isolation --force-reinstall --no-deps ./kit
echo "arm_env: $VENV is ready ($("$VENV/bin/python" -c 'import numpy, executorch.version as v; print("executorch", v.__version__, "numpy", numpy.__version__)'))"
