"""The descriptor as the process that judges sees it: plain data read in the vendor process.

The vendor's descriptor module is vendor code: importing it may hang, crash, exit, print, or change
the suite's own modules (replace the verdict function, say). So the process that judges never imports
it. ``describe`` loads it in a vendor process (``vendor_worker.describe``), under a timeout, and gets
back JSON text; ``from_info`` rebuilds a ``BackendDescriptor`` from that text alone, in which every
callable of the vendor's is a stand-in that refuses to run (the checks reach the vendor's code only
through the Context, in the vendor process). The runtime libraries the descriptor names are read in the
vendor process too and kept as data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.descriptor import (
    BackendDescriptor,
    CompositionSupport,
    DescriptorError,
    DynamicShapesSupport,
    NamedDataSupport,
    QuantizedSupport,
    RecordedError,
    SampleModel,
)
from conformance.outcomes import CheckFailed
from conformance.vendor_process import VendorProcess


def _in_vendor_process(what: str):
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError(f"{what} is the vendor's code: it runs only in the vendor process (a suite bug)")

    return refuse


def _listing(found: dict[str, Any], which: str = "runtime_libraries"):
    def runtime_libraries() -> list[Path]:
        if found["error"]:
            raise RecordedError(found["error"].removeprefix(f"{which}() raised "))
        return [Path(p) for p in found["libraries"]]

    return runtime_libraries


def from_info(text: str) -> BackendDescriptor:
    """The descriptor rebuilt from ``vendor_worker.describe``'s JSON text."""
    from conformance.operators.support import OperatorDeclaration, OperatorSupport

    info = json.loads(text)
    samples = tuple(
        SampleModel(
            m["name"],
            _in_vendor_process(f"make() of sample model {m['name']!r}"),
            rtol=m["rtol"],
            atol=m["atol"],
            delegated=m["delegated"],
            make_inputs=_in_vendor_process("make_inputs()") if m["make_inputs"] else None,
        )
        for m in info["sample_models"]
    )
    nd = info["named_data"]
    qn = info["quantized"]
    dyn = info["dynamic_shapes"]
    cmp = info["composition"]
    return BackendDescriptor(
        backend_id=info["backend_id"],
        distribution=info["distribution"],
        python_package=info["python_package"],
        version=info["version"],
        make_partitioners=_in_vendor_process("make_partitioners()"),
        supported_ops=frozenset(info["supported_ops"]),
        sample_models=samples,
        load_runtime=_in_vendor_process("load_runtime()") if info["load_runtime"] else None,
        runtime_libraries=_listing(info["runtime_libraries"]),
        registered_at_import=info.get("registered_at_import", False),
        engine_libraries=_listing(
            info.get("engine_libraries") or {"libraries": [], "error": None}, "engine_libraries"
        ),
        named_data=nd
        and NamedDataSupport(
            nd["sample"],
            _in_vendor_process("named_data.make_partitioners()"),
            nd["max_blob_bytes"],
            _in_vendor_process("named_data.required_keys()") if nd["required_keys"] else None,
        ),
        quantized=qn
        and QuantizedSupport(qn["sample"], _in_vendor_process("quantized.make_quantizer()"), qn["max_steps"]),
        dynamic_shapes=dyn
        and DynamicShapesSupport(dyn["sample"], _in_vendor_process("dynamic_shapes.dynamic_shapes()")),
        composition=cmp and CompositionSupport(cmp["sample"]),
        operators=OperatorSupport(
            {
                op: OperatorDeclaration(
                    tuple(d["dtypes"]),
                    d["dynamic"],
                    tuple(d["without"]),
                    d["reason"],
                    tuple(tuple(t) for t in d.get("tolerances", ())),
                    tuple(tuple(t) for t in d.get("computes_in", ())),
                )
                for op, d in info["operators"].items()
            }
        ),
    )


def describe(spec: str, vendor: VendorProcess, timeout: float) -> tuple[BackendDescriptor, str]:
    """(the descriptor, its JSON text), read in ``vendor``; DescriptorError (one line) if the descriptor
    cannot be loaded there, whatever its module did (raised, crashed, exited, hung)."""
    try:
        answer = vendor.call("describe", what=f"loading the descriptor {spec!r}", timeout=timeout)
    except CheckFailed as exc:
        raise DescriptorError(f"loading backend {spec!r} in the vendor process failed: {exc}") from None
    if "error" in answer:
        raise DescriptorError(answer["error"])
    return from_info(answer["info"]), answer["info"]


#: A vendor process the CLI already started and described the backend with, for the run in this process.
_prepared: dict[str, tuple[BackendDescriptor, str, VendorProcess]] = {}


def prepare(spec: str, log_path: Path, timeout: float) -> BackendDescriptor:
    """Describes ``spec`` in a new vendor process kept for the run that follows in this process (the
    CLI's ``pytest.main``), so that the backend's module is imported once; DescriptorError if it fails."""
    vendor = VendorProcess(spec, None, log_path)
    try:
        descriptor, text = describe(spec, vendor, timeout)
    except BaseException:
        vendor.close()
        raise
    _prepared[spec] = (descriptor, text, vendor)
    return descriptor


def take_prepared(spec: str) -> tuple[BackendDescriptor, str, VendorProcess] | None:
    """What ``prepare`` made for ``spec``, once."""
    return _prepared.pop(spec, None)


def discard_prepared() -> None:
    """Stops the vendor processes of ``prepare`` that no run took."""
    while _prepared:
        _spec, (_d, _t, vendor) = _prepared.popitem()
        vendor.close()
