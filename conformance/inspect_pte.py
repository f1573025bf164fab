"""``executorch-conformance inspect``: what a .pte holds, its contract blob
headers, and, when an ExecuTorch runtime is importable, whether each method
loads here (backend registered, blob accepted) with the runtime's own reason."""

from __future__ import annotations

from pathlib import Path

from conformance.blob_header import HeaderError, read_header
from conformance.fdcapture import capture_stderr
from conformance.pte import describe, read_pte


def load_error(pte: bytes | str, method: str = "forward") -> tuple[str | None, str]:
    """(the error loading ``method`` raised or None, what the runtime logged meanwhile)."""
    from executorch.runtime import Runtime

    error = None
    with capture_stderr() as log:
        try:
            Runtime.get().load_program(pte).load_method(method)
        except RuntimeError as exc:
            error = str(exc)
    return error, log[0]


def _header_line(data: bytes) -> str:
    try:
        h = read_header(data)
    except HeaderError as exc:
        return f"no contract header ({exc})"
    v = lambda t: ".".join(map(str, t))  # noqa: E731
    return (
        f"contract header: backend {h.backend_id}, blob format {v(h.blob_format)}, "
        f"written by {v(h.backend_version)} with executorch {v(h.executorch_version)}, payload {h.payload_size} bytes"
    )


def _load_backends(specs: list[str]) -> list[str]:
    from conformance.descriptor import load_descriptor

    lines = []
    for spec in specs:
        descriptor = load_descriptor(spec)
        if descriptor.load_runtime is None:
            lines.append(f"{spec}: the descriptor declares no runtime")
            continue
        descriptor.load_runtime()
        lines.append(f"loaded the runtime of {descriptor.backend_id}")
    return lines


def runtime_status(data: bytes | str, method_names: list[str], backend_ids: list[str] = ()) -> list[str]:
    """Whether each delegate's backend is registered here, then one line per
    method: loads here, or the error and the runtime's log."""
    try:
        from executorch.runtime import Runtime
    except ImportError as exc:
        return [f"no ExecuTorch runtime importable here ({exc})"]
    registered = set(Runtime.get().backend_registry.registered_backend_names)
    lines = [f"registered backends: {', '.join(sorted(registered)) or 'none'}"]
    for backend_id in dict.fromkeys(backend_ids):
        state = "registered" if backend_id in registered else "NOT registered in this process (load its runtime first)"
        lines.append(f"backend {backend_id}: {state}")
    for name in method_names:
        error, log = load_error(data, name)
        if error is None:
            lines.append(f"method {name!r}: loads (all delegates accepted)")
        else:
            lines.append(f"method {name!r}: does NOT load: {error}")
            lines += [f"    runtime log: {line.strip()}" for line in log.splitlines() if line.strip()]
    return lines


def inspect_file(path: str | Path, load: list[str] | None = None) -> str:
    """The report of ``inspect``. The file is mapped, not read whole (read_pte), and the
    runtime loads it from its path, so a multi-gigabyte .pte does not fill memory."""
    if Path(path).is_dir():
        raise ValueError(f"{path} is a directory, not a .pte file")
    program = read_pte(path)
    out = [f"{path}:", describe(program), ""]
    registered_note = []
    for plan in program.execution_plans:
        for i, d in enumerate(plan.delegates):
            out.append(f"{plan.name}[{i}] {d.backend_id}: {_header_line(d.data)}")
    out.append("")
    registered_note += _load_backends(load or [])
    out += registered_note
    out += runtime_status(str(path), [p.name for p in program.execution_plans],
                          [d.backend_id for d in program.delegates()])
    return "\n".join(out)
