"""``executorch-conformance new-backend NAME``: writes a complete backend package
built on the contract kit, ready to build, test and certify.

    executorch-conformance new-backend AcmeNpuBackend [--dir DIR]

NAME is the backend id (the BackendDetails class name stored in every .pte);
the Python package (acme_npu_backend) and the distribution (acme-npu-backend)
are derived from it. DIR (default: ./<distribution>) must not exist or be
empty. The package holds the Python AOT side, the C++ runtime with its CMake
build against the installed executorch wheel, the conformance descriptor, a
pyproject.toml (scikit-build-core), tests and a CI workflow that certifies the
backend with the suite's reusable workflow.

Exit codes
  new-backend: 0 written; 2 a bad NAME or DIR (one line saying what is wrong).

The template is the folder ``backend_kit/template`` of the contract kit: a
working backend package named TemplateBackend at rest, rendered by replacing
its names. A template engine (copier, cookiecutter: both on PyPI) was weighed
and not taken: (1) the template stays a real package that the kit's tests and
linters read as it is, where Jinja markup would make every .py, .cpp and .toml
of it unparsable until rendered; (2) rendering is four exact name
substitutions and a few version strings, which those tools would do with a
dependency tree (Jinja2, questionary, plumbum, ...) in the environment that
certifies; (3) the checks on NAME (identifier in both languages, no ExecuTorch
id, no importable package) must run before anything is written, with this
tool's one-line errors. What copier adds, updating a generated project from a
newer template, matters little here: what changes between kit releases is the
kit (the plumbing the template calls), not the template.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import importlib.util
import keyword
import re
from pathlib import Path

EXIT_OK, EXIT_USAGE = 0, 2

#: The names the template is written with, at rest.
TEMPLATE_ID = "TemplateBackend"
TEMPLATE_PACKAGE = "template_backend"
TEMPLATE_DISTRIBUTION = "template-backend"
TEMPLATE_MACRO = "TEMPLATE_BACKEND"
#: The executorch release the template is written for, at rest (pyproject.toml and the CI workflow).
TEMPLATE_EXECUTORCH = "1.5.1"
TEMPLATE_EXECUTORCH_REQUIREMENT = "executorch>=1.5,<1.6"
TEMPLATE_KIT_REQUIREMENT = "executorch-backend-kit>=0.1.6,<0.2"

#: The reusable workflow the generated CI calls, pinned by the commit of its last change
#: (tests/ci/test_generated_workflow.py holds the file at that commit to the one in this checkout).
WORKFLOW_REPOSITORY = "executorch-conformance/executorch-conformance"
WORKFLOW_COMMIT = "0445104d3b3ba5b25641cc733d6733ec3d7fe4ae"

_CPP_KEYWORD_TEXT = """
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch template
this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
while xor xor_eq
"""
#: C++ keywords and alternative tokens (C++23): a backend id is also a C++ name in the generated runtime.
CPP_KEYWORDS = frozenset(_CPP_KEYWORD_TEXT.split())

#: The longest backend id the contract header holds (docs/blob-header.md).
MAX_ID_BYTES = 255


class NewBackendError(ValueError):
    """NAME or DIR cannot be used; the message says why and what to do."""


@dataclasses.dataclass(frozen=True)
class Names:
    """The names a generated backend is written with."""

    backend_id: str  # AcmeNpuBackend: the BackendDetails class, the id in every .pte
    package: str  # acme_npu_backend: the Python package, the C++ and CMake names
    distribution: str  # acme-npu-backend: what pip installs
    macro: str  # ACME_NPU_BACKEND: environment variables

    @classmethod
    def of(cls, backend_id: str) -> Names:
        words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", backend_id)
        package = re.sub(r"_+", "_", words).lower()
        return cls(backend_id, package, package.replace("_", "-"), package.upper())


def _identifier_problem(what: str, name: str) -> str | None:
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        return (
            f"{what} {name!r} is not an identifier: use ASCII letters, digits and underscores, starting with a "
            "letter (it is a Python class name and a C++ string), for example AcmeNpuBackend"
        )
    if "__" in name:
        return f"{what} {name!r} contains '__', which C++ reserves for the implementation"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return f"{what} {name!r} is a Python keyword"
    if name in CPP_KEYWORDS:
        return f"{what} {name!r} is a C++ keyword"
    return None


def executorch_backend_ids() -> dict[str, str]:
    """The backend ids ExecuTorch itself defines: every ``class X(...BackendDetails...)`` in the
    installed executorch package's sources, by id -> the file that defines it. Read as text, not
    imported: importing every backend would need their optional dependencies."""
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        return {}
    found: dict[str, str] = {}
    pattern = re.compile(r"^\s*class\s+(\w+)\s*\([^)]*\bBackendDetails\b", re.MULTILINE)
    for root in spec.submodule_search_locations:
        for path in sorted(Path(root).rglob("*.py")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "BackendDetails" in text:
                for match in pattern.finditer(text):
                    found.setdefault(match.group(1), str(path.relative_to(Path(root).parent)))
    return found


def check_name(backend_id: str) -> Names:
    """The names for ``backend_id``; NewBackendError naming the problem otherwise."""
    problem = _identifier_problem("NAME", backend_id)
    if problem:
        raise NewBackendError(problem)
    if backend_id[0].islower():
        suggested = "".join(w[:1].upper() + w[1:] for w in backend_id.split("_"))
        suggested += "" if suggested.endswith("Backend") else "Backend"
        raise NewBackendError(
            f"NAME {backend_id!r} starts with a lower-case letter; it becomes the backend id every .pte names and "
            f"the class of your BackendDetails, so write it as a class name: {suggested}"
        )
    if len(backend_id.encode()) > MAX_ID_BYTES:
        raise NewBackendError(
            f"NAME is {len(backend_id)} characters; a backend id has at most {MAX_ID_BYTES}"
        )
    names = Names.of(backend_id)
    problem = _identifier_problem(f"the package name derived from {backend_id}", names.package)
    if problem:
        raise NewBackendError(f"{problem}; choose another NAME")
    if backend_id == TEMPLATE_ID:
        raise NewBackendError(f"{TEMPLATE_ID} is the template's own name; choose the name of your backend")
    taken = executorch_backend_ids()
    if backend_id in taken:
        raise NewBackendError(
            f"{backend_id} is the id of a backend of ExecuTorch itself ({taken[backend_id]}); a .pte names its "
            "backend by this id alone, so yours needs another one"
        )
    existing = importlib.util.find_spec(names.package)
    if existing is not None:
        where = (
            existing.origin or ", ".join(existing.submodule_search_locations or []) or "a namespace package"
        )
        raise NewBackendError(
            f"the package name {names.package} derived from {backend_id} is already importable here ({where}); "
            "choose another NAME"
        )
    return names


def check_dir(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise NewBackendError(f"{target} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()):
        raise NewBackendError(f"{target} exists and is not empty; give --dir a new or empty directory")


def _executorch_release() -> tuple[int, int, int]:
    from conformance.version_numbers import installed_version, version_triple

    text = installed_version("executorch")
    if text is None:
        raise NewBackendError(
            "executorch is not installed in this environment; the backend is generated for the installed "
            "release (pip install executorch)"
        )
    return version_triple(text)


def _kit_requirement() -> str:
    import backend_kit
    from conformance.version_numbers import version_triple

    major, minor, patch = version_triple(backend_kit.__version__)
    return f"executorch-backend-kit>={major}.{minor}.{patch},<{major}.{minor + 1}"


def substitutions(names: Names) -> list[tuple[str, str]]:
    """(template text, generated text), applied in this order."""
    major, minor, patch = _executorch_release()
    return [
        (TEMPLATE_EXECUTORCH_REQUIREMENT, f"executorch>={major}.{minor},<{major}.{minor + 1}"),
        (TEMPLATE_KIT_REQUIREMENT, _kit_requirement()),
        (f'"{TEMPLATE_EXECUTORCH}"', f'"{major}.{minor}.{patch}"'),
        (TEMPLATE_ID, names.backend_id),
        (TEMPLATE_PACKAGE, names.package),
        (TEMPLATE_DISTRIBUTION, names.distribution),
        (TEMPLATE_MACRO, names.macro),
    ]


def template_files(template: Path) -> list[Path]:
    """The template's files, relative to it (caches and build outputs left out)."""
    skip = {"__pycache__", "build", ".pytest_cache"}
    return sorted(
        p.relative_to(template)
        for p in template.rglob("*")
        if p.is_file() and not skip & set(p.relative_to(template).parts) and p.suffix != ".pyc"
    )


def render(template: Path, target: Path, names: Names) -> list[Path]:
    """Writes the template, with ``names``, into ``target``; returns the files written."""
    subs = substitutions(names)
    written = []
    for relative in template_files(template):
        text = (template / relative).read_text(encoding="utf-8")
        for old, new in subs:
            text = text.replace(old, new)
        path = target / Path(*(part.replace(TEMPLATE_PACKAGE, names.package) for part in relative.parts))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def build_requirements(package: Path) -> list[str]:
    """What an environment needs before ``pip install --no-build-isolation`` builds the written ``package``:
    its pyproject.toml's build requirements and its executorch requirement (the C++ runtime is built
    against the executorch installed there), in that order."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    from packaging.requirements import Requirement

    pyproject = tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))
    found = list(pyproject["build-system"]["requires"])
    found += [r for r in pyproject["project"]["dependencies"] if Requirement(r).name == "executorch"]
    return found


def _new_backend(args: argparse.Namespace) -> int:
    import backend_kit

    names = check_name(args.name)
    target = Path(args.dir) if args.dir else Path.cwd() / names.distribution
    check_dir(target)
    files = render(backend_kit.template_dir(), target, names)
    print(f"wrote {len(files)} files of {names.distribution} (backend id {names.backend_id}) to {target}")
    tools = " ".join(f'"{r}"' if set(r) & set("<>=,![") else r for r in build_requirements(target))
    print("next, in a virtual environment of this Python:")
    print(f"  cd {target}")
    print(f"  pip install {tools}")
    print('  pip install --no-build-isolation ".[test]" && pytest')
    print(f"  executorch-conformance run --backend {names.backend_id} --certify")
    return EXIT_OK


def add_subcommands(subparsers) -> None:
    """Adds the ``new-backend`` command to the executorch-conformance parser."""
    parser = subparsers.add_parser(
        "new-backend",
        help="write a new backend package built on the contract kit",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "name", help="the backend id, e.g. AcmeNpuBackend (the class name stored in each .pte)"
    )
    parser.add_argument("--dir", help="where to write the package (default: ./<distribution name>)")
    parser.set_defaults(func=_new_backend)
