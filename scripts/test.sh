#!/usr/bin/env bash
# The project's tests: sets up .venv (scripts/bootstrap.sh), then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/python -m pytest -n 2 "$@"
