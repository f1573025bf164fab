"""The descriptor's fields are defined once, in its dataclasses (issue 28): the JSON form in which it
reaches the process that judges, its validation, the capability list and the reasons of exempt checks
all come from there, so adding an optional field is one edit."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from conformance import descriptor_fields as fields
from conformance.descriptor import (
    CAPABILITY_ABSENT,
    BackendDescriptor,
    DescriptorError,
    _validate,
    from_info,
    to_info,
)
from conformance.operators import OperatorDeclaration, OperatorSupport
from conformance.registry import AREAS
from conformance.released import releases
from reference_backend.conformance import DESCRIPTOR as REFERENCE


def _call(_what: str, fn: Callable[[], Any]) -> Any:
    return fn()


def test_the_json_form_has_exactly_the_dataclass_fields():
    info = to_info(REFERENCE, _call)
    assert set(info) == {f.name for f in dataclasses.fields(BackendDescriptor)} | {"deprecations"}
    assert set(info["sample_models"][0]) == {
        f.name for f in dataclasses.fields(type(REFERENCE.sample_models[0]))
    }
    assert set(info["named_data"]) == {f.name for f in dataclasses.fields(type(REFERENCE.named_data))}
    op = next(iter(info["operators"].values()))
    assert set(op) == {f.name for f in dataclasses.fields(OperatorDeclaration)}


def test_every_field_has_a_kind_and_every_capability_an_exemption_reason():
    kinds = {f.name: k for f, k in fields.kinded(BackendDescriptor)}
    assert set(kinds) == {f.name for f in dataclasses.fields(BackendDescriptor)}
    capabilities = [n for n, k in kinds.items() if isinstance(k, fields.Nested) and k.capability]
    assert capabilities == list(CAPABILITY_ABSENT)
    # The reference backend declares every capability but mutable_state: its runtime has no kernel for
    # the cache update (index_put), so its partitioner leaves mutated buffers on CPU (STATE-1 judges that).
    assert REFERENCE.capabilities() == [c for c in capabilities if c != "mutable_state"]
    # the reasons released reports carry (verify accepts an exempt result only with them)
    assert (
        CAPABILITY_ABSENT["named_data"]
        == "the descriptor declares no named data support (named_data is None)"
    )
    assert CAPABILITY_ABSENT["composition"] == (
        "the descriptor declares no composition with XNNPACK (composition is None)"
    )
    released = set().union(*(r.capabilities for r in releases().values()))
    assert released <= set(CAPABILITY_ABSENT)


@dataclasses.dataclass(frozen=True)
class _TolerancesSupport:
    """A support class a later suite might add (one capability, one data field, one code field)."""

    sample: str = fields.sample_name()
    max_ulps: int = fields.data(int, positive=True)
    make_reference: Callable[[], Any] | None = fields.code(optional=True)


@dataclasses.dataclass(frozen=True)
class _Extended(BackendDescriptor):
    """The descriptor with three new optional fields, each added with one line."""

    registered_at_import: bool | None = fields.data(bool, default=None)
    open_engine: Callable[[], Any] | None = fields.code(optional=True)
    tolerances: _TolerancesSupport | None = fields.capability(_TolerancesSupport, "per-sample ULP bounds")


def _extended(**changes) -> _Extended:
    base = {f.name: getattr(REFERENCE, f.name) for f in dataclasses.fields(REFERENCE)}
    return _Extended(**{**base, **changes})


def test_an_optional_field_added_in_one_place_gets_its_json_form_validation_and_capability():
    d = _extended(
        registered_at_import=True,
        open_engine=lambda: None,
        tolerances=_TolerancesSupport("mlp", 4, None),
    )
    info = json.loads(json.dumps(to_info(d, _call)))
    assert info["registered_at_import"] is True and info["open_engine"] is True
    assert info["tolerances"] == {"sample": "mlp", "max_ulps": 4, "make_reference": False}
    seen = fields.from_json(_Extended, info)
    assert seen.registered_at_import is True and seen.tolerances == _TolerancesSupport("mlp", 4, None)
    with pytest.raises(RuntimeError, match=r"open_engine\(\) is the vendor's code"):
        seen.open_engine()
    assert seen.capabilities() == [*REFERENCE.capabilities(), "tolerances"]
    assert fields.capability_absent(_Extended)["tolerances"] == (
        "the descriptor declares no per-sample ULP bounds (tolerances is None)"
    )
    assert _validate(d, "x") is d
    for bad, expected in (
        ({"registered_at_import": "yes"}, "registered_at_import is 'yes', a str, not a bool"),
        ({"open_engine": "libengine.so"}, "open_engine is 'libengine.so', a str, not callable or None"),
        (
            {"tolerances": _TolerancesSupport("nope", 4)},
            "tolerances.sample 'nope' is not one of the sample_models",
        ),
        ({"tolerances": _TolerancesSupport("mlp", 0)}, "tolerances.max_ulps must be positive, not 0"),
    ):
        with pytest.raises(
            DescriptorError, match="^x: .*" + expected.replace("(", r"\(").replace(")", r"\)")
        ):
            _validate(_extended(**bad), "x")
    plain = _extended()  # the new fields unset: nothing changes for the others
    assert plain.capabilities() == REFERENCE.capabilities()


def test_an_operator_declaration_field_crosses_with_no_other_edit():
    """OperatorSupport's JSON form walks OperatorDeclaration's fields (per-operator tolerances, say)."""

    @dataclasses.dataclass(frozen=True)
    class WithTolerance(OperatorDeclaration):
        atol: float | None = None

    support = OperatorSupport({"aten::relu": WithTolerance(("float32",), atol=1e-3)})
    form = support.to_json()["aten::relu"]
    assert set(form) == {f.name for f in dataclasses.fields(OperatorDeclaration)}  # the base class's fields
    back = OperatorSupport.from_json(support.to_json())
    assert back["aten::relu"].dtypes == ("float32",)


def test_the_capabilities_the_suite_checks_are_the_descriptor_fields():
    from conformance.checks import all_checks

    conditional = {c.applies_if for c in all_checks() if c.applies_if}
    assert conditional == set(CAPABILITY_ABSENT)
    assert {c.area for c in all_checks()} <= set(AREAS)


def test_from_info_rebuilds_stand_ins_that_refuse_to_run():
    seen = from_info(json.loads(json.dumps(to_info(REFERENCE, _call))))
    for name, call in (
        ("make_partitioners", seen.make_partitioners),
        ("sample_models[0].make", seen.sample_models[0].make),
        ("named_data.required_keys", seen.named_data.required_keys),
        ("quantized.make_quantizer", seen.quantized.make_quantizer),
    ):
        with pytest.raises(
            RuntimeError, match=rf"{name.replace('[', '.').replace(']', '.')}\(\) is the vendor's code"
        ):
            call()
    assert seen.sample_models[0].make_inputs is None and seen.sample_models[4].make_inputs is not None
    assert [str(p) for p in seen.runtime_libraries()] == [str(p) for p in REFERENCE.runtime_libraries()]
