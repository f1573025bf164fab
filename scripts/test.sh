#!/usr/bin/env bash
# The project's tests: sets up .venv (scripts/bootstrap.sh), then runs pytest.
#   bash scripts/test.sh           the default tier: every module, without the tests marked `full` or `long`
#   bash scripts/test.sh --full    the default and full tiers (what CI runs): one case of every slow family
#   bash scripts/test.sh --long    every test: the long tier adds the rest of each slow family (fault and
#                                  hang matrices, golden descriptors, real-backend certify runs, QEMU)
# Other arguments go to pytest (bash scripts/test.sh -q tests/abi).
set -euo pipefail
cd "$(dirname "$0")/.."
tier=(-m "not full and not long")
name=default
args=()
for a in "$@"; do
  case "$a" in
    --full) tier=(-m "not long"); name=full ;;
    --long) tier=(); name=long ;;
    *) args+=("$a") ;;
  esac
done
bash scripts/bootstrap.sh
# One lowering cache for the whole session (build/, not ~/.cache): the many whole-suite runs of the tests
# lower the reference backend's samples once. Tests about lowering itself pass --no-cache.
export EXECUTORCH_CONFORMANCE_CACHE_DIR=${EXECUTORCH_CONFORMANCE_CACHE_DIR:-$PWD/build/lowering-cache}
start=$SECONDS
rc=0
# worksteal: the slowest tests (whole suite runs) come last in collection order; idle workers take them over.
# --durations: the 20 slowest tests at the end, so a change that slows the tier shows where.
.venv/bin/python -m pytest -n 2 --dist worksteal --durations=20 "${tier[@]}" "${args[@]}" || rc=$?
echo "scripts/test.sh: the $name tier took $((SECONDS - start)) s (exit code $rc)"
exit "$rc"
