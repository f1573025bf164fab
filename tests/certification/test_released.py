"""The committed list of checks of each released suite version."""

from __future__ import annotations

import json
import subprocess
import sys

from conformance.released import CHECK_FIELDS, HERE, registry_checks, releases
from conformance.version import REPORT_SCHEMA_VERSION, SUITE_VERSION


def test_the_current_suite_version_is_released_with_exactly_the_registry_checks():
    release = releases()[SUITE_VERSION]
    assert list(release.checks.values()) == registry_checks(), (
        f"conformance/released/{SUITE_VERSION}.json differs from conformance.checks.all_checks(); "
        "run `python -m conformance.released` and commit the file"
    )
    assert release.report_schema_version == REPORT_SCHEMA_VERSION


def test_every_released_file_is_well_formed():
    for version, release in releases().items():
        assert release.released < release.valid_until, version
        assert release.checks, version
        for check in release.checks.values():
            assert set(check) == set(CHECK_FIELDS) and check["level"] in ("MUST", "SHOULD"), (version, check)


def test_maintainer_script_keeps_the_dates_and_rewrites_the_same_file(tmp_path):
    path = HERE / f"{SUITE_VERSION}.json"
    before = path.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "conformance.released"], capture_output=True, text=True)
    try:
        assert proc.returncode == 0, proc.stderr
        assert path.read_bytes() == before
        assert json.loads(before)["suite_version"] == SUITE_VERSION
    finally:
        path.write_bytes(before)
