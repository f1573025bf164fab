#!/usr/bin/env bash
# The main job: the conformance suite against the reference backend, in
# certify mode. Prints the results table; writes reports/ (JUnit, JSON) and
# the badge.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/executorch-conformance run --backend ReferenceBackend --certify --report-dir reports "$@"
