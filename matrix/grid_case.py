"""One cell of the grid, run in a child process so that a crash is a result.

    python -m matrix.grid_case PROGRAM --expected MANIFEST [--library LIB]
    python -m matrix.grid_case --batch CASES.json [--library LIB]

Loads the runtime library LIB (if given) into this process's ExecuTorch
registry, loads PROGRAM's ``forward`` with ``executorch.runtime``, runs it on
the manifest's ``model.input`` and compares with ``model.expected_output``.
Prints one JSON line on stdout: ``{"status": ..., "detail": ...,
"max_deviation": ...}`` where status is ``runs and matches``, ``wrong output``,
``refused`` (the exception the user sees) or ``library not loaded``. The
runtime's own log stays on stderr for the parent to read. A crash prints
nothing; the parent records the signal.

``--batch``: a JSON list of ``[program, manifest]`` pairs run one after the
other in this process (one import of torch and executorch for many cells);
before each case the line ``@@case <index>`` goes to stderr and stdout, and
each result line carries its ``index``. A parent that sees the process die
records the case in progress as crashed and starts a new batch after it.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
from pathlib import Path

#: Largest deviation from the recorded eager output that still "matches".
TOLERANCE = 1e-5


def _emit(status: str, detail: str, deviation: float | None = None, index: int | None = None) -> int:
    result = {"status": status, "detail": detail, "max_deviation": deviation}
    if index is not None:
        result["index"] = index
    print(json.dumps(result), flush=True)
    return 0


def run_one(runtime, program: Path, expected: Path, index: int | None = None) -> int:
    """Loads, runs and compares one program; prints its result line."""
    import torch

    model = json.loads(expected.read_text())["model"]
    try:
        method = runtime.load_program(program).load_method("forward")
        outputs = method.execute([torch.tensor(model["input"], dtype=torch.float32)])
    except Exception as exc:  # noqa: BLE001  the refusal is the result being recorded
        return _emit("refused", f"{type(exc).__name__}: {exc}", index=index)
    deviation = float((outputs[0] - torch.tensor(model["expected_output"])).abs().max())
    if deviation <= TOLERANCE:
        return _emit("runs and matches", f"max deviation {deviation:.3g}", deviation, index)
    return _emit("wrong output", f"max deviation {deviation:.3g} > {TOLERANCE}", deviation, index)


def _load_library(path: str) -> str | None:
    """Loads the backend library globally; None if it registered, else why not."""
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        return f"{exc}"
    register = getattr(lib, "reference_backend_register", None)
    if register is not None:  # 0.2.0 registers on request; 0.1.0 when loaded
        register.restype = ctypes.c_int
        code = register()
        if code not in (0, 0x12):  # 0x12: InvalidArgument, already registered
            return f"reference_backend_register() returned 0x{code:x}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program", type=Path, nargs="?")
    parser.add_argument("--expected", type=Path, help="manifest.json with model.input/expected_output")
    parser.add_argument("--batch", type=Path, help="JSON list of [program, manifest] pairs")
    parser.add_argument("--library", help="backend runtime library to load first")
    args = parser.parse_args(argv)
    if (args.batch is None) == (args.program is None or args.expected is None):
        parser.error("give PROGRAM --expected MANIFEST, or --batch CASES.json")

    from executorch.runtime import Runtime

    runtime = Runtime.get()  # loads the wheel's registry before the library binds to it
    if args.library:
        why = _load_library(args.library)
        if why:
            return _emit("library not loaded", why)
    if args.batch is None:
        return run_one(runtime, args.program, args.expected)
    for index, (program, expected) in enumerate(json.loads(args.batch.read_text())):
        print(f"@@case {index}", file=sys.stderr, flush=True)
        print(f"@@case {index}", flush=True)
        run_one(runtime, Path(program), Path(expected), index)
    return 0


if __name__ == "__main__":
    sys.exit(main())
