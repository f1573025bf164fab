"""Vendor-process task of ``executorch-conformance reproduce`` (``task_registry.WRITE_REPRODUCER``).

``write_reproducer`` makes one corpus case, exports it, and writes into the directory the command gave:
``case.pt2`` (``torch.export.save``), ``inputs.pt`` and ``partitioners.pkl`` (the descriptor's partitioners,
pickled: the reproducer lowers with the very objects the suite lowered with). It returns what the script
needs besides: the case's tolerance (the corpus's, widened as the descriptor declares), its title, the
backend's distribution and the runtime libraries to load (none when the runtime registers with
``executorch.runtime``). Raises VendorError naming what cannot be written.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from conformance.vendor.envelope import VendorError, step, vendor_call


def write_reproducer(key: str, out_dir: str) -> dict[str, Any]:
    import torch

    from conformance.operators.corpus import case as corpus_case
    from conformance.operators.runner import tolerance_for
    from conformance.operators.tasks import corpus_tolerance
    from conformance.vendor.bootstrap import descriptor
    from conformance.vendor.core_tasks import named, partitioners, runtime_libraries

    try:
        c = corpus_case(key)
    except (KeyError, ValueError):
        raise VendorError(f"the suite's corpus has no case {key!r}") from None
    step(f"making {c.describe()}")
    module, inputs = c.make()
    with torch.no_grad():
        first = module(*inputs)
    expected = list(first) if isinstance(first, (tuple, list)) else [first]
    rtol, atol, magnitude = corpus_tolerance(c, module, inputs, expected)
    if c.op in descriptor().operators:
        rtol, atol, _ = tolerance_for(
            descriptor().operators[c.op], c, {"rtol": rtol, "atol": atol, "magnitude": magnitude}
        )
    dynamic = c.dynamic_shapes("case")
    step(f"torch.export.export of {c.describe()}")
    exported = torch.export.export(
        module,
        tuple(inputs),
        dynamic_shapes=(tuple(dynamic),) if any(d is not None for d in dynamic) else None,
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.export.save(exported, str(out / "case.pt2"))
    torch.save(list(inputs), out / "inputs.pt")
    made = partitioners("default")
    try:
        data = pickle.dumps(made)
    except Exception:  # noqa: BLE001  (the vendor's objects: whatever pickling them raises)
        # cloudpickle pickles what pickle cannot (XnnpackPartitioner holds a mappingproxy); the reproducer then
        # needs cloudpickle to read it, and says so
        import cloudpickle

        try:
            data = cloudpickle.dumps(made)
        except Exception as exc:  # noqa: BLE001
            raise VendorError(
                f"the partitioners of make_partitioners() cannot be pickled ({type(exc).__name__}: {exc}); the "
                "reproducer lowers with them: make them picklable (no open handles or locks as attributes)"
            ) from None
    (out / "partitioners.pkl").write_bytes(data)
    d = descriptor()
    libraries = runtime_libraries()["libraries"] if d.load_runtime is not None else []
    simulated = d.load_runtime is None and d.simulator is not None
    vendor_call("reading the partitioners back", pickle.loads, (out / "partitioners.pkl").read_bytes())
    return {
        "title": f"{c.describe()} on {d.backend_id} {d.version}",
        "rtol": rtol,
        "atol": atol,
        "distribution": d.distribution,
        "libraries": [str(Path(p).resolve()) for p in libraries],
        "backend_id": d.backend_id,
        # the delegates run in the backend's simulator (docs/contract.md, "Simulated runtimes")
        "simulator": named(d.simulator) if simulated else None,
    }
