#!/usr/bin/env bash
# Times the cold creation of matrix tox environments, and appends one line per
# environment to matrix/results/env-setup.txt.
#
#   scripts/time_envs.sh uv  et141 et151 ...   # tox.ini as it is (tox-uv)
#   scripts/time_envs.sh pip et141 et151 ...   # the pip-based tox.ini of commit 2d0eaa0 (before uv)
#
# Each environment is deleted first (cold env; the download caches of uv and
# pip stay as they are: say which in CACHE, e.g. CACHE=warm). The suite itself
# does not run: `-- --help` makes the first command trivial, so the time is
# venv + deps + commands_pre (tox reports it as setup + cmd[...]).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=$1; shift
CACHE=${CACHE:-as found}
case "$mode" in
  uv)
    tools=build/tools
    [ -x $tools/bin/tox ] || { python3 -m venv $tools && $tools/bin/pip install -q "tox>=4.20" "tox-uv>=1.20"; }
    config=(); workdir=build/.tox ;;
  pip)
    tools=build/tools-pip
    [ -x $tools/bin/tox ] || { python3 -m venv $tools && $tools/bin/pip install -q "tox>=4.20"; }
    mkdir -p build/pip-tox && git show 2d0eaa0:tox.ini > build/pip-tox/tox.ini
    config=(-c build/pip-tox/tox.ini --root .); workdir=build/.tox-pip ;;
  *) echo "usage: $0 uv|pip ENV..." >&2; exit 2 ;;
esac
export PATH="$PWD/$tools/bin:$PATH"
for env in "$@"; do
  rm -rf "$workdir/$env"
  log=build/time-envs-$mode-$env.log
  start=$(date +%s.%N)
  "$tools/bin/tox" "${config[@]}" -e "$env" --workdir "$workdir" -- --help >"$log" 2>&1 || true
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  tox_line=$(grep -oE "$env: [A-Z]+ \(?[^)]*\)?" "$log" | tail -1 || true)
  printf '%s %s %s: %.1f s wall (download cache: %s); tox: %s\n' "$(date -u +%FT%TZ)" "$mode" "$env" "$wall" \
    "$CACHE" "${tox_line:-see $log}" | tee -a matrix/results/env-setup.txt
done
