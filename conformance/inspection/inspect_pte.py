"""``executorch-conformance inspect``: what a .pte holds, its contract blob
headers, and, when an ExecuTorch runtime is importable, whether each method
loads here (backend registered, blob accepted) with the runtime's own reason."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from conformance.fdcapture import capture_stderr
from conformance.inspection.blob_header import HeaderError, read_header
from conformance.pte import describe, read_pte
from conformance.vendor.process import signal_name

#: How long one method may take to load in the child process.
LOAD_TIMEOUT_S = 120.0


def load_error(pte: bytes | str, method: str = "forward") -> tuple[str | None, str]:
    """(the error loading ``method`` raised or None, what the runtime logged meanwhile).
    Runs in this process: ``runtime_status`` calls it in a child process."""
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


# The child process: ExecuTorch's loader (and XNNPACK's, a vendor's init) can
# abort, raise std::bad_alloc through Python or hang on a damaged program, so
# every load runs in a child (pebble: one worker, restarted after a crash).

_child_backends: list[str] | None = None


def _child_prepare(specs: list[str]) -> list[str]:
    """Loads the runtimes named by ``specs`` once per child; returns what that did."""
    global _child_backends  # noqa: PLW0603  once per child process
    if _child_backends is None:
        _child_backends = _load_backends(specs)
    return _child_backends


def _child_registered(specs: list[str], backend_ids: list[str]) -> list[str]:
    lines = list(_child_prepare(specs))
    try:
        from executorch.runtime import Runtime
    except ImportError as exc:
        return lines + [f"no ExecuTorch runtime importable here ({exc})"]
    registered = set(Runtime.get().backend_registry.registered_backend_names)
    lines.append(f"registered backends: {', '.join(sorted(registered)) or 'none'}")
    for backend_id in dict.fromkeys(backend_ids):
        state = (
            "registered"
            if backend_id in registered
            else "NOT registered in this process (load its runtime first)"
        )
        lines.append(f"backend {backend_id}: {state}")
    return lines


def _child_load(specs: list[str], pte: bytes, method: str, log_path: str) -> str | None:
    """Loads ``method``; the runtime's log goes to ``log_path`` (read by the parent even after a crash)."""
    import os
    import sys

    _child_prepare(specs)
    from executorch.runtime import Runtime

    sys.stderr.flush()
    saved = os.dup(2)
    saved_stream = sys.stderr
    with open(log_path, "wb", buffering=0) as sink:
        os.dup2(sink.fileno(), 2)
        sys.stderr = open(os.dup(sink.fileno()), "w", buffering=1, errors="backslashreplace")  # noqa: SIM115  kept open
        try:
            Runtime.get().load_program(pte).load_method(method)
            return None
        except RuntimeError as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - MemoryError (std::bad_alloc), UnicodeDecodeError of a name, ...
            return f"{type(exc).__name__} out of ExecuTorch's loader: {exc}"
        finally:
            sys.stderr.flush()
            sys.stderr.close()
            sys.stderr = saved_stream
            os.dup2(saved, 2)
            os.close(saved)


def runtime_status(
    data: bytes | str,
    method_names: list[str],
    backend_ids: Sequence[str] = (),
    load: list[str] | None = None,
    timeout: float = LOAD_TIMEOUT_S,
) -> list[str]:
    """Loads the runtimes named by ``load``, tells whether each delegate's
    backend is registered, then one line per method: loads here, or the error
    and the runtime's log. All of it runs in a child process: a crash or a
    hang there is reported ("ExecuTorch's loader crashed with SIGABRT loading
    method 'forward'") and the next method gets a fresh child."""
    import concurrent.futures
    import multiprocessing
    import tempfile

    import pebble

    specs = list(load or [])
    pool = pebble.ProcessPool(max_workers=1, context=multiprocessing.get_context("spawn"))
    try:
        try:
            lines = pool.schedule(_child_registered, args=(specs, list(backend_ids))).result()
        except pebble.ProcessExpired as exc:
            return [f"the runtime crashed with {signal_name(exc.exitcode)} while loading the backends"]
        if any(line.startswith("no ExecuTorch runtime importable") for line in lines):
            return lines
        with tempfile.TemporaryDirectory(prefix="inspect-") as scratch:
            for i, name in enumerate(method_names):
                log_path = Path(scratch) / f"load-{i}.log"
                log_path.touch()
                future = pool.schedule(_child_load, args=(specs, data, name, str(log_path)), timeout=timeout)
                try:
                    error = future.result()
                except pebble.ProcessExpired as exc:
                    error = f"ExecuTorch's loader crashed with {signal_name(exc.exitcode)} loading method {name!r}"
                except concurrent.futures.TimeoutError:
                    error = f"ExecuTorch's loader did not finish loading method {name!r} within {timeout:g} s"
                log = log_path.read_bytes().decode("utf-8", "replace")
                if error is None:
                    lines.append(f"method {name!r}: loads (all delegates accepted)")
                else:
                    lines.append(f"method {name!r}: does NOT load: {error}")
                    lines += [
                        f"    runtime log: {line.strip()}"
                        for line in log.splitlines()
                        if line.strip() and not line.startswith(("Fatal Python error", "Current thread"))
                    ][-20:]
        return lines
    finally:
        pool.stop()
        pool.join(timeout=10)


def inspect_file(path: str | Path, load: list[str] | None = None) -> str:
    """The report of ``inspect``. The file is mapped, not read whole (read_pte), and the
    runtime loads it from its path, so a multi-gigabyte .pte does not fill memory."""
    from conformance.input_files import check_input_file

    check_input_file(path, give="a .pte file")
    program = read_pte(path)
    out = [f"{path}:", describe(program), ""]
    for plan in program.execution_plans:
        for i, d in enumerate(plan.delegates):
            out.append(f"{plan.name}[{i}] {d.backend_id}: {_header_line(d.data)}")
    out.append("")
    out += runtime_status(
        str(path),
        [p.name for p in program.execution_plans],
        [d.backend_id for d in program.delegates()],
        load=load,
    )
    return "\n".join(out)
