"""The vendor process's clock of a task (``process.TaskClock``): time in load steps is not charged to
the task's timeout, each load has the timeout of its own, and everything else is charged."""

from __future__ import annotations

from conformance.vendor.process import TaskClock

LOAD_A, LOAD_B = "load of sample 'mlp' (copy 1 of 2)", "load of sample 'mlp' (copy 2 of 2)"


def test_time_outside_loads_is_charged():
    clock = TaskClock(0.0, timeout=10)
    assert not clock.expired(5.0, "execute of sample 'mlp'")
    assert not clock.expired(10.0, "execute of sample 'mlp'")
    assert clock.expired(10.5, "execute of sample 'mlp'")
    assert TaskClock(0.0, timeout=10).expired(11.0, None)  # no step marked yet: charged


def test_loads_longer_than_the_timeout_together_are_not_charged():
    clock = TaskClock(0.0, timeout=10)
    assert not clock.expired(1.0, "execute of something first")
    # four loads of 8 s each: 32 s, more than the whole timeout, none of it charged
    for k, step in enumerate((LOAD_A, LOAD_B, LOAD_A + " again", LOAD_B + " again")):
        assert not clock.expired(1.0 + 8 * k, step)
        assert not clock.expired(1.0 + 8 * k + 7.5, step)
    # then 1 s charged before the loads and 8.5 s after: 9.5 s, within 10
    assert not clock.expired(33.0, "execute of sample 'mlp'")
    assert not clock.expired(41.5, "execute of sample 'mlp'")
    assert clock.expired(42.5, "execute of sample 'mlp'")


def test_one_load_past_the_timeout_expires():
    clock = TaskClock(0.0, timeout=10)
    assert not clock.expired(2.0, LOAD_A)
    assert not clock.expired(12.0, LOAD_A)
    assert clock.expired(12.5, LOAD_A)  # a hanging init() still times out, after the timeout of its own


def test_a_new_load_step_starts_its_own_allowance():
    clock = TaskClock(0.0, timeout=10)
    assert not clock.expired(0.0, LOAD_A)
    assert not clock.expired(9.0, LOAD_B)  # LOAD_A took 9 s; LOAD_B starts now
    assert not clock.expired(18.5, LOAD_B)
    assert clock.expired(19.5, LOAD_B)
