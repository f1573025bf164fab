"""The suite's import structure: no module of conformance/ imports itself back
through others (every import, including those inside functions), the outcomes
module is the bottom, and no check module imports another."""

from __future__ import annotations

import grimp
import networkx as nx


def _graph(package: str = "conformance") -> nx.DiGraph:
    imports = grimp.build_graph(package, include_external_packages=False)
    graph = nx.DiGraph()
    for module in imports.modules:
        graph.add_node(module)
        for imported in imports.find_modules_directly_imported_by(module):
            graph.add_edge(module, imported)
    return graph


def test_conformance_has_no_import_cycle():
    graph = _graph()
    cycles = list(nx.simple_cycles(graph))
    # A package importing its own submodules is how packages work; cycles through them are not.
    cycles = [
        c
        for c in cycles
        if not (len(c) == 2 and (c[0].startswith(c[1] + ".") or c[1].startswith(c[0] + ".")))
    ]
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles)


def test_matrix_has_no_import_cycle():
    """The release matrix's modules (runner, grid, renderers) import one another one way only."""
    graph = _graph("matrix")
    cycles = [
        c
        for c in nx.simple_cycles(graph)
        if len(c) > 1 and not (len(c) == 2 and (c[0].startswith(c[1] + ".") or c[1].startswith(c[0] + ".")))
    ]
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles)


def test_outcomes_is_the_bottom_and_checks_do_not_import_each_other():
    graph = _graph()
    assert list(graph.successors("conformance.outcomes")) == []
    checks = [m for m in graph if m.startswith("conformance.checks.")]
    for module in checks:
        others = [m for m in graph.successors(module) if m.startswith("conformance.checks")]
        assert others == [], f"{module} imports {others}"
