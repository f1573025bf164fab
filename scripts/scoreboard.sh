#!/usr/bin/env bash
# The scoreboard (scoreboard/README.md): the suite on each real backend, every check, the full
# operator corpus and the model tier, into scoreboard/results/, then rendered into
# scoreboard/SCOREBOARD.md and scoreboard/scoreboard.html. Arguments go to `python -m scoreboard.run`
# (row names, --row NAME=SPEC, --ops, --checks, --no-models, --results DIR). Full runs take minutes per row.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# The Arm rows run their vendor processes in .venv-arm (scripts/arm_env.sh): made when they are to run.
if [ $# -eq 0 ] || printf '%s\n' "$@" | grep -q '^arm-'; then bash scripts/arm_env.sh; fi
results=scoreboard/results
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[$i]}" = "--results" ]; then results=${args[$((i + 1))]}; fi
done
nice .venv/bin/python -m scoreboard.run "$@"
.venv/bin/python -m scoreboard.render --results "$results" \
  $([ "$results" = scoreboard/results ] || echo "--out $results")
