"""Every task the vendor process runs, by name: the one list the parent, the
vendor process and the targets share.

The parent addresses a task by its name (``Context.call("execute", ...)``); the
vendor process runs only the tasks named here (``conformance.vendor.bootstrap``
imports the function at ``location`` when the task is first called), and a
target's runner serves those marked ``on_target`` (``conformance.targets.runtime``).
A name that is not here is a defect of the suite, refused in the vendor process
with a message naming it. This module imports nothing of the suite: both sides
of the boundary read it.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Task:
    """One vendor-process task: its name, where its function lives ('module:function', following the
    contract of ``conformance.vendor.envelope``), and whether a target's runner serves it instead."""

    name: str
    location: str
    on_target: bool = False


_BUILT_IN = "conformance.vendor.core_tasks"

PING = "ping"
DESCRIBE = "describe"
REQUIRED_KEYS = "required_keys"
SAMPLE = "sample"
FRESH_CASES = "fresh_cases"
DESCRIBE_PARTITIONERS = "describe_partitioners"
LOWER = "lower"
LOAD_RUNTIME = "load_runtime"
TRY_LOAD = "try_load"
EXECUTE = "execute"
EXECUTE_REPEATEDLY = "execute_repeatedly"
RUNTIME_LIBRARIES = "runtime_libraries"
EXECUTORCH_VERSION = "executorch_version"
RUNTIME_TAKES_DATA_PATH = "runtime_takes_data_path"
QUANTIZED_FLOW = "quantized_flow"
DYNAMIC_FLOW = "dynamic_flow"
COMPOSITION_FLOW = "composition_flow"
LOWER_OPERATOR_BATCH = "lower_operator_batch"
LOWER_MODEL = "lower_model"
LOWER_LLM = "lower_llm"
RUN_LLM = "run_llm"
STATE_FLOW = "state_flow"
INPUTS_FLOW = "inputs_flow"
MEMORY_GROWTH = "memory_growth"
METHOD_FLOW = "method_flow"
RUN_METHODS = "run_methods"
LOWERING_FINGERPRINT = "lowering_fingerprint"
INCOMPATIBLE_BLOBS = "incompatible_blobs"
CONCURRENT_METHODS = "concurrent_methods"
LARGE_WEIGHTS = "large_weights"
WRITE_REPRODUCER = "write_reproducer"

#: name -> Task, for every task the vendor process runs.
TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task(PING, f"{_BUILT_IN}:ping"),
        Task(DESCRIBE, f"{_BUILT_IN}:describe"),
        Task(REQUIRED_KEYS, f"{_BUILT_IN}:required_keys"),
        Task(SAMPLE, f"{_BUILT_IN}:sample"),
        Task(FRESH_CASES, f"{_BUILT_IN}:fresh_cases"),
        Task(DESCRIBE_PARTITIONERS, f"{_BUILT_IN}:describe_partitioners"),
        Task(LOWER, f"{_BUILT_IN}:lower"),
        Task(LOAD_RUNTIME, f"{_BUILT_IN}:load_runtime", on_target=True),
        Task(TRY_LOAD, f"{_BUILT_IN}:try_load", on_target=True),
        Task(EXECUTE, f"{_BUILT_IN}:execute", on_target=True),
        Task(EXECUTE_REPEATEDLY, f"{_BUILT_IN}:execute_repeatedly", on_target=True),
        Task(RUNTIME_LIBRARIES, f"{_BUILT_IN}:runtime_libraries"),
        Task(EXECUTORCH_VERSION, f"{_BUILT_IN}:executorch_version"),
        Task(RUNTIME_TAKES_DATA_PATH, f"{_BUILT_IN}:runtime_takes_data_path"),
        Task(QUANTIZED_FLOW, "conformance.vendor.capability_tasks:quantized_flow"),
        Task(DYNAMIC_FLOW, "conformance.vendor.capability_tasks:dynamic_flow"),
        Task(COMPOSITION_FLOW, "conformance.vendor.capability_tasks:composition_flow"),
        Task(LOWER_OPERATOR_BATCH, "conformance.operators.tasks:lower_batch"),
        Task(LOWER_MODEL, "conformance.models.tasks:lower_model"),
        Task(LOWER_LLM, "conformance.models.llm_tasks:lower_llm"),
        Task(RUN_LLM, "conformance.models.llm_tasks:run_llm", on_target=True),
        Task(STATE_FLOW, "conformance.vendor.state_tasks:state_flow"),
        Task(INPUTS_FLOW, "conformance.vendor.input_tasks:inputs_flow"),
        Task(INCOMPATIBLE_BLOBS, "conformance.vendor.forge_tasks:incompatible_blobs"),
        # the vendor process's own counts: a target's runner reports no allocator figures
        Task(MEMORY_GROWTH, "conformance.vendor.memory_tasks:memory_growth"),
        Task(METHOD_FLOW, "conformance.vendor.method_tasks:method_flow"),
        Task(LARGE_WEIGHTS, "conformance.vendor.large_weights_tasks:large_weights_flow"),
        # the vendor process's runtime only: the runner on a target executes only `forward`
        Task(RUN_METHODS, "conformance.vendor.method_tasks:run_methods", on_target=True),
        # what the lowering cache's keys hold of the vendor's environment (conformance.vendor.lowering_cache)
        Task(LOWERING_FINGERPRINT, "conformance.vendor.lowering_fingerprint:lowering_fingerprint"),
        # threads of the runner library in the vendor process, or of the runner on a target
        Task(CONCURRENT_METHODS, "conformance.vendor.concurrency_tasks:concurrent_methods", on_target=True),
        # a standalone reproducer of one operator case (executorch-conformance reproduce)
        Task(WRITE_REPRODUCER, "conformance.reproduce.reproduce_tasks:write_reproducer"),
    )
}

#: The tasks a target's runner serves (the runtime's); every other task stays in the vendor process.
TARGET_TASKS = frozenset(t.name for t in TASKS.values() if t.on_target)


class UnknownTask(LookupError):
    """A task name that is not in ``TASKS`` (a defect of the suite)."""


def task(name: str) -> Task:
    """The task called ``name``; UnknownTask naming it and the known ones otherwise."""
    try:
        return TASKS[name]
    except (KeyError, TypeError):
        raise UnknownTask(
            f"no vendor-process task is called {name!r} (a defect of the suite); the tasks are: "
            + ", ".join(TASKS)
        ) from None
