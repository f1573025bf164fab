"""Derived descriptors declare what they set (issue 29): one test per way a vendor derives a descriptor.

The measured break: ``dataclasses.replace(DESCRIPTOR, supported_ops=SUBSET)`` kept every operator,
because ``__post_init__`` had stored ``operators`` derived from the original fields and the copy carried
it over. AOT-4 then passed a partitioner that claims an operator the copy no longer declares; the whole
run of that is in test_golden_descriptors.py (suite_0_2_0.narrowed, suite_0_4_0.narrowed)."""

from __future__ import annotations

import copy
import dataclasses
import json

import cloudpickle
import pytest

from conformance.descriptor import BackendDescriptor, from_info, to_info
from conformance.operators import OperatorDeclaration, OperatorSupport
from reference_backend.conformance import DESCRIPTOR as REFERENCE

SUB = "aten::sub.Tensor"


def _plain():
    """A descriptor that gives supported_ops only (as vendors wrote them before ``operators``)."""
    return dataclasses.replace(
        REFERENCE, supported_ops=frozenset({"aten::add.Tensor", SUB, "aten::relu"}), operators=None
    )


def _declared(d: BackendDescriptor) -> set[str]:
    assert set(d.supported_ops) == set(d.operators), "supported_ops and operators disagree"
    return set(d.supported_ops)


def test_replace_supported_ops_narrows_a_descriptor_without_operators():
    d = _plain()
    narrowed = dataclasses.replace(d, supported_ops=d.supported_ops - {SUB})
    assert _declared(narrowed) == {"aten::add.Tensor", "aten::relu"}


def test_replace_supported_ops_narrows_a_descriptor_that_gives_operators():
    """The reference descriptor gives both fields; the copy declares the operators it sets, each with the
    declaration the original gave it (dtypes, dynamic, without, reason)."""
    narrowed = dataclasses.replace(
        REFERENCE, supported_ops=frozenset({"aten::add.Tensor", "aten::convolution"})
    )
    assert _declared(narrowed) == {"aten::add.Tensor", "aten::convolution"}
    assert narrowed.operators["aten::add.Tensor"] == REFERENCE.operators["aten::add.Tensor"]
    assert narrowed.operators["aten::convolution"] == REFERENCE.operators["aten::convolution"]
    assert narrowed.operators["aten::add.Tensor"].dynamic


def test_replace_supported_ops_with_a_new_operator_declares_it_for_float32():
    grown = dataclasses.replace(_plain(), supported_ops=frozenset({"aten::relu", "aten::linear"}))
    assert _declared(grown) == {"aten::relu", "aten::linear"}
    assert grown.operators["aten::linear"].dtypes == ("float32",)


def test_replace_operators_declares_them_with_the_supported_ops_given():
    d = _plain()
    changed = dataclasses.replace(d, operators=OperatorSupport.of(("float32", "int32"), "aten::mul.Tensor"))
    assert _declared(changed) == {"aten::add.Tensor", SUB, "aten::relu", "aten::mul.Tensor"}
    assert changed.operators["aten::mul.Tensor"].dtypes == ("float32", "int32")
    assert changed.operators[SUB].dtypes == ("float32",)


def test_replace_both_fields_is_their_union_as_at_construction():
    both = dataclasses.replace(
        REFERENCE, supported_ops=frozenset({"aten::relu"}), operators={"aten::linear": ["float32"]}
    )
    assert _declared(both) == {"aten::relu", "aten::linear"}


def test_replace_of_another_field_keeps_the_declaration():
    for original in (REFERENCE, _plain()):
        renamed = dataclasses.replace(original, backend_id="Renamed")
        assert renamed.supported_ops == original.supported_ops
        assert renamed.operators == original.operators


def test_a_chain_of_copies_stays_narrowed():
    narrowed = dataclasses.replace(REFERENCE, supported_ops=frozenset({"aten::relu"}))
    again = dataclasses.replace(narrowed, backend_id="Other", version="9.9.9")
    assert _declared(again) == {"aten::relu"}
    widened = dataclasses.replace(again, operators={"aten::linear": ["float32"]})
    assert _declared(widened) == {"aten::relu", "aten::linear"}
    assert _declared(dataclasses.replace(widened, python_package="x")) == {"aten::relu", "aten::linear"}


def test_the_derived_set_minus_an_operator_narrows():
    """What a vendor writes: the original's own set, less one."""
    narrowed = dataclasses.replace(REFERENCE, supported_ops=REFERENCE.supported_ops - {SUB})
    assert _declared(narrowed) == set(REFERENCE.supported_ops) - {SUB}


def test_subclass_defaults_are_what_is_declared():
    @dataclasses.dataclass(frozen=True)
    class Narrow(BackendDescriptor):
        supported_ops: frozenset[str] = frozenset({"aten::relu"})

    fields = {f.name: getattr(REFERENCE, f.name) for f in dataclasses.fields(REFERENCE) if f.init}
    del fields["supported_ops"], fields["operators"]
    d = Narrow(**fields)
    assert _declared(d) == {"aten::relu"}
    assert _declared(dataclasses.replace(d, backend_id="Y")) == {"aten::relu"}


def test_subclass_with_its_own_post_init_and_field():
    """A vendor subclass may add fields of its own (they never cross to the process that judges) and a
    __post_init__ that calls the suite's."""

    @dataclasses.dataclass(frozen=True)
    class Mine(BackendDescriptor):
        vendor_note: str = "ours"

        def __post_init__(self) -> None:
            super().__post_init__()
            object.__setattr__(self, "vendor_note", self.vendor_note.upper())

    d = dataclasses.replace(_plain(), supported_ops=frozenset({"aten::relu"}))
    fields = {f.name: getattr(d, f.name) for f in dataclasses.fields(d) if f.init}
    mine = Mine(**fields, vendor_note="x")
    assert _declared(mine) == {"aten::relu"} and mine.vendor_note == "X"
    narrowed = dataclasses.replace(
        Mine(**{**fields, "supported_ops": frozenset({"aten::relu", SUB})}), supported_ops=frozenset({SUB})
    )
    assert _declared(narrowed) == {SUB}
    assert "vendor_note" not in to_info(mine, lambda _what, fn: fn())


@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_copies_and_pickles_keep_what_is_declared(how):
    """copy.copy, copy.deepcopy and cloudpickle (how a descriptor object reaches the vendor process)."""
    narrowed = dataclasses.replace(REFERENCE, supported_ops=frozenset({"aten::relu", SUB}))
    made = {
        "copy": copy.copy,
        "deepcopy": copy.deepcopy,
        "pickle": lambda d: cloudpickle.loads(cloudpickle.dumps(d)),
    }[how](narrowed)
    assert _declared(made) == {"aten::relu", SUB}
    assert _declared(dataclasses.replace(made, supported_ops=frozenset({SUB}))) == {SUB}


def test_the_process_that_judges_sees_the_same_declaration():
    narrowed = dataclasses.replace(REFERENCE, supported_ops=frozenset({"aten::relu", "aten::convolution"}))
    seen = from_info(json.loads(json.dumps(to_info(narrowed, lambda _what, fn: fn()))))
    assert seen.supported_ops == narrowed.supported_ops
    assert seen.operators == narrowed.operators
    assert isinstance(seen.operators["aten::convolution"], OperatorDeclaration)
    assert seen.operators["aten::convolution"].without == REFERENCE.operators["aten::convolution"].without


def test_operators_of_another_descriptor_given_to_a_copy_are_declared():
    other = dataclasses.replace(_plain(), supported_ops=frozenset({"aten::linear"}))
    mixed = dataclasses.replace(_plain(), operators=other.operators)
    assert _declared(mixed) == {"aten::add.Tensor", SUB, "aten::relu", "aten::linear"}
