"""The vendor-process tasks are named in one place (conformance/vendor/task_registry.py): every entry resolves
to a function, the targets serve exactly the tasks marked for them, and no module addresses a task by
its 'module:function' location instead of its registered name."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import conformance
from conformance.targets import runtime as target_runtime
from conformance.vendor import task_registry

PACKAGE = Path(conformance.__file__).parent
LOCATION = re.compile(r"^conformance(\.\w+)+:\w+$")


@pytest.mark.parametrize("name", sorted(task_registry.TASKS))
def test_each_registered_task_is_a_function(name):
    task = task_registry.task(name)
    module, _, function = task.location.partition(":")
    found = getattr(importlib.import_module(module), function, None)
    assert callable(found), f"{name}: {task.location} is not a function"


def test_targets_serve_the_tasks_marked_on_target():
    assert target_runtime.TASKS == task_registry.TARGET_TASKS
    served = {
        n for n in task_registry.TARGET_TASKS if hasattr(target_runtime.TargetRuntime, f"_bundle_{n}")
    } | {task_registry.LOAD_RUNTIME}
    assert served == task_registry.TARGET_TASKS


def test_an_unknown_task_is_refused_by_name():
    with pytest.raises(
        task_registry.UnknownTask, match=r"no vendor-process task is called 'lower_evrything'"
    ):
        task_registry.task("lower_evrything")


def test_no_module_addresses_a_task_by_its_location():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "task_registry.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and LOCATION.match(node.value):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value}")
    assert found == [], "tasks addressed by location, not by their task_registry name: " + "; ".join(found)
