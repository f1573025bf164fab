"""Giving ``BackendDescriptor.supported_ops`` is deprecated since 0.6.0 (docs/api-stability.md): a
descriptor given a non-empty set warns, pointing at the vendor's line and naming ``operators=`` with
``OperatorSupport``, and is declared as before; from 0.7.0 it is a descriptor error. Reading
``d.supported_ops`` still gives the declared operator names, and nothing that gives only ``operators``
warns."""

from __future__ import annotations

import dataclasses
import inspect
import json
import warnings

import pytest

from conformance import version
from conformance.deprecations import DEPRECATIONS, SuiteDeprecationWarning
from conformance.descriptor import BackendDescriptor, DescriptorError, _validate, from_info, to_info
from conformance.operators import OperatorSupport
from reference_backend.conformance import DESCRIPTOR as REFERENCE

NAMES = frozenset({"aten::add.Tensor", "aten::relu"})
#: REFERENCE's fields without the two that declare operators
FIELDS = {
    f.name: getattr(REFERENCE, f.name)
    for f in dataclasses.fields(REFERENCE)
    if f.init and f.name not in ("supported_ops", "operators")
}


def _line() -> int:
    """The number of the line after the caller's."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno + 1


def _the_warning(caught) -> str:
    """The one supported_ops warning, checked to point at this file; its message."""
    (w,) = [w for w in caught if issubclass(w.category, SuiteDeprecationWarning)]
    assert w.filename == __file__, w.filename
    return str(w.message)


def _assert_names_the_replacement(message: str, count: int) -> None:
    d = DEPRECATIONS["supported_ops"]
    assert message.startswith(f"supported_ops is given ({count} operator names): ")
    assert f"deprecated since suite {d.since}, an error from suite {d.error_in}" in message
    assert "declare the operators in operators= with OperatorSupport" in message
    assert "OperatorSupport.float32(*names)" in message


def test_given_alone_warns_at_the_vendors_line_and_declares_float32():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _line()
        d = BackendDescriptor(**FIELDS, supported_ops=NAMES)
    message = _the_warning(caught)
    assert caught[0].lineno == line
    _assert_names_the_replacement(message, 2)
    assert d.deprecations() == (message,)
    assert d.supported_ops == NAMES
    assert d.operators == OperatorSupport.float32(*NAMES)
    assert _validate(d, "x") is d  # a warning, not an error


def test_given_with_operators_warns_and_declares_the_union():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = BackendDescriptor(
            **FIELDS,
            supported_ops=NAMES,
            operators=OperatorSupport.of(("float32", "int32"), "aten::mul.Tensor"),
        )
    message = _the_warning(caught)
    _assert_names_the_replacement(message, 2)
    assert d.deprecations() == (message,)
    assert set(d.supported_ops) == set(d.operators) == NAMES | {"aten::mul.Tensor"}
    assert d.operators["aten::mul.Tensor"].dtypes == ("float32", "int32")
    assert d.operators["aten::relu"].dtypes == ("float32",)


def test_given_to_replace_warns_at_the_vendors_line_and_still_narrows():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _line()
        narrowed = dataclasses.replace(REFERENCE, supported_ops=NAMES)
    message = _the_warning(caught)
    assert caught[0].lineno == line
    _assert_names_the_replacement(message, 2)
    assert narrowed.deprecations() == (message,)
    assert set(narrowed.supported_ops) == set(narrowed.operators) == NAMES
    assert narrowed.operators["aten::add.Tensor"] == REFERENCE.operators["aten::add.Tensor"]


def test_a_subclass_default_warns_at_the_line_that_builds_it():
    @dataclasses.dataclass(frozen=True)
    class Narrow(BackendDescriptor):
        supported_ops: frozenset[str] = NAMES

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _line()
        d = Narrow(**FIELDS)
    _the_warning(caught)
    assert caught[0].lineno == line
    assert d.supported_ops == NAMES


def test_a_copy_of_a_descriptor_given_supported_ops_still_reports_it():
    """The copy rests on the supported_ops its original was given: its report lists the deprecation."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = BackendDescriptor(**FIELDS, supported_ops=NAMES)
        renamed = dataclasses.replace(old, backend_id="Renamed")
    assert renamed.deprecations() == old.deprecations() != ()
    assert renamed.supported_ops == old.supported_ops


def test_operators_alone_reading_supported_ops_and_an_empty_set_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", SuiteDeprecationWarning)
        assert set(REFERENCE.supported_ops) == set(REFERENCE.operators)
        assert REFERENCE.deprecations() == ()
        copies = [
            dataclasses.replace(REFERENCE, backend_id="Renamed"),
            dataclasses.replace(REFERENCE, operators=OperatorSupport.float32(*NAMES)),
            dataclasses.replace(
                REFERENCE, supported_ops=frozenset(), operators=OperatorSupport.float32(*NAMES)
            ),
            BackendDescriptor(**FIELDS, operators=OperatorSupport.float32(*NAMES)),
        ]
    assert set(copies[0].operators) == set(REFERENCE.operators)
    for d in copies[1:]:
        assert d.deprecations() == () and d.supported_ops == NAMES


def test_the_process_that_judges_does_not_warn_again():
    """It rebuilds the descriptor from its JSON form; the deprecations it lists are the vendor process's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = BackendDescriptor(**FIELDS, supported_ops=NAMES)
    info = json.loads(json.dumps(to_info(old, lambda _what, fn: fn())))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SuiteDeprecationWarning)
        seen = from_info(info)
    assert seen.deprecations() == old.deprecations()
    assert seen.supported_ops == old.supported_ops and seen.operators == old.operators


def test_from_the_version_the_deprecation_names_it_is_an_error(monkeypatch):
    d = DEPRECATIONS["supported_ops"]
    monkeypatch.setattr(version, "SUITE_VERSION", d.error_in)
    old = BackendDescriptor(**FIELDS, supported_ops=NAMES)
    assert old.deprecations() == ()
    with pytest.raises(DescriptorError) as err:
        _validate(old, "vendor.conformance:DESCRIPTOR")
    text = str(err.value)
    assert text.startswith("vendor.conformance:DESCRIPTOR: supported_ops is given (2 operator names): ")
    assert f"no longer accepted since suite {d.error_in} (deprecated in {d.since})" in text
    assert "operators= with OperatorSupport" in text
    assert _validate(dataclasses.replace(REFERENCE, backend_id="X"), "x").backend_id == "X"
