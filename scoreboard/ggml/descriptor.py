"""A descriptor of executorch-ggml (github.com/larryliu0820/executorch-ggml), a real out-of-tree backend: its
Python side imported from a checkout, its C++ runtime built against the executorch wheel with the contract
kit (scoreboard/ggml/build.sh), nothing of its code in this repository.

    EXECUTORCH_GGML_CHECKOUT=<checkout> EXECUTORCH_GGML_LIBRARY=<built libggml_backend.so> \\
        executorch-conformance run --backend scoreboard.ggml.descriptor:DESCRIPTOR

The checkout's ``python/`` directory goes on the import path when this module is imported. The library is
loaded with the kit's loader, which checks the executorch it was built for (its build_info.json). Which
commit was scored, what the build needed and what blocked it: scoreboard/README.md and
docs/out-of-tree-guide.md, "Case study: executorch-ggml".
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from backend_kit.runtime import RuntimeLibrary
from conformance.descriptor import BackendDescriptor
from scoreboard.samples import MLP, Small

_CHECKOUT = os.environ.get("EXECUTORCH_GGML_CHECKOUT")
if _CHECKOUT and str(Path(_CHECKOUT) / "python") not in sys.path:
    sys.path.insert(0, str(Path(_CHECKOUT) / "python"))

RUNTIME = RuntimeLibrary(
    "GgmlBackend",
    Path(os.environ.get("EXECUTORCH_GGML_LIBRARY", "libggml_backend.so")),
    distribution="executorch-ggml",
    fix="build it with `bash scoreboard/ggml/build.sh CHECKOUT GGML_SOURCE FLATBUFFERS_INCLUDE` and set "
    "EXECUTORCH_GGML_LIBRARY to the path it prints",
)


def _partitioners():
    from executorch_ggml import GgmlPartitioner

    return [GgmlPartitioner()]


def _samples():
    import torch

    from conformance.descriptor import SampleModel

    return (
        SampleModel("small", lambda: (Small(), (torch.randn(2, 8),))),
        SampleModel("mlp", lambda: (MLP(), (torch.randn(4, 16),))),
    )


DESCRIPTOR = BackendDescriptor(
    backend_id="GgmlBackend",
    distribution="executorch-ggml",
    python_package="executorch_ggml",
    version="0.1.0",
    make_partitioners=_partitioners,
    sample_models=_samples(),
    load_runtime=RUNTIME.load,
    runtime_libraries=RUNTIME.libraries,
)
