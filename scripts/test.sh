#!/usr/bin/env bash
# The project's tests: sets up .venv (scripts/bootstrap.sh), then runs pytest.
#   bash scripts/test.sh           the default tier: every module, without the tests marked `full`
#   bash scripts/test.sh --full    every test, the full tier included (what CI runs)
# Other arguments go to pytest (bash scripts/test.sh -q tests/abi).
set -euo pipefail
cd "$(dirname "$0")/.."
tier=(-m "not full")
name=default
args=()
for a in "$@"; do
  if [ "$a" = --full ]; then tier=(); name=full; else args+=("$a"); fi
done
bash scripts/bootstrap.sh
# One lowering cache for the whole session (build/, not ~/.cache): the many whole-suite runs of the tests
# lower the reference backend's samples once. Tests about lowering itself pass --no-cache.
export EXECUTORCH_CONFORMANCE_CACHE_DIR=${EXECUTORCH_CONFORMANCE_CACHE_DIR:-$PWD/build/lowering-cache}
start=$SECONDS
rc=0
# worksteal: the slowest tests (whole suite runs) come last in collection order; idle workers take them over.
.venv/bin/python -m pytest -n 2 --dist worksteal "${tier[@]}" "${args[@]}" || rc=$?
echo "scripts/test.sh: the $name tier took $((SECONDS - start)) s (exit code $rc)"
exit "$rc"
