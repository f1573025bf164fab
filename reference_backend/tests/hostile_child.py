"""Loads (and runs) a forged program in a child Python with a time bound, so
that a runtime that hangs, dies by a signal or accepts what it must refuse
shows as a failed test instead of taking the test run down (issues 17, 31)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = textwrap.dedent(
    """
    import json, sys
    import torch
    import reference_backend
    from executorch.runtime import Runtime
    reference_backend.load_runtime()
    args = json.loads(sys.argv[1])
    if args.get("max_compute"):
        reference_backend.set_max_compute_steps(args["max_compute"])
    stage = "load"
    error = None
    try:
        method = Runtime.get().load_program(args["pte"]).load_method("forward")
        if args["run"]:
            stage = "execute"
            meta = method.metadata
            shapes = [tuple(meta.input_tensor_meta(k).sizes()) for k in range(meta.num_inputs())]
            method.execute([torch.zeros(s) for s in shapes])
            stage = "done"
    except RuntimeError as exc:
        error = str(exc)
    print("RESULT " + json.dumps({"error": error, "stage": stage,
                                  "max_compute": reference_backend.max_compute_steps()}), flush=True)
    """
)


@dataclasses.dataclass
class ChildResult:
    error: str | None  # the RuntimeError ExecuTorch raised, None if it loaded (and ran)
    stage: str  # "load", "execute" or "done": how far it got
    max_compute: int  # the compute maximum in force in the child
    stderr: str

    def backend_lines(self) -> list[str]:
        """The lines the reference runtime logged, from its id on."""
        return [
            line[line.index("ReferenceBackend:") :]
            for line in self.stderr.splitlines()
            if "] ReferenceBackend:" in line
        ]


def run_in_child(
    pte: Path, run: bool = True, env: dict | None = None, timeout: float = 300, max_compute: int | None = None
) -> ChildResult:
    """Loads ``pte`` (and, with ``run``, executes it on zeros) in a child, after
    reference_backend.set_max_compute_steps(``max_compute``) if given; the
    child must exit normally within ``timeout`` seconds (minutes: the machine
    may be busy; a bounded runtime refuses at init in well under a second)."""
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                CHILD,
                json.dumps({"pte": str(pte), "run": run, "max_compute": max_compute}),
            ],
            capture_output=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the runtime did not return within {timeout:.0f} s on {pte.name}") from None
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, f"the process died ({proc.returncode}): {err[-3000:]}"
    line = next(line for line in proc.stdout.decode().splitlines() if line.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    return ChildResult(result["error"], result["stage"], result["max_compute"], err)
