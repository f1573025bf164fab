"""The TOSA reference model as the simulator of Arm's TOSA delegates (``backend_kit.simulator``).

A TOSABackend payload (executorch 1.5.1) is a TOSA flatbuffer: file identifier ``TOSA`` at bytes 4..8, one
region and block ``main``, whose inputs are the delegate's user inputs in order and whose constants are in the
graph. ``tosa_reference_model.run`` (tosa-tools 2026.5.0) computes it on numpy arrays. What Arm's runtimes
do around a graph is done here the same way: a 4-D operand the runtime holds channels-last (by its dim order)
goes in as NHWC and a channels-last output comes back from NHWC; buffers are handed over by their elements,
so a graph output of shape [1] fills a planned scalar; an output the program plans in another dtype of the
same kind (int64 where TOSA computes int32) is converted. The reference model checks the dtype of its inputs
but not their shape, so shapes are checked here before the call.

A graph with a zero-size tensor is refused here without calling the reference model: the reference model
refuses every such graph it was given ("Invalid TOSA graph", scoreboard/reproducers/
arm_tosa_zero_size_operands.py shows it on the model itself), and on a machine with gdb it first spends about
10 s printing a backtrace through it, which over the corpus's zero-size cases would take most of an hour.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from backend_kit.simulator import IncompatibleBlob, SimulatorContext, simulated_delegate

_NUMPY = {
    "FP32": np.float32,
    "FP16": np.float16,
    "BF16": None,  # no numpy dtype: refused below with its name
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "BOOL": np.bool_,
}
_NHWC = (0, 2, 3, 1)


def _graph(
    payload: bytes,
) -> tuple[list[tuple[str, list[int], str]], list[tuple[str, list[int], str]], list[str]]:
    """(inputs, outputs, the names of its zero-size tensors) of the payload's main block: (name, shape, TOSA
    dtype name) each."""
    from tosa.DType import DType
    from tosa.TosaGraph import TosaGraph

    if len(payload) < 8 or payload[4:8] != b"TOSA":
        raise IncompatibleBlob(f"not a TOSA flatbuffer (bytes 4..8 are {payload[4:8]!r}, not b'TOSA')")
    names = {v: k for k, v in vars(DType).items() if not k.startswith("_")}
    block = TosaGraph.GetRootAs(payload, 0).Regions(0).Blocks(0)
    tensors = {}
    for i in range(block.TensorsLength()):
        t = block.Tensors(i)
        shape = [] if t.ShapeIsNone() else [int(s) for s in t.ShapeAsNumpy()]
        tensors[t.Name().decode()] = (shape, names.get(t.Type(), str(t.Type())))
    inputs = [block.Inputs(i).decode() for i in range(block.InputsLength())]
    outputs = [block.Outputs(i).decode() for i in range(block.OutputsLength())]
    empty = [f"{n} {shape}" for n, (shape, _) in tensors.items() if 0 in shape]
    return [(n, *tensors[n]) for n in inputs], [(n, *tensors[n]) for n in outputs], empty


def _channels_last(tensor: torch.Tensor) -> bool:
    """Whether the runtime holds this 4-D tensor channels-last (its dim order, which the bridge keeps)."""
    return tensor.dim() == 4 and tuple(tensor.dim_order()) == _NHWC


def _operand(value: Any, name: str, shape: list[int], dtype: str) -> np.ndarray:
    if not isinstance(value, torch.Tensor):
        value = torch.tensor(value)
    numpy_dtype = _NUMPY.get(dtype)
    if numpy_dtype is None:
        raise ValueError(f"graph input {name!r} is {dtype}, which the simulator cannot hand over")
    if _channels_last(value):
        value = value.permute(*_NHWC)
    if list(value.shape) != shape and value.numel() == int(np.prod(shape)) and value.dim() != 4:
        value = value.reshape(shape)  # a buffer of the same elements (a scalar as [1])
    if list(value.shape) != shape:
        raise ValueError(f"graph input {name!r} has shape {shape}; the runtime passed {list(value.shape)}")
    return np.ascontiguousarray(value.detach().numpy(), dtype=numpy_dtype)


def _result(array: Any, name: str, planned: torch.Tensor | None) -> torch.Tensor:
    value = torch.from_numpy(np.array(array))
    if planned is None:
        return value
    if _channels_last(planned) and value.dim() == 4:
        value = value.permute(0, 3, 1, 2)
    elif list(value.shape) != list(planned.shape) and value.numel() == planned.numel():
        value = value.reshape(planned.shape)  # a buffer of the same elements (a scalar as [1])
    if value.dtype != planned.dtype:
        if value.dtype.is_floating_point != planned.dtype.is_floating_point:
            raise ValueError(f"graph output {name!r} is {value.dtype}; the program plans {planned.dtype}")
        value = value.to(planned.dtype)
    return value


def simulate(payload: bytes, context: SimulatorContext):
    """A delegate computing the payload's TOSA graph in the TOSA reference model."""
    import tosa_reference_model as reference

    inputs, outputs, empty = _graph(payload)

    def run(values: list[Any], planned: list[torch.Tensor]) -> list[torch.Tensor]:
        if empty:
            raise ValueError(
                f"the TOSA graph has zero-size tensors ({', '.join(empty[:3])}), and the TOSA reference model "
                "refuses such a graph (Invalid TOSA graph)"
            )
        arrays = [_operand(v, *spec) for v, spec in zip(values, inputs)]
        results, status = reference.run(
            payload, arrays, verbosity="NONE", initialize_variable_tensor_from_numpy=True
        )
        if status != reference.GraphStatus.TOSA_VALID:
            raise RuntimeError(f"the TOSA reference model finished with {status}")
        return [
            _result(r, spec[0], planned[i] if i < len(planned) else None)
            for i, (r, spec) in enumerate(zip(results, outputs))
        ]

    return simulated_delegate(len(inputs), run)
