"""The stored ABI baselines and Python API files: they parse, say what they cover, and agree
with the facts the project relies on (checked from the data, not assumed)."""

from __future__ import annotations

import json

import pytest

from abi_checks import BASELINE_DIR, PACKAGE_DIR, PYTHON_API_DIR
from abi_checks.diff import available_releases, diff_baselines, exit_code, load_baseline

RELEASES = ["1.0.1", "1.1.0", "1.2.0", "1.3.1", "1.4.1", "1.5.0", "1.5.1"]
WITH_HEADERS = ["1.3.1", "1.4.1", "1.5.0", "1.5.1"]
# The order the project's contract documents (docs/version-policy.md): checked against the measured data.
EXPECTED_VTABLE = [
    "~BackendInterface",
    "is_available",
    "init",
    "execute",
    "set_option",
    "get_option",
    "destroy",
]


def test_every_release_has_a_baseline():
    assert available_releases() == RELEASES


@pytest.mark.parametrize("release", RELEASES)
def test_baseline_parses_and_is_consistent(release):
    b = json.loads((BASELINE_DIR / f"{release}.json").read_text())
    assert b["release"] == release and b["schema"] == 1
    s = b["symbols"]
    assert s["executorch_exported"] == len(s["exported"]) <= s["total_exported"]
    assert sum(s["per_namespace"].values()) == s["executorch_exported"]
    # the library recorded is the one carrying the registry
    assert any("register_backend(" in d for d in s["exported"].values()), b["runtime_library"]
    assert b["runtime_library"]["path"] in {c["path"] for c in b["register_backend_exported_by"]}
    lay = b["layouts"]
    assert lay["status"] in ("complete", "partial", "unavailable")
    assert set(lay["types"]).isdisjoint(lay["unavailable"])
    if release in WITH_HEADERS:
        assert lay["status"] == "complete", lay["unavailable"]
    else:
        # no backend headers ship before 1.3: those types are marked, with the reason
        assert "BackendInterface" in lay["unavailable"] and "note" in lay
        assert "does not ship" in lay["unavailable"]["BackendInterface"]


@pytest.mark.parametrize("release", WITH_HEADERS)
def test_backend_interface_vtable_order_from_data(release):
    vt = load_baseline(release)["layouts"]["types"]["BackendInterface"]["vtable"]
    measured = [e["name"] for e in sorted(vt, key=lambda e: e["slot"])]
    assert measured == EXPECTED_VTABLE, (
        f"executorch {release}: measured BackendInterface vtable order {measured} disagrees with the "
        f"documented order {EXPECTED_VTABLE}"
    )
    slots = [e["slot"] for e in sorted(vt, key=lambda e: e["slot"])]
    assert slots == [0, 2, 3, 4, 5, 6, 7]  # the destructor pair takes slots 0 and 1


@pytest.mark.parametrize("release", RELEASES)
def test_error_enum_recorded(release):
    values = load_baseline(release)["layouts"]["types"]["Error"]["values"]
    assert values["Ok"] == 0
    assert values["NotFound"] == 0x20
    assert values["DelegateInvalidCompatibility"] == 0x30


def test_diff_150_151_is_clean():
    changes = diff_baselines(load_baseline("1.5.0"), load_baseline("1.5.1"))
    assert changes == [] and exit_code(changes) == 0


def test_diff_131_151_classifies_known_changes():
    changes = diff_baselines(load_baseline("1.3.1"), load_baseline("1.5.1"))
    by = {(c.category, c.subject) for c in changes}
    # the registry moved from libqnn_executorch_backend.so to the shared libexecutorch.so (1.5)
    assert ("runtime library changed", "register_backend") in by
    # MemoryAllocator gained used_size/free_size (1.4): reset moved in the vtable
    vt = next(c for c in changes if c.category == "vtable changed")
    assert vt.subject == "MemoryAllocator" and "used_size" in vt.detail
    assert any(c.category == "symbol added" for c in changes)
    assert exit_code(changes) == 1
    # BackendInitContext has the same layout in 1.3.1 and 1.5.1: the growth said to date to 1.2
    # happened before the first wheel with headers, so no diff between header-carrying wheels sees it.
    assert not any(c.subject == "BackendInitContext" for c in changes)


def test_backend_init_context_before_13_is_not_comparable():
    changes = diff_baselines(load_baseline("1.2.0"), load_baseline("1.3.1"))
    c = next(c for c in changes if c.subject == "BackendInitContext")
    assert c.category == "layout not comparable" and "1.2.0" in c.detail


def test_layout_changes_found_before_13():
    # Measured facts the README table states (types whose headers ship from 1.0 on).
    changes = diff_baselines(load_baseline("1.0.1"), load_baseline("1.1.0"))
    layout = {c.subject for c in changes if c.category == "layout changed"}
    assert {"FreeableBuffer", "EValue"} <= layout
    changes = diff_baselines(load_baseline("1.2.0"), load_baseline("1.3.1"))
    assert any(c.subject == "TensorImpl" and "device_" in c.detail for c in changes)


@pytest.mark.parametrize("release", RELEASES)
def test_python_api_file(release):
    doc = json.loads((PYTHON_API_DIR / f"{release}.json").read_text())
    mods = doc["modules"]
    assert "Partitioner" in mods["executorch.exir.backend.partitioner"]["members"]
    assert "BackendDetails" in mods["executorch.exir.backend.backend_details"]["members"]
    assert "CompileSpec" in mods["executorch.exir.backend.compile_spec_schema"]["members"]
    assert "to_edge_transform_and_lower" in mods["executorch.exir"]["members"]
    assert "Runtime" in mods["executorch.runtime"]["members"]


def test_readme_carries_current_python_api_table():
    from abi_checks.tools.python_api import table

    readme = (PACKAGE_DIR / "README.md").read_text()
    assert table() in readme, (
        "abi_checks/README.md is stale: paste `python -m abi_checks.tools.python_api --table`"
    )
