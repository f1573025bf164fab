#!/usr/bin/env bash
# Lint, type and format checks, as CI runs them (.ci/run):
#   ruff check          the rule set in pyproject.toml [tool.ruff.lint]
#   ruff format --check the Python formatting
#   mypy                conformance/, kit/backend_kit, abi_checks/, matrix/ ([tool.mypy] in pyproject.toml)
#   clang-format        the project's C++ (.clang-format), every tracked .cpp/.h
#   vendor API          the suite's own vendor API against its snapshots (abi_checks/tools/suite_api.py)
#   commit messages     gitlint (.gitlint, CONTRIBUTING.md "Commits") on every commit after MESSAGES_SINCE
# Each failing step says how to fix it; all steps run, and the exit code is 1 if any failed.
#
#   bash scripts/lint.sh         check
#   bash scripts/lint.sh --fix   apply ruff's safe fixes, ruff format and clang-format -i, then check
#
# The tools are pinned in the test and dev extras (pip install -e '.[test]'); the venv's copies are
# used when there is a .venv, so the result does not depend on what else is on PATH.
set -uo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
  *) echo "usage: bash scripts/lint.sh [--fix]" >&2; exit 2 ;;
esac

tool() {
  if [ -x ".venv/bin/$1" ]; then echo ".venv/bin/$1"; else command -v "$1" || true; fi
}
RUFF=$(tool ruff)
MYPY=$(tool mypy)
CLANG_FORMAT=$(tool clang-format)
PYTHON=$(tool python)
missing=()
[ -n "$RUFF" ] || missing+=(ruff)
[ -n "$MYPY" ] || missing+=(mypy)
[ -n "$CLANG_FORMAT" ] || missing+=(clang-format)
if [ ${#missing[@]} -gt 0 ]; then
  echo "lint: ${missing[*]} not installed; run: .venv/bin/pip install -e '.[test]' (or bash scripts/bootstrap.sh)" >&2
  exit 2
fi

# The project's C++: tracked files only (not build/ trees nor fetched sources).
cpp_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -- '*.cpp' '*.cc' '*.h' '*.hpp'
  else
    find . \( -path ./build -o -path ./.venv -o -path ./.tox -o -path ./.git \) -prune -o \
      -type f \( -name '*.cpp' -o -name '*.cc' -o -name '*.h' -o -name '*.hpp' \) -print | sed 's|^\./||' | sort
  fi
}
mapfile -t CPP < <(cpp_files)

if [ "$fix" = 1 ]; then
  "$RUFF" check --fix --quiet . || true
  "$RUFF" format --quiet .
  [ ${#CPP[@]} -eq 0 ] || "$CLANG_FORMAT" -i "${CPP[@]}"
fi

failed=()
step() {  # step NAME HOW-TO-FIX COMMAND...
  local name=$1 how=$2
  shift 2
  local start=$SECONDS
  if "$@"; then
    echo "lint: $name: ok ($((SECONDS - start)) s)"
  else
    echo "lint: $name: FAILED ($((SECONDS - start)) s); to fix: $how" >&2
    failed+=("$name")
  fi
}

step "ruff check" "bash scripts/lint.sh --fix for what ruff can fix; the rest by hand (a targeted '# noqa: CODE  reason' only where the code is right)" \
  "$RUFF" check --quiet .
step "ruff format" "bash scripts/lint.sh --fix (runs ruff format)" \
  "$RUFF" format --check .
step "mypy" "correct the annotations or narrow the types mypy names (no blanket 'type: ignore')" \
  "$MYPY"
if [ ${#CPP[@]} -gt 0 ]; then
  step "clang-format" "bash scripts/lint.sh --fix (runs clang-format -i on the files named above)" \
    "$CLANG_FORMAT" --dry-run -Werror --ferror-limit=3 "${CPP[@]}"
fi

step "vendor API" "if the change is meant, run: $PYTHON -m abi_checks.tools.suite_api snapshot and commit it; a break needs a deprecation first and a new minor version (docs/api-stability.md)" \
  "$PYTHON" -m abi_checks.tools.suite_api check

# Commit messages: every commit after MESSAGES_SINCE, the last commit made before the rules were held
# (older history keeps its messages). Not in a git checkout, or in a shallow clone without that commit:
# said, and not checked.
MESSAGES_SINCE=c3611321e9
GITLINT=$(tool gitlint)
if [ -z "$GITLINT" ]; then
  echo "lint: commit messages: gitlint not installed (pip install -e '.[test]'): not checked"
elif ! git rev-parse --verify --quiet "$MESSAGES_SINCE^{commit}" >/dev/null 2>&1; then
  echo "lint: commit messages: not a git checkout with commit $MESSAGES_SINCE: not checked"
else
  step "commit messages" "reword the commits gitlint names (git rebase -i, 'reword'); the rules: CONTRIBUTING.md, \"Commits\"" \
    "$GITLINT" --config .gitlint --commits "$MESSAGES_SINCE..HEAD"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "lint: failed: ${failed[*]}" >&2
  exit 1
fi
echo "lint: all checks passed"
