"""A report's strings are the forger's: verify, sign, badge and page take time linear in a failure reason's
length (docs/contract.md, clause CERT-1: verify re-checks any report under its size cap in useful time)."""

from __future__ import annotations

import hashlib
import json
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from templates import finish, make_report

from conformance.cli import main
from conformance.report.verdicts import _cause

#: Reasons the old searched pattern ``\S+\(\)...`` backtracked over quadratically, and their neighbours.
SHAPES = {
    "no spaces": lambda n: "x" * n,
    "calls without raised": lambda n: "f()" * (n // 3),
    "sample model never closed": lambda n: "f() of sample model '" * (n // 21),
    "raised then a line break": lambda n: "f() raised E" + "\n" + "y" * n,
    "found-while notes": lambda n: " (found while running A-1)" * (n // 26),
}


def _failing(reason: str) -> dict:
    report = make_report(
        libraries=[{"path": "/site-packages/x/libx.so", "sha256": hashlib.sha256(b"x").hexdigest()}]
    )
    report["results"][0].update(outcome="failed", reason=reason)
    return finish(report)


def _timed(args: list[str]) -> tuple[int, float]:
    started = time.perf_counter()
    code = main([str(a) for a in args])
    return code, time.perf_counter() - started


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_verify_sign_badge_and_page_are_fast_on_a_one_mib_reason(tmp_path, capsys, shape):
    from conformance.certification.attestation import generate_key

    path = tmp_path / "report.json"
    path.write_text(json.dumps(_failing(SHAPES[shape](1 << 20))), encoding="utf-8")
    key, public, _ = generate_key(tmp_path / "key.pem")
    times = {}
    for name, args, want in (
        ("verify", ["verify", path], 0),
        ("sign", ["sign", path, "--key", key], 0),
        ("verify signed", ["verify", tmp_path / "report.intoto.jsonl", "--trusted-key", public], 0),
        ("badge", ["badge", path, "--out-dir", tmp_path], 0),
        ("page", ["page", path, "--out", tmp_path / "r.html"], 0),
    ):
        code, times[name] = _timed(args)
        assert code == want, (name, capsys.readouterr())
    capsys.readouterr()
    # linear work on 1 MiB is a few tenths of a second; the quadratic pattern took hours. 10 s: busy machines
    assert max(times.values()) < 10, times


def test_grouping_a_long_reason_scales_linearly():
    """1 MiB against 64 KiB of the worst shape: 16 times the input, not 256 times the time."""

    def cost(n: int) -> float:
        reason = "x" * n
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            _cause(reason)
            best = min(best, time.perf_counter() - started)
        return best

    small, large = cost(64 << 10), cost(1 << 20)
    assert large < 1 and large < 64 * max(small, 1e-4), (small, large)


# The pattern _cause replaced, kept here as the oracle of what it means on short reasons.
_OLD_NOTE = re.compile(r" \(found while running [A-Z]+-\d+\)$")
_OLD_RAISED = re.compile(r"(\S+\(\)(?: of sample model '[^']*')? raised \w+.*)$")


def _old_cause(reason: str) -> str:
    reason = _OLD_NOTE.sub("", reason)
    found = _OLD_RAISED.search(reason)
    return found.group(1) if found else reason


_PIECES = st.sampled_from(
    [
        "f",
        "()",
        " ",
        "\n",
        " raised ",
        "E",
        "'",
        " of sample model ",
        "x.y",
        "\t",
        " (found while running ",
        "A-1)",
    ]
)


@settings(max_examples=3000, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_the_linear_grouping_means_what_the_pattern_meant(reason):
    assert _cause(reason) == _old_cause(reason)


@pytest.mark.parametrize(
    "reason",
    [
        "make_partitioners() raised RuntimeError: boom (found while running PART-1)",
        "lowering failed: make() of sample model 'add' raised ValueError: bad\n",
        "a() b() raised KeyError: 'k'",
        "no call here",
    ],
)
def test_the_grouping_of_real_reasons_is_unchanged(reason):
    assert _cause(reason) == _old_cause(reason)
