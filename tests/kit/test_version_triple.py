"""One rule for the (major, minor, patch) a blob header records: the kit's version_triple, which
the suite (conformance.version_numbers) and the reference backend (reference_backend.backend) call. The
three agree on every input, and every triple they give is one the kit's encoder writes."""

from __future__ import annotations

import pytest

import backend_kit.header as kit
import conformance.version_numbers as suite
import reference_backend.backend as reference

TRIPLES = {
    "1.2.3": (1, 2, 3),
    "1.2.3rc1": (1, 2, 3),
    "1.2.3-rc.1": (1, 2, 3),
    "1.2.3+local": (1, 2, 3),
    "1.2.3-beta+exp.sha.5114f85": (1, 2, 3),
    "1.2": (1, 2, 0),
    "7": (7, 0, 0),
    "v1.2.3": (1, 2, 3),
    "1.2.3.4": (1, 2, 3),
    "1!2.3.4": (2, 3, 4),
    "1.6.0.dev20261101": (1, 6, 0),
    "2.0.0.post3": (2, 0, 0),
    "65535.65535.65535": (65535, 65535, 65535),
}
#: Not writable: not PEP 440 (semver-only pre-releases and build metadata included), or a number past u16.
REFUSED = [
    "1.0.0-alpha.beta",
    "1.0.0+21AF26D3----117B344092BD",
    "latest",
    "",
    "1.2.3-",
    "65536.0",
    "1.2.70000",
]

WRITERS = {
    "backend_kit.header": kit.version_triple,
    "conformance.version_numbers": suite.version_triple,
    "reference_backend.backend": reference.version_triple,
}


@pytest.mark.parametrize("owner", WRITERS)
@pytest.mark.parametrize(("text", "triple"), TRIPLES.items())
def test_every_caller_gives_the_kit_s_triple(owner, text, triple):
    assert WRITERS[owner](text) == triple


@pytest.mark.parametrize("owner", WRITERS)
@pytest.mark.parametrize("text", REFUSED)
def test_every_caller_refuses_what_the_kit_cannot_write(owner, text):
    with pytest.raises(kit.HeaderError):
        WRITERS[owner](text)


@pytest.mark.parametrize("text", TRIPLES)
def test_every_triple_is_written_and_read_back(text):
    triple = kit.version_triple(text)
    header = kit.Header("B", (1, 0), backend_version=triple, executorch_version=triple)
    decoded = kit.decode(kit.encode(header, b""))
    assert decoded.backend_version == decoded.executorch_version == triple


def test_a_refusal_names_the_text_and_the_rule():
    with pytest.raises(kit.HeaderError, match=r"'1.0.0-alpha.beta' is not a version \(PEP 440"):
        kit.version_triple("1.0.0-alpha.beta")
    with pytest.raises(kit.HeaderError, match="its patch number 70000 does not fit the header's u16 field"):
        kit.version_triple("1.2.70000")
