"""The text of a reproducer's ``reproduce.py`` (``conformance.reproduce``): standalone, no suite import."""

from __future__ import annotations

import json

_TEMPLATE = '''#!/usr/bin/env python3
"""Reproduces {title}.

Made by `executorch-conformance reproduce` from {report}. Needs torch, executorch and the backend's
package ({distribution}) in this environment, nothing of the conformance suite. Lowers case.pt2 with the
backend's partitioners (partitioners.pkl), runs it in ExecuTorch's runtime (with SIMULATOR set, the
backend's delegates computed by its simulator, registered through the contract kit's simulator bridge) and
compares with eager PyTorch within rtol={rtol!r}, atol={atol!r} (NaN matches NaN). Exit status: 1 while the
result differs or the program fails, 0 once it matches, 2 when the reproducer cannot run here.
"""

import ctypes
import pickle
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: the backend's runtime libraries, loaded before the program (empty: registered with executorch.runtime)
RUNTIME_LIBRARIES = {libraries}
#: the backend's simulator ('module:qualname') that computes its delegates, or None (a runtime library)
SIMULATOR = {simulator}
BACKEND_ID = {backend_id}


def main() -> int:
    try:
        import torch
        from executorch.exir import to_edge_transform_and_lower
        from executorch.runtime import Runtime

        try:  # the kernels of quantize/dequantize, for quantized cases that keep them on CPU
            import executorch.kernels.quantized  # noqa: F401
        except ImportError:
            pass
        for library in RUNTIME_LIBRARIES:
            ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)
        if SIMULATOR:
            import importlib

            from backend_kit.simulator import register

            module, _, name = SIMULATOR.partition(":")
            simulator = importlib.import_module(module)
            for part in name.split("."):
                simulator = getattr(simulator, part)
            register(BACKEND_ID, simulator)
        program = torch.export.load(str(HERE / "case.pt2"))
        inputs = torch.load(HERE / "inputs.pt", weights_only=True)
        with open(HERE / "partitioners.pkl", "rb") as f:
            partitioners = pickle.load(f)
    except ModuleNotFoundError as exc:
        print(f"cannot run the reproducer here: {{exc}} (the backend's package, or cloudpickle for partitioners "
              "that plain pickle cannot hold: pip install cloudpickle)", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001
        print(f"cannot run the reproducer here: {{type(exc).__name__}}: {{exc}}", file=sys.stderr)
        return 2
    with torch.no_grad():
        expected = program.module()(*inputs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    try:
        lowered = to_edge_transform_and_lower(program, partitioner=partitioners).to_executorch()
        delegated = [n for n in lowered.exported_program().graph.nodes if "call_delegate" in str(n.target)]
        print(f"lowered: {{len(delegated)}} delegate call(s)")
        method = Runtime.get().load_program(lowered.buffer).load_method("forward")
        actual = list(method.execute(list(inputs)))
    except Exception as exc:  # noqa: BLE001
        print(f"FAILS: {{type(exc).__name__}}: {{exc}}")
        return 1
    failed = False
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a.shape != e.shape or a.dtype != e.dtype:
            print(f"output {{i}}: shape/dtype {{tuple(a.shape)}} {{a.dtype}}, eager {{tuple(e.shape)}} {{e.dtype}}")
            failed = True
            continue
        close = torch.isclose(a.double(), e.double(), rtol={rtol!r}, atol={atol!r}, equal_nan=True)
        if not bool(close.all()):
            at = tuple(int(v) for v in (~close).nonzero()[0])
            print(f"output {{i}}: {{int((~close).sum())}} of {{close.numel()}} elements differ; first at {{at}}: "
                  f"backend {{a[at].item()!r}}, eager {{e[at].item()!r}}")
            failed = True
    if len(actual) != len(expected):
        print(f"{{len(actual)}} outputs, eager has {{len(expected)}}")
        failed = True
    print("FAILS: the backend's result differs from eager PyTorch" if failed else "matches eager PyTorch")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
'''


def render(
    title: str,
    report: str,
    distribution: str,
    rtol: float,
    atol: float,
    libraries: list[str],
    simulator: str | None = None,
    backend_id: str | None = None,
) -> str:
    """The text of reproduce.py for one case (its values written as Python literals). ``simulator``: the
    backend's simulator ('module:qualname') registered for ``backend_id`` before the program runs."""
    return _TEMPLATE.format(
        title=title,
        report=report,
        distribution=distribution,
        rtol=float(rtol),
        atol=float(atol),
        libraries=json.dumps(list(libraries)),
        simulator=repr(simulator),
        backend_id=repr(backend_id),
    )
