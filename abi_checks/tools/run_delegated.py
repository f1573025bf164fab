#!/usr/bin/env python3
"""Load a reference-backend runtime library into this Python's ExecuTorch and run a delegated program.

    PYTHONPATH=reference_backend/python python abi_checks/tools/run_delegated.py LIB.so

Runs in whatever environment starts it (the proof uses it in two venvs, one per ExecuTorch
release). Exports a small model with this environment's executorch and the reference backend's
partitioner, loads LIB with ``reference_backend.load_runtime(LIB)``, runs the program through
``executorch.runtime.Runtime`` and compares with eager PyTorch. Prints one JSON line: the
running executorch version, the executorch the library was built against, which
``libexecutorch*.so`` files the process has mapped, the delegates in the program, the largest
difference from eager, and ok/error. Exit code 0 when the program ran and matched.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path


def _mapped(substrings: tuple[str, ...]) -> list[str]:
    out = set()
    try:
        for line in Path("/proc/self/maps").read_text().splitlines():
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and any(s in Path(parts[5]).name for s in substrings):
                out.add(parts[5])
    except OSError:
        pass
    return sorted(out)


def main(argv: list[str]) -> int:
    lib = Path(argv[1]).resolve()
    result: dict = {"library": str(lib), "ok": False}
    try:
        import torch
        from executorch.exir import to_edge_transform_and_lower
        from executorch.runtime import Runtime
        from executorch.version import __version__ as running

        import reference_backend
        from reference_backend.runtime import build_info

        result["running_executorch"] = running
        result["built_against"] = build_info(lib)["executorch_version"]

        class Small(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.fc = torch.nn.Linear(8, 4)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return torch.relu(self.fc(x)) + x[:, :4]

        # Load first, then ask the library which blob formats it reads: the AOT side on
        # PYTHONPATH may be newer than the library (it writes its newest format by default).
        handle = reference_backend.load_runtime(lib)
        info = dict(
            line.split("=", 1)
            for line in handle.reference_backend_runtime_info().decode().splitlines()
            if "=" in line
        )
        reads = (int(info["blob_format_major"]), int(info["blob_format_minor"]))
        from reference_backend.version import BLOB_FORMAT

        fmt = min(tuple(BLOB_FORMAT), reads)
        result["blob_format"] = f"{fmt[0]}.{fmt[1]} (library reads up to {reads[0]}.{reads[1]})"
        torch.manual_seed(0)
        model = Small().eval()
        example = (torch.randn(2, 8),)
        edge = to_edge_transform_and_lower(
            torch.export.export(model, example),
            partitioner=[reference_backend.ReferencePartitioner([reference_backend.blob_format_spec(*fmt)])],
        )
        result["delegates"] = [
            m.backend_id for m in edge.exported_program().graph_module.modules() if hasattr(m, "backend_id")
        ]
        buffer = bytes(
            edge.to_executorch().buffer
        )  # kept alive while the method lives (1.5 does not copy it)
        result["registered_backends"] = list(Runtime.get().backend_registry.registered_backend_names)
        loaded = Runtime.get().load_program(buffer)
        method = loaded.load_method("forward")
        (actual,) = method.execute(list(example))
        with torch.no_grad():
            expected = model(*example)
        result["max_abs_diff"] = float((actual - expected).abs().max())
        torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6)
        result["ok"] = bool(result["delegates"]) and "ReferenceBackend" in result["delegates"]
        if not result["ok"]:
            result["error"] = "the program has no ReferenceBackend delegate"
        del method, loaded, buffer
    except Exception as exc:  # noqa: BLE001  reported, not raised: the caller prints the line
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc(limit=3)
    result["mapped_executorch_libraries"] = _mapped(("libexecutorch", "libreference_backend"))
    print("RESULT " + json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
