"""Versions as versions, never as text: parsing (PEP 440, and semver for
'1.0.0-rc.1' style strings), the release numbers, and finding a version named
as a whole token in a log line ("2.0" is not named by "0.2.0"). The triple a
blob header records is the kit's (``backend_kit.header.version_triple``)."""

from __future__ import annotations

import re

import semver
from packaging.version import InvalidVersion, Version

#: A version-like token not glued to a word or to a longer dotted number on either side.
_TOKEN = re.compile(
    r"(?<![\w.])v?(\d+(?:\.\d+)*(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview|dev|post)\.?\d*)*(?:\+[\w.]+)?)"
    r"(?![\w]|\.\d)"
)
#: 'a.b-c.d', 'a.b..c.d' or 'a.b to c.d': a range of versions.
_RANGE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)*)\s*(?:-|–|\.\.|to)\s*(\d+(?:\.\d+)*)(?![\w]|\.\d)")  # noqa: RUF001  the en dash is meant


def parse_version(text: str) -> Version | None:
    """``text`` as a PEP 440 Version (semver pre-releases converted), or None."""
    try:
        return Version(text)
    except InvalidVersion:
        pass
    try:
        v = semver.Version.parse(text)
    except ValueError:
        return None
    return Version(f"{v.major}.{v.minor}.{v.patch}" + (f"rc{_digits(v.prerelease)}" if v.prerelease else ""))


def _digits(text: str) -> str:
    found = re.findall(r"\d+", text)
    return found[-1] if found else "0"


def release(version: Version | str, length: int = 3) -> tuple[int, ...]:
    """The release numbers padded or cut to ``length``: '1.5.1+cpu' -> (1, 5, 1), '0.1.0rc1' -> (0, 1, 0)."""
    v = version if isinstance(version, Version) else parse_version(version)
    if v is None:
        raise ValueError(f"{version!r} is not a version (PEP 440 or semver)")
    return (v.release + (0,) * length)[:length]


def version_triple(text: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a version string as a blob header records it: the kit's rule,
    ``backend_kit.header.version_triple`` (HeaderError, a ValueError, when it cannot be written)."""
    from backend_kit.header import version_triple as header_triple

    return header_triple(text)


def tokens(line: str) -> list[Version]:
    """Every version named as a whole token in ``line``."""
    found = []
    for match in _TOKEN.finditer(line):
        v = parse_version(match.group(1))
        if v is not None:
            found.append(v)
    return found


def names(line: str, wanted: str | Version) -> bool:
    """Whether ``line`` names ``wanted`` as a whole token (as versions: '2.0' == '2.0.0')."""
    w = wanted if isinstance(wanted, Version) else parse_version(wanted)
    return w is not None and any(t == w for t in tokens(line))


def names_release(line: str, wanted: str) -> bool:
    """Whether ``line`` names a version with the release of ``wanted`` ('0.1.0' names '0.1.0rc1')."""
    want = release(wanted)
    return any(release(t) == want for t in tokens(line))


def names_in_range(line: str, wanted: str) -> bool:
    """Whether ``line`` names ``wanted`` as a token or inside a range ('reads 1.0-1.2' names 1.1)."""
    w = parse_version(wanted)
    if w is None:
        return False
    if names(line, w):
        return True
    for low, high in _RANGE.findall(line):
        lo, hi = parse_version(low), parse_version(high)
        if lo is not None and hi is not None and lo <= w <= hi:
            return True
    return False


def installed_version(distribution: str) -> str | None:
    """The version of ``distribution`` installed in this environment (its metadata's, e.g. '1.5.1+cpu'),
    None when it is not installed: the one lookup of an installed version in the suite, the scoreboard and
    the matrix."""
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
