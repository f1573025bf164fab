#!/usr/bin/env bash
# The project's tests: sets up .venv (scripts/bootstrap.sh), then runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# worksteal: the slowest tests (whole suite runs) come last in collection order; idle workers take them over.
exec .venv/bin/python -m pytest -n 2 --dist worksteal "$@"
