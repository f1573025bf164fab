"""The last liveness check (``VendorProcess.check_alive``) waits until the vendor process has been idle for
the grace since its last task, counting the time the run already spent after that task, and never longer."""

from __future__ import annotations

import pytest

from conformance.vendor.process import grace_left


@pytest.mark.parametrize(
    ("idle_since", "now", "left"),
    [
        (None, 100.0, 3.0),  # never seen idle (no task ran, or the process was restarted): the whole grace
        (100.0, 100.0, 3.0),  # the last task has just ended
        (100.0, 101.0, 2.0),  # a check that calls no vendor code took a second
        (100.0, 103.0, 0.0),  # idle for the whole grace already: it answers at once
        (100.0, 160.0, 0.0),  # waiting for work started ahead
        (100.0, 99.0, 3.0),  # a clock read before the task ended: never more than the grace
    ],
)
def test_the_wait_is_what_is_left_of_the_grace(idle_since, now, left):
    assert grace_left(3.0, idle_since, now) == pytest.approx(left)
