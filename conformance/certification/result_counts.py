"""What a report's results count to, in the words ``verify`` and the badge both use: ``tally`` (results
by outcome, waived, exempt) and ``counts_phrase`` (``36/45 passed, 3 waived, 6 exempt``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from conformance.outcomes import EXPECTED_FAILURE, MUST, NOT_APPLICABLE, OUTCOMES, PASSED
from conformance.registry import exempt
from conformance.report import ResultRow


def is_exempt(result: ResultRow, capabilities) -> bool:
    """A conditional check that is not applicable because its capability is not declared."""
    return result.get("outcome") == NOT_APPLICABLE and exempt(result.get("applies_if"), capabilities)


def tally(results: Sequence[ResultRow], capabilities) -> tuple[dict[str, int], int, int]:
    """(counts by outcome with "total", waived, exempt) of well-formed results."""
    counts = Counter(r["outcome"] for r in results)
    exempt = sum(is_exempt(r, capabilities) for r in results)
    waived = counts[EXPECTED_FAILURE] + sum(
        r["outcome"] == NOT_APPLICABLE and r["level"] == MUST and not is_exempt(r, capabilities)
        for r in results
    )
    return {**{o: counts[o] for o in OUTCOMES}, "total": len(results)}, waived, exempt


def counts_phrase(counts: dict[str, int], waived: int, exempt: int) -> str:
    """``36/45 passed, 3 waived, 6 exempt`` from ``tally``'s figures: the words the verdict line of
    ``verify`` and the badge both use."""
    extra = "".join(f", {n} {what}" for n, what in ((waived, "waived"), (exempt, "exempt")) if n)
    return f"{counts.get(PASSED, 0)}/{counts.get('total', 0)} passed{extra}"
