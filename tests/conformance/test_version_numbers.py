"""conformance.version_numbers: versions compared as versions (PEP 440, semver converted), never as text,
and a version found in a log line only as a whole token."""

from __future__ import annotations

import pytest
from packaging.version import Version

from conformance.version_numbers import (
    names,
    names_in_range,
    names_release,
    parse_version,
    release,
    tokens,
    version_triple,
)


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("1.2.3", "1.2.3"),
        ("v1.2", "1.2"),
        ("01.2.3", "1.2.3"),  # leading zeros are numbers, not text
        ("1.2.3.4", "1.2.3.4"),
        ("1!2.0", "1!2.0"),  # an epoch
        ("1.5.1+cpu", "1.5.1+cpu"),  # a local part
        ("1.6.0.dev20261101", "1.6.0.dev20261101"),
        ("1.0.0-rc.1", "1.0.0rc1"),  # semver spelling that PEP 440 also reads
        ("1.0.0-alpha.1", "1.0.0a1"),
        ("1.0.0-beta+exp.sha.5114f85", "1.0.0b0+exp.sha.5114f85"),
        ("1.0.0-rc.1+build.5", "1.0.0rc1+build.5"),
        ("1.0.0+21AF26D3----117B344092BD", "1.0.0"),  # semver build metadata PEP 440 cannot hold is dropped
    ],
)
def test_parse_version_reads_pep440_and_semver(text, version):
    assert parse_version(text) == Version(version)


@pytest.mark.parametrize("text", ["1.0.0-alpha.beta", "1.0.0-x.7.z.92", "1.0.0-0A.is.legal"])
def test_a_semver_only_prerelease_is_a_prerelease_of_its_release(text):
    v = parse_version(text)
    assert v is not None and v.is_prerelease
    assert v.release == (1, 0, 0) and v < Version("1.0.0")


@pytest.mark.parametrize("text", ["", "abc", "1.2.3-", "1..2", "one.two", "1.2.3 4"])
def test_parse_version_gives_none_for_what_is_not_a_version(text):
    assert parse_version(text) is None


@pytest.mark.parametrize(
    ("text", "length", "numbers"),
    [
        ("1.5.1+cpu", 3, (1, 5, 1)),
        ("0.1.0rc1", 3, (0, 1, 0)),
        ("1.0.0-rc.1", 3, (1, 0, 0)),
        ("1.2", 3, (1, 2, 0)),
        ("1", 4, (1, 0, 0, 0)),
        ("1.2.3.4", 2, (1, 2)),
        (Version("2!3.4.5.post1"), 3, (3, 4, 5)),
    ],
)
def test_release_pads_or_cuts_the_release_numbers(text, length, numbers):
    assert release(text, length) == numbers


@pytest.mark.parametrize("text", ["abc", "", "1.2.3-"])
def test_release_of_what_is_not_a_version_raises(text):
    with pytest.raises(ValueError, match="is not a version"):
        release(text)


@pytest.mark.parametrize(
    ("text", "triple"),
    [("1.5.1+cpu", (1, 5, 1)), ("1.2.3rc1", (1, 2, 3)), ("1.2", (1, 2, 0)), ("1.6.0.dev20261101", (1, 6, 0))],
)
def test_version_triple(text, triple):
    assert version_triple(text) == triple


def test_version_triple_of_what_is_not_a_version_raises():
    with pytest.raises(ValueError, match="latest"):
        version_triple("latest")


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("runtime 0.2.0 for executorch 1.5.1+cpu", ["0.2.0", "1.5.1+cpu"]),
        ("written by v2.0.0.", ["2.0.0"]),  # a sentence's full stop is not part of it
        ("got 1.0.0-rc.1 here", ["1.0.0rc1"]),
        ("lib1.2 x2.0 libfoo.so.3", []),  # glued to a word
        ("reads 1.0-1.2", ["1.0", "1.2"]),
        ("no version here", []),
    ],
)
def test_tokens_are_whole_versions(line, found):
    assert tokens(line) == [Version(v) for v in found]


@pytest.mark.parametrize(
    ("line", "wanted", "named"),
    [
        ("runtime 2.0", "2.0.0", True),  # as versions: 2.0 == 2.0.0
        ("runtime 0.2.0", "2.0", False),  # not as text
        ("runtime 2.0", "0.2.0", False),
        ("runtime 2.0.1", "2.0", False),  # not a prefix of a longer version
        ("runtime 12.0", "2.0", False),
        ("built 1.5.1+cpu,", "1.5.1+cpu", True),
        ("built 1.5.1+cpu,", "1.5.1", False),  # a local version is another version
        ("runtime 1.0", "junk", False),
    ],
)
def test_names_compares_versions_as_versions(line, wanted, named):
    assert names(line, wanted) is named


def test_names_release_accepts_a_prerelease_of_the_release():
    assert names_release("written by 0.1.0rc1", "0.1.0")
    assert names_release("written by 0.1.0+cpu", "0.1")
    assert not names_release("written by 0.1.1", "0.1.0")


@pytest.mark.parametrize(
    ("line", "inside", "outside"),
    [
        ("reads 1.0-1.2", "1.1", "1.3"),
        ("reads 1.0 to 1.2", "1.2", "0.9"),
        ("reads 1.0..1.2", "1.0", "1.2.1"),
        ("reads 1.0\N{EN DASH}1.2", "1.1.5", "2.1"),
        ("reads 1.1", "1.1.0", "1.0"),  # a single version is a range of one
    ],
)
def test_names_in_range(line, inside, outside):
    assert names_in_range(line, inside)
    assert not names_in_range(line, outside)


@pytest.mark.parametrize("line", ["reads 1.2-1.0", "reads 11.0-11.2", "reads 1.0-1.05x"])
def test_names_in_range_needs_an_ordered_range_of_whole_versions(line):
    assert not names_in_range(line, "1.1")


def test_names_in_range_of_what_is_not_a_version_is_false():
    assert not names_in_range("reads 1.0-1.2", "latest")
