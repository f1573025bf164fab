"""Loads a vendor's runtime library into the ExecuTorch Python runtime of
this process, after checking that it was built for the ExecuTorch there.

The library links ``libexecutorch.so`` of the executorch wheel. Opened with
RTLD_GLOBAL after ``executorch.runtime`` is imported, it binds to the
runtime already in the process, so the backend it registers (from a static
initializer or an explicit register function) lands in the registry that
``executorch.runtime.Runtime`` uses.

The check fails closed: a missing or unreadable ``build_info.json``, a
missing or unparsable version on either side, or another minor release is a
refusal (:class:`RuntimeLoadError`) naming both versions and the fix.
``executorch`` is imported only inside the functions that need it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import threading
from pathlib import Path

from packaging.version import InvalidVersion, Version

BUILD_INFO = "build_info.json"

_lock = threading.Lock()
_loaded: dict[str, ctypes.CDLL] = {}


class RuntimeLoadError(RuntimeError):
    """The runtime library is missing, does not fit the running executorch,
    or loaded without registering its backend."""


def build_info(library: str | Path) -> dict:
    """What ``library`` was built with: the ``build_info.json`` that
    ``backend_kit_add_backend()`` writes next to it."""
    path = Path(library).parent / BUILD_INFO
    try:
        info = json.loads(path.read_text())
    except FileNotFoundError:
        raise RuntimeLoadError(
            f"{path} is missing, so it is unknown which executorch {Path(library).name} was built for; "
            "refusing to load it. Fix: rebuild and reinstall the backend package in this environment."
        ) from None
    except (OSError, ValueError) as exc:
        raise RuntimeLoadError(
            f"{path} cannot be read ({exc}); refusing to load {Path(library).name}. "
            "Fix: rebuild and reinstall the backend package."
        ) from None
    if not isinstance(info, dict):
        raise RuntimeLoadError(f"{path} is not a JSON object; refusing to load {Path(library).name}")
    return info


def running_executorch_version() -> str:
    """The version of the executorch package imported in this process."""
    from executorch.version import __version__

    return __version__


def check_executorch_match(
    built: object, running: object, *, distribution: str = "the backend", fix: str | None = None
) -> None:
    """Refuses a library built for another ExecuTorch minor release, or one
    whose versions cannot be read.

    The C++ ABI is not promised stable across minor releases
    (docs/version-policy.md); within a minor it was measured compatible.
    ``fix`` is the command or action to name; by default, reinstalling
    ``distribution`` in this environment.
    """
    fix = fix or f"reinstall {distribution} in this environment, built against executorch {running}"

    def parse(text: object) -> Version | None:
        try:
            return Version(str(text)) if isinstance(text, str) and text else None
        except InvalidVersion:
            return None

    b, r = parse(built), parse(running)
    if b is None or r is None:
        raise RuntimeLoadError(
            f"{distribution}'s runtime library says it was built against executorch {built!r} and this process "
            f"runs executorch {running!r}; one of them is not a readable version, so the pairing cannot be "
            f"checked and the library is not loaded. Fix: {fix}."
        )
    if b.release[:2] != r.release[:2]:
        raise RuntimeLoadError(
            f"{distribution}'s runtime library was built against executorch {built}, but this process runs "
            f"executorch {running}; a backend library must be built for the same executorch minor release. "
            f"Fix: {fix}."
        )


def registered_backends() -> list[str]:
    """The backend ids registered in this process's ExecuTorch runtime."""
    from executorch.runtime import Runtime

    return list(Runtime.get().backend_registry.registered_backend_names)


def confirm_registered(backend_id: str, library: str | Path = "the runtime library") -> None:
    """Raises RuntimeLoadError unless ``backend_id`` is in the registry."""
    names = registered_backends()
    if backend_id not in names:
        raise RuntimeLoadError(
            f"{library} loaded but {backend_id} is not registered; registered backends: {names}"
        )


def load_runtime(
    library: str | Path,
    backend_id: str | None,
    *,
    distribution: str = "the backend",
    fix: str | None = None,
    register: str | None = None,
) -> ctypes.CDLL:
    """Loads ``library`` once per path and checks that ``backend_id`` registered.

    Checks ``build_info.json`` against the running executorch first
    (:func:`check_executorch_match`). ``register`` names an exported
    ``int f(void)`` to call after loading (0 means registered), for
    libraries that do not register from a static initializer, or that want
    the registration's error code reported. ``backend_id`` None: a library
    that registers later, when asked (the simulator bridge). Raises
    RuntimeLoadError with the reason and the fix.
    """
    path = Path(library)
    key = str(path.resolve()) if path.exists() else str(path)
    with _lock:
        if key in _loaded:
            return _loaded[key]
        import executorch.runtime  # noqa: F401  (the runtime must be in the process first)

        if not path.exists():
            raise RuntimeLoadError(
                f"runtime library {path} does not exist. Fix: {fix or f'reinstall {distribution}'}."
            )
        info = build_info(path)
        check_executorch_match(
            info.get("executorch_version"), running_executorch_version(), distribution=distribution, fix=fix
        )
        try:
            lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            raise RuntimeLoadError(f"cannot load {path}: {exc}") from None
        code = 0
        if register is not None:
            fn = getattr(lib, register)
            fn.restype = ctypes.c_int
            fn.argtypes = []
            code = fn()
        names = registered_backends()
        if code != 0 or (backend_id is not None and backend_id not in names):
            raise RuntimeLoadError(
                f"{path} loaded but {backend_id} is not registered (error 0x{code:x}); registered backends: {names}"
            )
        _loaded[key] = lib
        return lib


@dataclasses.dataclass(frozen=True)
class RuntimeLibrary:
    """A backend's runtime library as its Python package ships it: where it is
    and how it is loaded, so that the package's ``load_runtime`` and the
    descriptor's ``runtime_libraries`` are the two methods of one object::

        RUNTIME = RuntimeLibrary("MyBackend", Path(__file__).parent / "lib" / "libmy_backend_runtime.so",
                                 distribution="my-backend")
        load_runtime = RUNTIME.load

    backend_id:    the id the library registers.
    path:          where the package installs it (``backend_kit_add_backend()``
                   installs into ``<package>/lib``).
    distribution:  the vendor's distribution name, named in refusals.
    fix:           what to do about a library that does not fit (default:
                   reinstall ``distribution``).
    register:      an exported ``int f(void)`` to call after loading, for a
                   library that does not register from a static initializer.
    override_env:  an environment variable that, when set, names another build
                   of the library to load instead (a sanitizer build, say).
    """

    backend_id: str
    path: Path
    distribution: str = "the backend"
    fix: str | None = None
    register: str | None = None
    override_env: str | None = None

    def location(self) -> Path:
        """The library that :meth:`load` opens: ``$override_env`` if set, else ``path``."""
        override = os.environ.get(self.override_env) if self.override_env else None
        return Path(override) if override else Path(self.path)

    def libraries(self) -> list[Path]:
        """The runtime libraries, for ``BackendDescriptor.runtime_libraries``."""
        return [self.location()]

    def load(self, path: str | Path | None = None) -> ctypes.CDLL:
        """:func:`load_runtime` of ``path`` (default :meth:`location`) with this backend's id and names."""
        return load_runtime(
            path or self.location(),
            self.backend_id,
            distribution=self.distribution,
            fix=self.fix,
            register=self.register,
        )
