"""What to say about a module that is not installed when a vendor's code imports it.

A backend's AOT package may import a module that no metadata declares (ExecuTorch 1.5.1's
``executorch.backends.openvino`` imports ``nncf`` for its quantizer, and neither executorch's
requirements nor its ``openvino`` extra name it): the user meets ``No module named 'nncf'`` with no
hint of where it came from. ``hint`` names the file that imported it, the installed distribution that
file belongs to, and whether that distribution declares a requirement of that name (in an extra, or not
at all), so the message says what to install and whom to tell.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import sys
import traceback
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def _owners() -> dict[str, importlib.metadata.Distribution]:
    """The real path of every file an installed distribution's RECORD lists -> that distribution."""
    found: dict[str, importlib.metadata.Distribution] = {}
    for dist in importlib.metadata.distributions():
        for file in dist.files or ():
            if str(file).endswith(".py"):
                found.setdefault(os.path.realpath(str(dist.locate_file(file))), dist)
    return found


def owner(path: str) -> importlib.metadata.Distribution | None:
    """The installed distribution whose files include ``path``, or None."""
    return _owners().get(os.path.realpath(path))


def _importer(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of ``exc``'s traceback outside Python's import machinery: the import statement."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<frozen importlib") and "importlib" not in Path(f.filename).parts[-2:-1]
    ]
    return frames[-1] if frames else None


def _declared(dist: importlib.metadata.Distribution, module: str) -> tuple[bool, list[str]]:
    """(whether ``dist`` requires a distribution named like ``module`` unconditionally, the extras that do)."""
    wanted = _canonical(module)
    unconditional, extras = False, []
    for text in dist.requires or ():
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if _canonical(req.name) != wanted:
            continue
        marker = str(req.marker or "")
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        if extra:
            extras.append(extra.group(1))
        else:
            unconditional = True
    return unconditional, extras


def _not_found(exc: BaseException) -> ModuleNotFoundError | None:
    """``exc`` or the exception it was raised from or while handling (a package that catches the
    ModuleNotFoundError and raises its own ImportError), if one is a ModuleNotFoundError naming a module."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ModuleNotFoundError) and current.name:
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def hint(exc: BaseException) -> str | None:
    """For an ImportError of a module that is not installed: which file imported it, the distribution that
    file belongs to and whether that distribution declares it; None for any other exception."""
    if not isinstance(exc, ImportError):
        return None
    exc = _not_found(exc)  # type: ignore[assignment]
    if exc is None:
        return None
    assert exc.name is not None  # _not_found returns only one that names its module
    missing = exc.name.split(".")[0]
    if missing in sys.stdlib_module_names:
        return None
    frame = _importer(exc)
    if frame is None:
        return None
    where = f"{frame.filename}:{frame.lineno}"
    dist = owner(frame.filename)
    if dist is None:
        return f"{where} imports {missing!r}, which is not installed (pip install {missing})"
    name, version = dist.metadata["Name"], dist.version
    unconditional, extras = _declared(dist, missing)
    if unconditional:
        return (
            f"{where} ({name} {version}) imports {missing!r}, which {name} requires but is not installed: "
            f"pip install {name}=={version} again to install its requirements"
        )
    if extras:
        spelled = ", ".join(f"{name}[{e}]" for e in extras)
        return (
            f"{where} ({name} {version}) imports {missing!r}, which {name} declares only in an extra: "
            f"pip install '{spelled}'"
        )
    return (
        f"{where} ({name} {version}) imports {missing!r}, which no requirement of {name} declares (an "
        f"undeclared dependency: its metadata does not say it needs it, in any extra): install it "
        f"yourself (pip install {missing}) and report it to {name}'s maintainers"
    )
