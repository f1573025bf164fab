"""A descriptor error names the descriptor, the field and the value, and refuses only that descriptor;
a deprecated form warns, naming its replacement, and is an error from the version the deprecation
names (issue 29)."""

from __future__ import annotations

import dataclasses
import re
import warnings

import pytest

from conformance import version
from conformance.deprecations import DEPRECATIONS, SuiteDeprecationWarning
from conformance.descriptor import (
    DescriptorError,
    NamedDataSupport,
    QuantizedSupport,
    SampleModel,
    _validate,
    load_descriptor,
)
from reference_backend.conformance import DESCRIPTOR as REFERENCE

GETITEM = "<built-in function getitem>"


def test_a_non_schema_entry_warns_naming_the_replacement_and_is_left_out():
    with pytest.warns(SuiteDeprecationWarning) as caught:
        d = dataclasses.replace(REFERENCE, supported_ops=REFERENCE.supported_ops | {GETITEM})
    messages = [str(w.message) for w in caught]
    (message,) = [m for m in messages if GETITEM in m]  # the other: supported_ops itself is deprecated
    assert message.startswith(f"supported_ops lists {GETITEM!r}, not an operator schema name: ")
    assert "deprecated since suite 0.5.0, an error from suite 0.7.0" in message
    assert "remove it from supported_ops" in message
    assert {w.filename for w in caught} == {__file__}  # they point at the line that built the descriptor
    assert d.deprecations() == tuple(messages)
    assert GETITEM not in d.supported_ops and GETITEM not in d.operators
    assert d.supported_ops == REFERENCE.supported_ops
    assert _validate(d, "x") is d


def test_the_module_with_a_non_schema_entry_loads_with_the_warning():
    """The measured break: suite 0.2.0 as released to 0.4.0 raised a plain ValueError while the module was
    imported (tests/api/golden/suite_0_2_0/recorded.json holds that run)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = load_descriptor("suite_0_2_0.getitem:DESCRIPTOR")
    assert any(isinstance(w.message, SuiteDeprecationWarning) for w in caught)
    non_schema, given = d.deprecations()
    assert GETITEM in non_schema and given.startswith("supported_ops is given (")


def test_from_the_version_the_deprecation_names_it_is_an_error(monkeypatch):
    monkeypatch.setattr(version, "SUITE_VERSION", DEPRECATIONS["supported_ops-non-schema"].error_in)
    d = dataclasses.replace(REFERENCE, supported_ops=REFERENCE.supported_ops | {GETITEM})
    assert d.deprecations() == ()
    with pytest.raises(DescriptorError) as err:
        _validate(d, "vendor.conformance:DESCRIPTOR")
    text = str(err.value)
    assert text.startswith(
        f"vendor.conformance:DESCRIPTOR: supported_ops lists {GETITEM!r}, not an operator schema"
    )
    assert "no longer accepted since suite 0.7.0 (deprecated in 0.5.0); remove it from supported_ops" in text


def test_only_the_malformed_descriptor_of_a_module_is_refused():
    """Suite 0.4.0 raised while importing suite_0_4_0.mixed, so GOOD could not be loaded either."""
    good = load_descriptor("suite_0_4_0.mixed:GOOD")
    assert good.backend_id == "ReferenceBackend"
    with pytest.raises(DescriptorError) as err:
        load_descriptor("suite_0_4_0.mixed:MISNAMED")
    assert str(err.value) == (
        "suite_0_4_0.mixed:MISNAMED: operators {'relu': ['float32']}: operator 'relu' is not a schema name "
        "such as 'aten::add.Tensor'"
    )


def _sample(**changes):
    return dataclasses.replace(REFERENCE.sample_models[0], **changes)


#: (field changes, the error after 'x: ')
BAD = {
    "backend_id": ({"backend_id": 3}, "backend_id is 3, a int, not a str"),
    "no samples": ({"sample_models": ()}, "sample_models declares none; the suite needs at least 1"),
    "sample type": ({"sample_models": ("mlp",)}, "sample_models[0] is a str, not a SampleModel"),
    "make": (
        {"sample_models": (_sample(make="model.pt"),)},
        "sample_models[0] ('mlp').make is 'model.pt', a str, not callable",
    ),
    "rtol": (
        {"sample_models": (_sample(rtol="1e-5"),)},
        "sample_models[0] ('mlp').rtol is '1e-5', a str, not a float",
    ),
    "duplicates": (
        {"sample_models": (_sample(), _sample())},
        "sample_models has duplicate names: ['mlp', 'mlp']",
    ),
    "load_runtime": ({"load_runtime": "libx.so"}, "load_runtime is 'libx.so', a str, not callable or None"),
    "named_data type": (
        {"named_data": {"sample": "mlp"}},
        "named_data is {'sample': 'mlp'}, a dict, not a NamedDataSupport",
    ),
    "named_data sample": (
        {"named_data": dataclasses.replace(REFERENCE.named_data, sample="nope")},
        "named_data.sample 'nope' is not one of the sample_models",
    ),
    "max_blob_bytes": (
        {"named_data": dataclasses.replace(REFERENCE.named_data, max_blob_bytes=0)},
        "named_data.max_blob_bytes must be positive, not 0",
    ),
    "quantized sample": (
        {"quantized": QuantizedSupport("missing", lambda: None)},
        "quantized.sample 'missing' is not one of the sample_models",
    ),
    "supported_ops item": (
        {"supported_ops": frozenset({3})},
        "supported_ops holds 3, a int, not an operator schema name",
    ),
    "operators": (
        {"operators": {"aten::relu": ["float64"]}},
        "operators {'aten::relu': ['float64']}: unknown dtype 'float64'",
    ),
}


@pytest.mark.parametrize("case", BAD)
def test_each_error_names_the_descriptor_the_field_and_the_value(case):
    changes, expected = BAD[case]
    d = dataclasses.replace(REFERENCE, **changes)  # never raises while the vendor's module is imported
    with pytest.raises(DescriptorError) as err:
        _validate(d, "x")
    assert str(err.value).startswith("x: "), err.value
    assert expected in str(err.value), err.value


def test_every_problem_of_a_descriptor_is_named_at_once():
    d = dataclasses.replace(REFERENCE, backend_id=3, load_runtime="libx.so")
    with pytest.raises(
        DescriptorError, match=re.escape("x: backend_id is 3, a int, not a str; load_runtime is")
    ):
        _validate(d, "x")


def test_support_classes_keep_their_positional_and_keyword_forms():
    """The forms the golden descriptors and docs use: positional and keyword arguments, defaults."""
    s = SampleModel("m", lambda: None)
    assert (s.rtol, s.atol, s.delegated, s.make_inputs) == (1e-5, 1e-5, True, None)
    nd = NamedDataSupport("m", list, 16)
    assert nd.required_keys is None
    assert QuantizedSupport("m", lambda: None).max_steps == 1.0


def test_the_old_home_of_capability_absent_warns_then_refuses(monkeypatch):
    """conformance.outcomes.CAPABILITY_ABSENT (in report-schema.md's example before 0.5.0) moved to
    conformance.descriptor, derived from the capability fields."""
    from conformance import outcomes
    from conformance.descriptor import CAPABILITY_ABSENT

    with pytest.warns(SuiteDeprecationWarning, match=r"import it from conformance\.descriptor") as caught:
        assert outcomes.CAPABILITY_ABSENT is CAPABILITY_ABSENT
    assert caught[0].filename == __file__
    monkeypatch.setattr(version, "SUITE_VERSION", "0.7.0")
    with pytest.raises(
        AttributeError, match=r"no longer accepted since suite 0\.7\.0.*from conformance\.descriptor"
    ):
        outcomes.CAPABILITY_ABSENT  # noqa: B018  the attribute access is the test


def test_the_old_name_of_the_comparison_warns_then_refuses(monkeypatch):
    """conformance.probes (named by docs/contract.md up to 0.5) was renamed conformance.comparison."""
    from conformance import comparison, probes

    with pytest.warns(SuiteDeprecationWarning, match=r"conformance\.probes\.assert_outputs_close.*"
                      r"from conformance\.comparison import") as caught:  # fmt: skip
        assert probes.assert_outputs_close is comparison.assert_outputs_close
    assert caught[0].filename == __file__
    with pytest.raises(AttributeError, match=r"has no attribute 'nothing_here'"):
        probes.nothing_here  # noqa: B018  the attribute access is the test
    monkeypatch.setattr(version, "SUITE_VERSION", "0.7.0")
    with pytest.raises(
        AttributeError, match=r"no longer accepted since suite 0\.7\.0.*conformance\.comparison"
    ):
        probes.closeness  # noqa: B018  the attribute access is the test
