"""A descriptor of ExecuTorch's OpenVINO delegate as the executorch 1.5.1 wheel ships it, run with
the OpenVINO runtime of the ``openvino`` package (``pip install -e '.[scoreboard]'``).

What the wheel does, and so what this descriptor declares:

- Registration: ExecuTorch's Python runtime (``extension/pybindings/_C``) NEEDS
  ``lib/libexecutorch_backend_openvino.so``, which registers ``OpenvinoBackend`` when
  ``executorch.runtime`` is imported: ``registered_at_import`` is True and load_runtime() loads
  nothing.
- The engine: that library opens ``libopenvino_c`` itself, lazily (at the first is_available() or
  init()), from the path in ``OPENVINO_LIB_PATH``, which ExecuTorch's ``portable_lib.py`` sets from
  the installed ``openvino`` package: ``engine_libraries`` names it, so PKG-5/PKG-6 check it.
- The AOT package ``executorch.backends.openvino`` imports its quantizer in ``__init__``, and the
  quantizer imports ``nncf``: there is no partitioner-only path (importing
  ``executorch.backends.openvino.partitioner`` runs the package's ``__init__`` first), so ``nncf`` is
  needed for lowering at all, although no metadata declares it. The ``scoreboard`` extra installs it.
- Precision: on CPUs with bf16 (AVX512_BF16, AMX) OpenVINO's CPU plugin computes float32 models in
  bf16 unless INFERENCE_PRECISION_HINT=f32 is given when the model is compiled or imported. The
  ExecuTorch runtime imports the blob with ``ov_core_import_model`` and only the ``device`` compile
  spec, and the hint given when the blob was compiled does not survive export/import, so no compile
  spec reaches it (scoreboard/triage.json, OV-PRECISION): the tolerances declared here are bf16's.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from conformance.descriptor import BackendDescriptor, QuantizedSupport, SampleModel
from conformance.operators import OperatorSupport
from scoreboard.samples import MLP, ConvNet, convnet_inputs
from scoreboard.wheel import executorch_lib, executorch_version

#: bf16 has 8 significant bits: a result is within 2^-8 relative of the float32 one per rounding, and
#: a K-term sum a few times that. The samples are declared within 2^-6 (their sums are short).
BF16_RTOL = 2.0**-6
BF16_ATOL = 2.0**-6


def _partitioners():
    from executorch.backends.openvino.partitioner import OpenvinoPartitioner
    from executorch.exir.backend.compile_spec_schema import CompileSpec

    return [OpenvinoPartitioner([CompileSpec("device", b"CPU")])]


def _load_runtime():
    """OpenVINO is registered by ExecuTorch's Python runtime at import: nothing to load."""
    return


def runtime_libraries() -> list[Path]:
    """The library that registers OpenvinoBackend: the wheel's lib/libexecutorch_backend_openvino.so."""
    return [executorch_lib("libexecutorch_backend_openvino.so")]


def engine_libraries() -> list[Path]:
    """The OpenVINO C library the runtime library dlopens: OPENVINO_LIB_PATH, as ExecuTorch's Python
    runtime sets it from the installed openvino package (an empty list when openvino is missing)."""
    import executorch.runtime  # noqa: F401  sets OPENVINO_LIB_PATH

    path = os.environ.get("OPENVINO_LIB_PATH")
    return [Path(path)] if path else []


def _quantizer():
    from executorch.backends.openvino.quantizer import OpenVINOQuantizer

    return OpenVINOQuantizer()


#: Corpus operators OpenvinoPartitioner (openvino 2025.4.1) leaves on ExecuTorch's CPU kernels
NOT_CLAIMED = ("aten::trunc", "aten::round")
#: operator -> the traits of its cases it does not claim
WITHOUT = {"aten::cat": ("empty",)}


def _float32_ops() -> list[str]:
    """Every float32 operator of the corpus that OpenvinoPartitioner claims, as found with
    ``python benchmarks/operator_corpus.py --backend scoreboard.openvino.descriptor:DESCRIPTOR --discover``:
    all but NOT_CLAIMED. aten::upsample_bilinear2d.vec is claimed and then fails to convert: it is
    declared, and OPS-1 reports it (scoreboard/triage.json)."""
    from conformance.operators import corpus

    return [
        op
        for op, entry in corpus.operators().items()
        if "float32" in entry.dtypes and op not in NOT_CLAIMED and not op.startswith("quantized_decomposed::")
    ]


#: Every float32 result is judged with the corpus's tolerance for bfloat16 (which grows with a case's
#: reduction length): the precision OpenVINO's CPU plugin computes in on this machine's CPUs, which no
#: compile spec can change through ExecuTorch 1.5.1's runtime. On a CPU without bf16 it computes in
#: float32, which is within these tolerances too.
OPERATORS = (
    OperatorSupport.float32(*_float32_ops())
    | {op: OperatorSupport.float32(op, without=without)[op] for op, without in WITHOUT.items()}
).computing_in("bfloat16")


def descriptor(operators=None) -> BackendDescriptor:
    return BackendDescriptor(
        backend_id="OpenvinoBackend",
        distribution="executorch",
        python_package="executorch.backends.openvino",
        version=executorch_version(),
        make_partitioners=_partitioners,
        sample_models=(
            SampleModel("small", lambda: (MLP(), (torch.randn(4, 16),)), rtol=BF16_RTOL, atol=BF16_ATOL),
            SampleModel(
                "convnet",
                lambda: (ConvNet(), (torch.randn(2, 3, 8, 8),)),
                rtol=BF16_RTOL,
                atol=BF16_ATOL,
                make_inputs=convnet_inputs,
            ),
        ),
        load_runtime=_load_runtime,
        runtime_libraries=runtime_libraries,
        registered_at_import=True,
        engine_libraries=engine_libraries,
        quantized=QuantizedSupport("convnet", _quantizer, max_steps=1.0),
        operators=OPERATORS if operators is None else operators,
    )


DESCRIPTOR = descriptor()
