"""Conformance profiles (conformance/profiles.py): every check is in exactly one profile, and each profile's
verdict is the suite's verdict rule over its own results, "not claimed" when none of them applies."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from templates import result_rows

from conformance.checks import all_checks
from conformance.descriptor import CAPABILITY_ABSENT
from conformance.profiles import (
    CORE,
    NOT_CLAIMED,
    PROFILES,
    Profile,
    _validate,
    certified_profiles,
    membership_problems,
    profile_of,
)
from conformance.released import releases
from conformance.report import profile_verdicts, verdict

EVERY_CAPABILITY = sorted({c.applies_if for c in all_checks() if c.applies_if})


def results(**outcomes: str) -> list[dict[str, Any]]:
    """A result per check of the suite, passed unless ``outcomes`` names it (``RT_5="failed"``)."""
    return result_rows(**outcomes)


def by_name(entries: list[dict[str, Any]]) -> dict[str, str]:
    return {e["name"]: e["verdict"] for e in entries}


def test_every_check_of_the_suite_is_in_exactly_one_profile():
    assert membership_problems(c.id for c in all_checks()) == []
    assert {profile_of(c.id).id for c in all_checks()} == {p.id for p in PROFILES}  # no profile is empty


@pytest.mark.parametrize("version", sorted(releases()))
def test_every_check_of_each_released_version_is_in_exactly_one_profile(version):
    """verify computes the profiles of a report of any released version from its results."""
    assert membership_problems(releases()[version].check_ids) == []


def test_a_check_in_no_profile_or_in_two_is_named():
    assert membership_problems(["XYZ-1", "RT-3"]) == [
        "XYZ-1 is in no profile: add it to one in conformance/profiles.py"
    ]
    twice = (Profile("a", "A", ("RT",), "r"), Profile("b", "B", ("RT-5",), "r"))
    assert membership_problems(["RT-5", "RT-4"], twice) == ["RT-5 is in 2 profiles: a, b"]


def test_a_malformed_table_is_refused_when_the_module_loads():
    with pytest.raises(ValueError, match="profiles 'a' and 'b' both list 'NDATA'"):
        _validate((Profile("a", "A", ("NDATA",), "r"), Profile("b", "B", ("NDATA",), "r")))
    with pytest.raises(ValueError, match="lists 'rt-5', neither a check id nor an area"):
        _validate((Profile("a", "A", ("rt-5",), "r"),))
    with pytest.raises(ValueError, match="profile ids repeat"):
        _validate((Profile("a", "A", ("RT",), "r"), Profile("a", "B", ("AOT",), "r")))


def test_the_header_checks_are_their_own_profile_and_core_is_first():
    assert PROFILES[0].id == CORE
    assert [c for c in ("BLOB-1", "BLOB-2", "RT-7") if profile_of(c).id != "versioned_blobs"] == []
    # refusing an incompatible blob is every backend's property, judged in its own format when it has one
    assert profile_of("RT-5").id == profile_of("RT-6").id == profile_of("STATE-1").id == CORE
    assert profile_of("STATE-2").id == "stateful_programs"


def test_every_profile_passes_when_every_check_passes():
    entries = profile_verdicts(results(), True, EVERY_CAPABILITY)
    assert [e["id"] for e in entries] == [p.id for p in PROFILES]
    assert set(by_name(entries).values()) == {"certified"}
    assert all(e["reasons"] == [] for e in entries)
    assert certified_profiles(entries) == [p.name for p in PROFILES]
    assert set(by_name(profile_verdicts(results(), False, EVERY_CAPABILITY)).values()) == {"conformant"}


def test_a_failed_must_check_fails_its_profile_only():
    entries = profile_verdicts(results(BLOB_1="failed"), True, EVERY_CAPABILITY)
    verdicts = by_name(entries)
    assert verdicts.pop("Versioned blobs") == "not conformant"
    assert set(verdicts.values()) == {"certified"}
    (blobs,) = [e for e in entries if e["id"] == "versioned_blobs"]
    assert blobs["checks"] == ["BLOB-1", "BLOB-2", "RT-7"]
    assert blobs["reasons"] == ["BLOB-1 failed: BLOB-1 went wrong"]
    # the overall verdict is unchanged: every MUST check counts
    assert verdict(results(BLOB_1="failed"), True, EVERY_CAPABILITY)[0] == "not conformant"
    assert "Versioned blobs" not in certified_profiles(entries) and "Core" in certified_profiles(entries)


def test_without_core_no_profile_is_certified():
    entries = profile_verdicts(results(RT_3="crashed"), True, EVERY_CAPABILITY)
    assert by_name(entries)["Core"] == "not conformant" and by_name(entries)["Named data"] == "certified"
    assert certified_profiles(entries) == []


def test_a_profile_whose_capability_is_not_declared_is_not_claimed():
    declared = [c for c in EVERY_CAPABILITY if c != "named_data"]
    absent = {f"NDATA_{n}": "not_applicable" for n in range(1, 5)}
    rows = results(**absent)
    for r in rows:
        if r["applies_if"] == "named_data":
            r["reason"] = CAPABILITY_ABSENT["named_data"]
    entries = profile_verdicts(rows, True, declared)
    (named,) = [e for e in entries if e["id"] == "named_data"]
    assert named["verdict"] == NOT_CLAIMED
    assert named["reasons"] == ["the backend does not declare named_data"]
    assert certified_profiles(entries) == [p.name for p in PROFILES if p.id != "named_data"]


def test_a_declared_capability_whose_check_is_not_applicable_is_not_certified():
    """Declaring the capability claims the profile: a not-applicable MUST check then fails it (certify)."""
    entries = profile_verdicts(results(NDATA_3="not_applicable"), True, EVERY_CAPABILITY)
    (named,) = [e for e in entries if e["id"] == "named_data"]
    assert named["verdict"] == "not conformant"
    assert named["reasons"] == ["NDATA-3 mandatory but not applicable: NDATA-3 went wrong"]


def test_an_undeclared_capability_within_a_profile_leaves_the_rest_judged():
    """Versioned blobs without the acceptance capability: RT-7 is exempt, the header checks still count."""
    declared = [c for c in EVERY_CAPABILITY if c != "acceptance"]
    entries = profile_verdicts(results(RT_7="not_applicable"), True, declared)
    assert by_name(entries)["Versioned blobs"] == "certified"
    entries = profile_verdicts(results(RT_7="not_applicable", BLOB_2="failed"), True, declared)
    assert by_name(entries)["Versioned blobs"] == "not conformant"


def test_only_profiles_with_a_selected_check_have_an_entry():
    selected = [r for r in results() if r["id"].startswith(("AOT-", "NDATA-"))]
    entries = profile_verdicts(selected, False, EVERY_CAPABILITY)
    assert [(e["id"], e["verdict"]) for e in entries] == [
        ("core", "conformant"),
        ("named_data", "conformant"),
    ]


def test_an_interrupted_run_passes_no_profile():
    entries = profile_verdicts(results(), True, EVERY_CAPABILITY, interrupted=True)
    assert set(by_name(entries).values()) == {"not conformant"}
    assert certified_profiles(entries) == []


def _documented() -> dict[str, tuple[str, set[str]]]:
    """docs/contract.md's table of profiles: id -> (name, the check ids its checks column names)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "contract.md").read_text(encoding="utf-8")
    section = text.split("\n## Profiles\n", 1)[1].split("\n## ", 1)[0]
    table = {}
    ids = [c.id for c in all_checks()]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[1].startswith("`"):
            continue
        covered = set()
        for part in cells[2].split(", "):
            span = re.fullmatch(r"([A-Z]+)-(\d+) to \1-(\d+)", part)
            if part.endswith("-\\*"):
                covered |= {i for i in ids if i.startswith(part[:-2])}
            elif span:
                covered |= {f"{span[1]}-{n}" for n in range(int(span[2]), int(span[3]) + 1)}
            else:
                covered.add(part)
        table[cells[1].strip("`")] = (cells[0], covered)
    return table


def test_the_contract_documents_the_profiles_as_defined():
    documented = _documented()
    assert list(documented) == [p.id for p in PROFILES]
    for profile in PROFILES:
        name, covered = documented[profile.id]
        assert name == profile.name
        assert covered == {c.id for c in all_checks() if profile.covers(c.id)}, profile.id
