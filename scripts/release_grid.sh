#!/usr/bin/env bash
# The reference backend's own release grid: every release since 0.2.0 (0.1.0 has
# no conformance descriptor) and, with --broken, a 0.5.0 that adds an operator
# without bumping the blob format, each built from this repository's history
# into an environment of its own (scripts/reference_releases.py); then every
# release's blobs on every release's runtime. Writes
# build/reference-releases/grid.json. Exit status: the grid's (1 when a cell fails).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh >/dev/null
mapfile -t envs < <(.venv/bin/python scripts/reference_releases.py 0.2.0 0.3.0 0.4.0 "$@")
args=()
for env in "${envs[@]}"; do args+=(--release "$env"); done
exec .venv/bin/executorch-conformance release-grid --backend ReferenceBackend "${args[@]}" \
  --json build/reference-releases/grid.json
