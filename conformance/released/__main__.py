"""Maintainer script: writes conformance/released/<SUITE_VERSION>.json from the registry.

    python -m conformance.released --released 2026-12-01 --valid-until 2027-12-01

Run it when releasing a suite version (and whenever a check of the unreleased
current version changes). Without the dates it keeps those already in the file.
"""

from __future__ import annotations

import argparse
import json
import sys

from conformance.released import HERE, release_data
from conformance.version import SUITE_VERSION


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.released", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--released", help="release date, YYYY-MM-DD (default: the one in the file)")
    parser.add_argument("--valid-until", help="last day its reports are accepted, YYYY-MM-DD (default: kept)")
    args = parser.parse_args(argv)
    path = HERE / f"{SUITE_VERSION}.json"
    old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    released = args.released or old.get("released")
    valid_until = args.valid_until or old.get("valid_until")
    if not released or not valid_until:
        parser.error(f"{path.name} does not exist yet: give --released and --valid-until")
    try:
        data = release_data(released, valid_until)
    except ValueError as exc:
        parser.error(str(exc))
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(data['checks'])} checks, valid {released} to {valid_until})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
