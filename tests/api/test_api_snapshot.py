"""The snapshot of the suite's own vendor API (abi_checks/suite_api/, abi_checks/tools/suite_api.py) and
its check, which scripts/lint.sh runs in CI: proven on deliberate changes made in a copy of the tree."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from abi_checks.tools import suite_api

REPO = Path(__file__).resolve().parents[2]


def test_the_tree_keeps_its_promises():
    assert suite_api.check(REPO) == []


def test_snapshots_exist_for_every_released_suite_version():
    from conformance.released import releases

    snapshots = suite_api._snapshots()
    assert {v for v in releases() if v != "0.1.0"} <= set(
        snapshots
    )  # 0.1.0 had no descriptor module of today's
    assert all("commit" in snapshots[v] for v in snapshots if v != max(snapshots, key=suite_api._release))


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "build")
    shutil.copytree(REPO / "conformance", root / "conformance", ignore=ignore)
    shutil.copytree(REPO / "kit", root / "kit", ignore=ignore)
    return root


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _snapshots(tmp_path: Path, root: Path, *released: str) -> Path:
    """A snapshot folder holding the committed snapshots ``released`` and the copy's own, as if its
    change had been snapshotted and committed (so only the policy's verdict on the change remains)."""
    folder = tmp_path / "snapshots"
    folder.mkdir()
    for version in released:
        shutil.copy(suite_api.SNAPSHOT_DIR / f"{version}.json", folder)
    own = suite_api.surface_of(root)
    (folder / f"{own['suite_version']}.json").write_text(json.dumps(own))
    return folder


SAMPLE_FIELD = "    delegated: bool = data(bool, default=True)\n"


@pytest.mark.full
def test_an_addition_passes(tmp_path):
    """A new optional field at the end of the descriptor and a new function: compatible."""
    root = _copy(tmp_path)
    _edit(
        root / "conformance" / "descriptor.py",
        "simulator: Callable[[bytes, Any], Any] | None = code(optional=True)\n\n    def __post_init__",
        "simulator: Callable[[bytes, Any], Any] | None = code(optional=True)\n"
        "    extra_hook: Callable[[], Any] | None = code(optional=True)\n\n    def __post_init__",
    )
    _edit(
        root / "conformance" / "testing.py",
        "def check_backend(",
        "def new_helper() -> None:\n    pass\n\n\ndef check_backend(",
    )
    # not yet snapshotted: the check asks for the snapshot
    unrecorded = suite_api.check(root)
    assert len(unrecorded) == 1, unrecorded
    unrecorded = unrecorded[0]
    assert "differs from abi_checks/suite_api/0.6.0.json in 3 members" in unrecorded
    assert "run python -m abi_checks.tools.suite_api snapshot" in unrecorded
    assert suite_api.check(root, _snapshots(tmp_path, root, "0.5.0")) == []


@pytest.mark.full
def test_a_removal_without_a_deprecation_fails(tmp_path):
    root = _copy(tmp_path)
    _edit(root / "conformance" / "descriptor.py", SAMPLE_FIELD, "")
    found = suite_api.check(root, _snapshots(tmp_path, root, "0.5.0"))
    assert found, "removing SampleModel.delegated went unnoticed"
    assert any(
        p.startswith(
            "conformance.descriptor:SampleModel.__init__: parameter 'delegated' removed in suite 0.6.0, "
            "without a deprecation: add one to conformance/deprecations.py"
        )
        for p in found
    ), found


@pytest.mark.full
def test_a_break_in_a_patch_release_fails_even_with_a_deprecation(tmp_path):
    root = _copy(tmp_path)
    _edit(root / "conformance" / "version.py", 'SUITE_VERSION = "0.6.0"', 'SUITE_VERSION = "0.6.1"')
    _edit(root / "conformance" / "testing.py", "    raise_on_failure: bool = True,\n", "")
    _edit(root / "conformance" / "testing.py", "if raise_on_failure and ", "if ")
    folder = _snapshots(tmp_path, root, "0.5.0", "0.6.0")
    found = suite_api.check(root, folder)
    assert found == [
        (
            "conformance.testing:check_backend: parameter 'raise_on_failure' removed, but the suite version goes from "
            "0.6.0 to 0.6.1: a break needs a new minor or major version, and a deprecation first"
        )
    ]


@pytest.mark.full
def test_a_removal_a_deprecation_announced_passes(tmp_path):
    """Deprecated in 0.5.0 (a warning for one minor release), removed in 0.6.0: allowed."""
    root = _copy(tmp_path)
    _edit(root / "conformance" / "descriptor.py", SAMPLE_FIELD, "")
    _edit(
        root / "conformance" / "deprecations.py",
        "        ),\n    )\n}",
        '        ),\n        Deprecation(\n            key="delegated", what="SampleModel.delegated", since="0.5.0",\n'
        '            error_in="0.6.0", replacement="none",\n'
        '            api=("conformance.descriptor:SampleModel.__init__", "conformance.descriptor:SampleModel.delegated"),\n'
        "        ),\n    )\n}",
    )
    assert suite_api.check(root, _snapshots(tmp_path, root, "0.5.0")) == []


@pytest.mark.full
@pytest.mark.parametrize(
    ("what", "file", "old", "new", "expected"),
    [
        (
            "C++ signature",
            "kit/backend_kit/include/backend_kit/header.h",
            "inline bool is_utf8(const uint8_t* p, size_t n)",
            "inline bool is_utf8(const uint8_t* p, uint32_t n)",
            r"backend_kit/header\.h:backend_kit::is_utf8\(const uint8_t\*, size_t\): removed, but the kit version goes from 0\.1\.\d+ to 0\.1\.\d+: a break needs a new minor",
        ),
        (
            "CLI option",
            "conformance/cli.py",
            '"--report-dir"',
            '"--reports"',
            r"^run --report-dir: removed in suite 0\.6\.0, without a deprecation",
        ),
        (
            "entry point group",
            "conformance/descriptor.py",
            'ENTRY_POINT_GROUP = "executorch_conformance.backends"',
            'ENTRY_POINT_GROUP = "executorch.backends"',
            (
                r"^conformance\.descriptor:ENTRY_POINT_GROUP: value 'executorch_conformance\.backends' -> "
                r"'executorch\.backends' in suite 0\.6\.0, without a deprecation"
            ),
        ),
    ],
)
def test_other_parts_of_the_surface(tmp_path, what, file, old, new, expected):
    root = _copy(tmp_path)
    _edit(root / file, old, new)
    found = suite_api.check(root, _snapshots(tmp_path, root, "0.5.0"))
    assert any(re.search(expected, p) for p in found), (what, found)


@pytest.mark.full
def test_a_field_inserted_before_others_breaks_positional_construction(tmp_path):
    """New optional fields go at the end of their dataclass: one inserted before ``operators`` moves it."""
    root = _copy(tmp_path)
    _edit(
        root / "conformance" / "descriptor.py",
        "    operators: Any = custom(",
        "    engine_library: Callable[[], Any] | None = code(optional=True)\n    operators: Any = custom(",
    )
    found = suite_api.check(root, _snapshots(tmp_path, root, "0.5.0"))
    assert any(
        "BackendDescriptor.__init__: parameter 'operators' moved from position 14" in p for p in found
    ), found
