"""Which pytest plugins a certify run refuses: code that is neither pytest's, the suite's nor
pytest-xdist's runs in the process that judges, so a certify run under plain pytest names each such plugin
and stops (``executorch-conformance run --certify`` loads only the suite's)."""

from __future__ import annotations

import types

import pytest

#: Where the plugins a certify run may load come from: pytest itself, the suite, pytest-xdist.
OWN_PLUGIN_MODULES = ("_pytest.", "conformance.", "xdist.", "__channelexec__")


def foreign_plugins(config: pytest.Config) -> list[str]:
    """The plugins pytest loaded that are neither pytest's own nor the suite's (an installed package's
    ``pytest11`` entry point, a ``conftest.py``, ``-p something``), each as 'module (distribution version)'
    where an installed distribution provides it."""
    dists = {
        id(plugin): f"{dist.metadata['Name']} {dist.version}"
        for plugin, dist in config.pluginmanager.list_plugin_distinfo()
    }
    found = []
    for _name, plugin in config.pluginmanager.list_name_plugin():
        if plugin is None:  # blocked with -p no:NAME
            continue
        module = plugin.__name__ if isinstance(plugin, types.ModuleType) else type(plugin).__module__
        if not f"{module}.".startswith(OWN_PLUGIN_MODULES):
            found.append(f"{module} ({dists[id(plugin)]})" if id(plugin) in dists else module)
    return sorted(set(found))


def refuse_foreign_plugins(config: pytest.Config) -> None:
    """pytest.UsageError naming the foreign plugins of a certify run (on the controller; a worker's
    plugins are the controller's)."""
    foreign = [] if hasattr(config, "workerinput") else foreign_plugins(config)
    if foreign:
        raise pytest.UsageError(
            "--et-certify: pytest loaded plugins that are not the suite's own, and their code runs in the "
            f"process that judges: {', '.join(foreign)}. Certify with 'executorch-conformance run --certify' "
            "(it loads only the suite's plugins), or set PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 and pass "
            "-p conformance.plugin --noconftest"
        )
