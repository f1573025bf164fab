"""Arm TOSA delegate (executorch 1.5.1, tosa-tools 2026.5.0), floating point (TOSA-1.0+FP): operators whose
delegated results differ from eager PyTorch in the TOSA reference model, each on a few chosen values.

Standalone (torch, executorch 1.5.1 and tosa-tools 2026.5.0; no conformance-suite code; make the environment
with scripts/arm_env.sh, tosa-tools pins numpy<2.2):

    .venv-arm/bin/python arm_tosa_float_semantics.py

What it does: for each case, exports a one-operator module, lowers it with the TOSA floating-point
partitioner, takes the delegate's payload (a TOSA flatbuffer) and runs it in the TOSA reference model, then
compares with eager PyTorch (NaN matches NaN).

Seen (x86-64 Linux):
- round: halves round away from zero (-2.5 -> -3), where torch rounds half to even (-2.5 -> -2);
- relu and leaky_relu: +inf becomes 3.4028235e+38 (a clamp to the largest float), where eager keeps inf;
- sqrt: lowered as pow(x, 0.5), which TOSA leaves unpredictable for a negative or NaN x: the reference
  model refuses to give a result (TOSA_UNPREDICTABLE) where eager gives NaN, and it errs by an ulp elsewhere;
- log1p: -inf comes back as -inf, where eager gives NaN;
- log_softmax: a row of widely spread values gives -inf where eager gives -200 (computed as log(softmax));
- elu: errors of 1e-4 relative to the result, past float32's rounding; pow: just past the 4 ulp the
  corpus allows it.

Exit status: 1 while any case differs beyond its tolerance, 0 once all match.
"""

from __future__ import annotations

import sys

import numpy as np
import torch
import tosa_reference_model as reference
from executorch.backends.arm.tosa.compile_spec import TosaCompileSpec
from executorch.backends.arm.tosa.partitioner import TOSAPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.exir.lowered_backend_module import LoweredBackendModule


class Op(torch.nn.Module):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


INF, NAN = float("inf"), float("nan")
#: name -> (function, inputs, relative tolerance)
CASES = {
    "round": (torch.round, (torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]),), 0.0),
    "relu": (torch.relu, (torch.tensor([INF, -INF, 1.0, -1.0]),), 0.0),
    "leaky_relu": (torch.nn.functional.leaky_relu, (torch.tensor([INF, -INF, 1.0, -1.0]),), 1e-6),
    "sqrt": (torch.sqrt, (torch.tensor([4.0, INF, -1.0, NAN]),), 0.0),
    "log1p": (torch.log1p, (torch.tensor([-INF, INF, NAN, 1.0]),), 1e-6),
    "log_softmax": (lambda x: torch.log_softmax(x, -1), (torch.tensor([[0.0, 200.0]]),), 1e-6),
    "elu": (torch.nn.functional.elu, (torch.linspace(-12.0, 0.0, 997),), 1e-6),
    "pow": (torch.pow, (torch.linspace(2.0, 9.0, 4096), torch.linspace(1.0, 3.0, 4096)), 4.77e-7),
}


def run_delegated(fn, inputs) -> np.ndarray:
    lowered = to_edge_transform_and_lower(
        torch.export.export(Op(fn), inputs), partitioner=[TOSAPartitioner(TosaCompileSpec("TOSA-1.0+FP"))]
    )
    module = lowered.exported_program().graph_module
    (payload,) = [m.processed_bytes for m in module.children() if isinstance(m, LoweredBackendModule)]
    try:
        outputs, status = reference.run(payload, [t.numpy() for t in inputs], verbosity="NONE")
    except RuntimeError as exc:  # what run() raises for a graph whose result TOSA leaves unpredictable
        raise ValueError(f"the reference model gives no result: {exc}") from None
    if status != reference.GraphStatus.TOSA_VALID:
        raise ValueError(f"the reference model gives no result: {status}")
    return np.asarray(outputs[0]).reshape(fn(*inputs).shape)


def main() -> int:
    differs = 0
    for name, (fn, inputs, rtol) in CASES.items():
        want = fn(*inputs).numpy()
        try:
            got = run_delegated(fn, inputs)
        except ValueError as exc:
            differs += 1
            print(f"{name}: {exc}; eager gives {want.tolist()}")
            continue
        close = np.isclose(got, want, rtol=rtol, atol=0.0, equal_nan=True)
        if close.all():
            print(f"{name}: matches eager PyTorch")
            continue
        differs += 1
        at = np.argwhere(~close)[0]
        index = tuple(int(i) for i in at)
        x = [t.numpy()[index] if t.dim() else t.item() for t in inputs]
        print(
            f"{name}: {int((~close).sum())} of {close.size} differ; at {index} (input {x}): "
            f"delegated {got[index]!r}, eager {want[index]!r}"
        )
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
