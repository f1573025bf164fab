"""The layer rules between the suite's subpackages, as their package docstrings state them, enforced on
every import (those inside functions included, found by grimp). A rule is a subpackage and what it may
import (``MAY_IMPORT_ONLY``) or must never import (``NEVER_IMPORTS``); the few modules that cross a rule
on purpose are listed with the reason (``CROSSINGS``). A new import that breaks a rule fails here, naming
the importing module: move the code to the layer it belongs to, or state the crossing and its reason."""

from __future__ import annotations

import grimp
import pytest

#: subpackage -> the parts of conformance it may import besides its own modules
MAY_IMPORT_ONLY: dict[str, tuple[str, ...]] = {
    # the vendor-process boundary (conformance/vendor/__init__.py): the checks, the run, inspection and
    # certification sit above it
    "conformance.vendor": (
        "conformance.outcomes",
        "conformance.descriptor",
        "conformance.descriptor_fields",
        "conformance.deprecations",
        "conformance.judge",
        "conformance.fx_names",
        "conformance.large_weights",
        "conformance.byte_sizes",
    ),
    # the judging process's isolated start (conformance/judge/__init__.py): everything may import it
    "conformance.judge": (),
    # executorch-free reading of .pte files (conformance/pte/__init__.py)
    "conformance.pte": ("conformance.input_files",),
    # the typed report, its verdict and its hash (conformance/report/__init__.py)
    "conformance.report": (
        "conformance.outcomes",
        "conformance.profiles",
        "conformance.registry",
        "conformance.version",
        "conformance.version_numbers",
        "conformance.input_files",
        "conformance.descriptor",
        "conformance.judge",
        "conformance.vendor.interpreter",
    ),
}
#: subpackage -> the parts of conformance it must never import
NEVER_IMPORTS: dict[str, tuple[str, ...]] = {
    "conformance.results": ("conformance.run", "conformance.vendor", "conformance.plugin", "conformance.cli"),
    "conformance.certification": ("conformance.results", "conformance.run", "conformance.plugin"),
    "conformance.inspection": ("conformance.checks", "conformance.compat"),
    "conformance.checks": (
        "conformance.run",
        "conformance.plugin",
        "conformance.cli",
        "conformance.certification",
    ),
    "conformance.operators": (
        "conformance.run",
        "conformance.plugin",
        "conformance.cli",
        "conformance.checks",
    ),
    "conformance.models": ("conformance.run", "conformance.plugin", "conformance.cli", "conformance.checks"),
}
#: (importing module, imported module) -> why this import crosses a rule above on purpose
CROSSINGS: dict[tuple[str, str], str] = {
    ("conformance.judge.start", "conformance.cli"): "the judging process's start hands over to the CLI",
    ("conformance.judge.environment", "conformance.vendor.interpreter"): (
        "the import path handed to the vendor process is that of run --vendor-python"
    ),
    ("conformance.vendor.concurrency_tasks", "conformance.targets.bundle"): (
        "RT-10 runs a program's entries as the C++ runner's bundle describes them"
    ),
    ("conformance.vendor.concurrency_tasks", "conformance.targets.concurrent_entry"): (
        "the entry a concurrent run starts is one format for the host and the target"
    ),
    ("conformance.vendor.in_process_runner", "conformance.device_runner"): (
        "the vendor process builds the runner's sources the package ships"
    ),
    ("conformance.certification.certification_cli", "conformance.results.summary_text"): (
        "verify prints the results table the run printed"
    ),
    ("conformance.certification.certification_cli", "conformance.run.run_command"): (
        "verify --rerun starts the run command, spelled once"
    ),
    ("conformance.certification.rerun", "conformance.run.run_command"): (
        "verify --rerun starts the run command, spelled once"
    ),
}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("conformance", include_external_packages=False)


def _within(module: str, part: str) -> bool:
    return module == part or module.startswith(part + ".")


def _imports_of(graph: grimp.ImportGraph, package: str) -> list[tuple[str, str]]:
    members = [m for m in graph.modules if _within(m, package)]
    return sorted(
        (m, i)
        for m in members
        for i in graph.find_modules_directly_imported_by(m)
        if (m, i) not in CROSSINGS and i != "conformance"
    )


@pytest.mark.parametrize("package", sorted(MAY_IMPORT_ONLY))
def test_a_low_subpackage_imports_only_what_it_may(graph, package):
    allowed = (package, *MAY_IMPORT_ONLY[package])
    wrong = [
        f"{m} imports {i}" for m, i in _imports_of(graph, package) if not any(_within(i, a) for a in allowed)
    ]
    assert wrong == [], f"{package} may import only {', '.join(MAY_IMPORT_ONLY[package]) or 'itself'}: " + (
        "; ".join(wrong)
    )


@pytest.mark.parametrize("package", sorted(NEVER_IMPORTS))
def test_a_subpackage_never_imports_what_sits_above_it(graph, package):
    wrong = [
        f"{m} imports {i}"
        for m, i in _imports_of(graph, package)
        if any(_within(i, f) for f in NEVER_IMPORTS[package])
    ]
    assert wrong == [], "; ".join(wrong)


def test_every_crossing_is_still_an_import(graph):
    """A crossing listed here that the code no longer makes is removed from the list."""
    gone = [f"{m} -> {i}" for m, i in CROSSINGS if i not in graph.find_modules_directly_imported_by(m)]
    assert gone == []
