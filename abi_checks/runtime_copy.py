"""Does a library carry its own copy of ExecuTorch's runtime or backend registry?

ExecuTorch keeps registered backends in a table inside the library that defines
``register_backend`` / ``get_backend_class``; ``Program::load`` and ``Method::execute`` look
backends up in the table of the copy they were linked with. A library that *defines* these
(exported, or hidden after a static link) therefore holds a registry of its own:

- it defines the registry and ``Program``/``Method``: a whole runtime of its own
  (``OWN_RUNTIME``), as a wheel that ships a rebuilt ``_portable_lib`` does;
- it defines the registry only: a backend library that linked the runtime's core statically
  (``OWN_REGISTRY``); its backend registers into its private table.

Either way, backends registered in one table are invisible to programs loaded through the
other. The definitions are read from ``.dynsym`` (exported or not) and, when the file is not
stripped, ``.symtab``; a stripped library that hides a static copy shows only its RTTI strings,
which :func:`classify` reads as evidence (a ``BackendInterface`` subclass that imports no
``register_backend``).
"""

from __future__ import annotations

import dataclasses
import re

OWN_RUNTIME, OWN_REGISTRY = "carries its own runtime", "carries its own registry"

_NS = r"(?:executorch::\w+|torch::executor)"
REGISTRY = re.compile(rf"^{_NS}::(?:register_backend|get_backend_class)\(")
PROGRAM_METHOD = re.compile(rf"^{_NS}::(?:Program::load|Method::execute)\(")
BACKEND_INTERFACE_RTTI = ("executorch::runtime::BackendInterface", "torch::executor::BackendInterface")


@dataclasses.dataclass(frozen=True)
class RuntimeCopy:
    kind: str  # OWN_RUNTIME or OWN_REGISTRY
    evidence: str  # what in the binary says so
    hidden: bool  # the definitions are not exported (a static link with hidden visibility)


def classify(
    exported: list[str],
    hidden_definitions: list[str],
    imported: list[str],
    rtti: list[str],
) -> RuntimeCopy | None:
    """From demangled names: ``exported`` (defined in .dynsym with default/protected visibility),
    ``hidden_definitions`` (defined, but only in .symtab or with hidden visibility), ``imported``
    (undefined in .dynsym) and the RTTI class names. None when the library uses the shared registry."""
    for names, hidden in ((exported, False), (hidden_definitions, True)):
        registry = sorted({n.split("(")[0] for n in names if REGISTRY.match(n)})
        if not registry:
            continue
        program = sorted({n.split("(")[0] for n in names if PROGRAM_METHOD.match(n)})
        how = "hidden (static link)" if hidden else "exported"
        if program:
            return RuntimeCopy(OWN_RUNTIME, f"defines {', '.join(registry + program)} ({how})", hidden)
        return RuntimeCopy(OWN_REGISTRY, f"defines {', '.join(registry)} ({how})", hidden)
    imports_registry = any(REGISTRY.match(n) for n in imported)
    subclass = [r for r in rtti if r in BACKEND_INTERFACE_RTTI]
    if subclass and not imports_registry and not any(PROGRAM_METHOD.match(n) for n in imported):
        return RuntimeCopy(
            OWN_REGISTRY,
            f"carries the RTTI of {subclass[0]} (it implements a backend) but imports neither register_backend "
            "nor get_backend_class, and its symbol table is stripped: its registration was bound at link time "
            "to a registry inside it",
            True,
        )
    return None


def meaning(copy: RuntimeCopy, library: str, release: str, registry_library: str) -> str:
    """What a user of executorch ``release`` gets from this library, and what cannot be mixed."""
    if copy.kind == OWN_RUNTIME:
        return (
            f"{library} is an ExecuTorch runtime of its own: the backends it registers land in its own registry, "
            f"which only programs loaded through its own Program/Method see; executorch {release}'s runtime "
            f"(executorch.runtime, whose registry is in {registry_library}) never sees them, and the backends "
            f"registered there (XNNPACK and the others the wheel registers at import) are invisible to programs "
            f"this library loads. Programs, methods, EValues and tensors of one runtime cannot be handed to the "
            f"other in one process"
        )
    return (
        f"{library} registers its backends into a private copy of the registry linked into it, not into "
        f"executorch {release}'s ({registry_library}): executorch.runtime reports the backend as not registered "
        f"(error 0x20, NotFound) for every program delegated to it, although loading the library succeeded"
    )


def fix(copy: RuntimeCopy, release: str, registry_library: str) -> str:
    """What the vendor does about it."""
    if copy.kind == OWN_RUNTIME:
        return (
            f"ship the backend as a library that links executorch {release}'s shared runtime ({registry_library}: "
            f"target executorch::runtime of the wheel's CMake package, or the library itself before 1.5) and "
            f"registers into it; keep a runtime of your own only for a separate application, never loaded "
            f"next to executorch.runtime"
        )
    return (
        f"link executorch {release}'s shared runtime ({registry_library}) instead of a static copy of the "
        f"runtime's core: `nm -D --defined-only` must not list register_backend or get_backend_class"
    )
