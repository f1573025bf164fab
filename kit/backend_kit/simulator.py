"""Runs a backend's delegates in the vendor's host simulator, inside ExecuTorch's own runtime.

A vendor whose hardware is elsewhere has, on the host, a compiler and a simulator. ``register(backend_id,
simulator)`` registers ``backend_id`` in this process's ExecuTorch runtime with a small C++ backend (the
*simulator bridge*, ``simulator_bridge/bridge.cpp``) that hands each delegate to ``simulator``. A program then
loads and runs as always (ExecuTorch's kernels, memory plan and named data are the real ones); only the
delegates of ``backend_id`` are computed by the simulator. What that proves, and what it cannot (the vendor's
C++ runtime, its registration, its ABI, its own errors), is docs/contract.md, "Simulated runtimes".

The vendor's simulator is a callable ``simulator(payload: bytes, context: SimulatorContext)``, called when the
runtime initializes a delegate; it returns a *simulated delegate*: an object with

- ``num_inputs``: how many of the delegate's arguments are its inputs (the runtime passes the inputs, then
  the planned outputs);
- ``run(inputs: list[torch.Tensor], outputs: list[torch.Tensor]) -> Sequence[torch.Tensor]``: the values of
  the outputs. ``outputs`` are the planned output tensors, over the runtime's memory, in the dtypes and
  layouts (dim order) the program plans: a simulator reads what it must produce from them (a device that
  computes int32 where the program plans int64 converts, as its runtime would). The bridge copies the
  values into them, resized when their shapes differ and the plan allows it; a value that is already the
  planned tensor is left as written.

Raising ``IncompatibleBlob`` from ``simulator`` refuses the payload as a runtime refuses a blob of another
format (Error::DelegateInvalidCompatibility); any other exception refuses it as an invalid program, and an
exception from ``run`` fails the execute. Each message goes to the process's stderr, where the runtime logs.

The bridge is built on first use with CMake and the C++ compiler (what a backend's runtime needs anyway),
against the executorch wheel of this interpreter, into ``$BACKEND_KIT_CACHE_DIR`` (else
``$XDG_CACHE_HOME/executorch-backend-kit`` or ``~/.cache/executorch-backend-kit``), once per kit version,
bridge source and executorch version.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from backend_kit.runtime import RuntimeLoadError, load_runtime

BRIDGE_DIR = Path(__file__).parent / "simulator_bridge"
LIBRARY = "libbackend_kit_simulator_bridge.so"
#: ExecuTorch's Error codes the bridge returns (executorch/runtime/core/error.h).
OK, INTERNAL, INVALID_ARGUMENT, INVALID_PROGRAM, DELEGATE_INVALID_COMPATIBILITY = 0, 0x01, 0x12, 0x23, 0x30
#: ScalarType code -> torch dtype name, for the dtypes a delegate's tensors may have.
SCALAR_TYPES = {
    0: "uint8",
    1: "int8",
    2: "int16",
    3: "int32",
    4: "int64",
    5: "float16",
    6: "float32",
    7: "float64",
    11: "bool",
    15: "bfloat16",
}
MAX_DIMS = 16
TENSOR, INT, DOUBLE, BOOL, NONE = 0, 1, 2, 3, 4


class IncompatibleBlob(Exception):
    """Raised by a simulator for a payload of a format it does not accept (the runtime's
    Error::DelegateInvalidCompatibility)."""


class SimulatorError(RuntimeError):
    """The bridge cannot be built, loaded or registered; the message says why and what to do."""


class _Arg(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int32),
        ("dtype", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("sizes", ctypes.c_int64 * MAX_DIMS),
        ("dim_order", ctypes.c_int32 * MAX_DIMS),
        ("data", ctypes.c_void_p),
        ("nbytes", ctypes.c_uint64),
        ("ival", ctypes.c_int64),
        ("dval", ctypes.c_double),
    ]


_INIT = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_uint64,
    ctypes.POINTER(ctypes.c_int64),
)
_EXECUTE = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_int32, ctypes.c_int64, ctypes.c_uint64, ctypes.POINTER(_Arg), ctypes.c_void_p
)
_DESTROY = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int64)


# --------------------------------------------------------------------------------------------- building


def cache_dir() -> Path:
    """Where built bridges are kept."""
    env = os.environ.get("BACKEND_KIT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "executorch-backend-kit"


def _build_key() -> str:
    from backend_kit.runtime import running_executorch_version

    digest = hashlib.sha256()
    kit = Path(__file__).parent
    for path in sorted(
        [
            *BRIDGE_DIR.iterdir(),
            *(kit / "cmake").glob("*.cmake"),
            *(kit / "include" / "backend_kit").glob("*.h"),
        ]
    ):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(running_executorch_version().encode() + b"\0" + sys.executable.encode())
    return digest.hexdigest()[:20]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    # fcntl.flock: the lock dies with the process that holds it, so a build killed half-way never blocks the
    # next one (the standard library's, no dependency for one lock).
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _cmake() -> str:
    # The environment's own CMake first (pip install cmake): the executorch wheel's CMake package needs 3.28,
    # newer than many systems' cmake.
    found = shutil.which("cmake", path=str(Path(sys.executable).parent)) or shutil.which("cmake")
    if not found:
        raise SimulatorError(
            "building the simulator bridge needs CMake (>=3.28) and a C++17 compiler: pip install cmake, and "
            "install a compiler (apt install g++)"
        )
    return found


def bridge_library(root: Path | None = None) -> Path:
    """The simulator bridge built for this interpreter's executorch: built now (a minute at most, once) unless
    an earlier build is in ``root`` (default ``cache_dir()``). SimulatorError with CMake's last lines if the
    build fails."""
    build = (root or cache_dir()) / "simulator-bridge" / _build_key()
    library = build / LIBRARY
    if library.is_file():
        return library
    with _locked(build.with_suffix(".lock")):
        if library.is_file():
            return library
        work = build.with_name(build.name + ".work")
        shutil.rmtree(work, ignore_errors=True)
        kit_root = Path(__file__).parent
        steps = [
            [
                _cmake(),
                "-S",
                str(BRIDGE_DIR),
                "-B",
                str(work),
                "-DCMAKE_BUILD_TYPE=Release",
                f"-DBackendKit_DIR={kit_root / 'cmake'}",
                f"-DPython_EXECUTABLE={sys.executable}",
                f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={work / 'out'}",
            ],
            [_cmake(), "--build", str(work), "--parallel", "2"],
        ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
                raise SimulatorError(
                    f"building the simulator bridge failed ({' '.join(step[:2])} exited {done.returncode}):\n{tail}"
                )
        shutil.rmtree(build, ignore_errors=True)
        (work / "out").rename(build)
        shutil.rmtree(work, ignore_errors=True)
    return library


# --------------------------------------------------------------------------------------------- running


class SimulatorContext:
    """What a simulator may ask while the runtime initializes a delegate: the program's named data, the
    delegate's compile specs and the method's name. Valid only during that call."""

    def __init__(self, lib: ctypes.CDLL, handle: int) -> None:
        self._lib = lib
        self._handle = handle

    def named_data(self, key: str) -> bytes:
        """The named data ``key`` of the program (from the .pte or the .ptd it was loaded with); KeyError if
        the program has none of that name."""
        size = ctypes.c_uint64(0)
        code = self._lib.bksim_named_data(self._handle, key.encode(), None, 0, ctypes.byref(size))
        if code != OK:
            raise KeyError(f"the program has no named data {key!r} (runtime error 0x{code:x})")
        buffer = ctypes.create_string_buffer(max(1, size.value))
        code = self._lib.bksim_named_data(self._handle, key.encode(), buffer, size.value, ctypes.byref(size))
        if code != OK:
            raise KeyError(f"the named data {key!r} cannot be read (runtime error 0x{code:x})")
        return buffer.raw[: size.value]

    @property
    def compile_specs(self) -> dict[str, bytes]:
        """The delegate's compile specs, key -> value."""
        specs: dict[str, bytes] = {}
        index = 0
        while True:
            key, value, size = ctypes.c_char_p(), ctypes.c_void_p(), ctypes.c_uint64()
            if self._lib.bksim_compile_spec(
                self._handle, index, ctypes.byref(key), ctypes.byref(value), ctypes.byref(size)
            ):
                return specs
            specs[(key.value or b"").decode(errors="replace")] = (
                ctypes.string_at(value, size.value) if size.value else b""
            )
            index += 1

    @property
    def method_name(self) -> str:
        return (self._lib.bksim_method_name(self._handle) or b"").decode(errors="replace")


def _say(backend_id: str, message: str) -> None:
    sys.stderr.write(f"{backend_id} (simulated): {message}\n")
    sys.stderr.flush()


def _tensor(arg: _Arg) -> Any:
    """A tensor over the argument's memory (no copy), laid out in its dim order (channels-last and the
    like keep their strides, as the runtime laid them out)."""
    import torch

    dtype = getattr(torch, SCALAR_TYPES[arg.dtype])
    shape = list(arg.sizes[: arg.ndim])
    if arg.nbytes == 0 or not arg.data:
        return torch.empty(shape, dtype=dtype)
    order = list(arg.dim_order[: arg.ndim])
    if sorted(order) != list(range(arg.ndim)):
        raise ValueError(
            f"the runtime passed a tensor of dim order {order}, not a permutation of its dimensions"
        )
    strides = [0] * arg.ndim
    step = 1
    for dim in reversed(order):
        strides[dim] = step
        step *= shape[dim]
    raw = (ctypes.c_char * arg.nbytes).from_address(arg.data)
    flat = torch.frombuffer(raw, dtype=dtype)
    return flat.as_strided(shape, strides)


class _Served:
    """One registered backend id: its simulator and the delegates it holds."""

    def __init__(
        self, lib: ctypes.CDLL, backend_id: str, simulator: Callable[[bytes, SimulatorContext], Any]
    ):
        self.lib = lib
        self.backend_id = backend_id
        self.simulator = simulator
        self.delegates: dict[int, Any] = {}
        self.next_id = 1
        self.lock = threading.Lock()

    def init(self, slot: int, ctx: int, data: int, size: int, out: Any) -> int:
        payload = ctypes.string_at(data, size) if size else b""
        try:
            delegate = self.simulator(payload, SimulatorContext(self.lib, ctx))
            count = delegate.num_inputs
            if (
                not isinstance(count, int)
                or isinstance(count, bool)
                or count < 0
                or not callable(delegate.run)
            ):
                raise TypeError(
                    "the simulated delegate needs num_inputs (an int >= 0) and a run(inputs) method"
                )
        except IncompatibleBlob as exc:
            _say(self.backend_id, f"the simulator refused the payload as incompatible: {exc}")
            return DELEGATE_INVALID_COMPATIBILITY
        except BaseException as exc:  # noqa: BLE001  (nothing may cross back into C++)
            _say(self.backend_id, f"the simulator refused the payload: {type(exc).__name__}: {exc}")
            return INVALID_PROGRAM
        with self.lock:
            handle = self.next_id
            self.next_id += 1
            self.delegates[handle] = delegate
        out[0] = handle
        return OK

    def execute(self, slot: int, handle: int, nargs: int, args: Any, ctx: int) -> int:
        try:
            with self.lock:
                delegate = self.delegates[handle]
            return self._execute(delegate, nargs, args, ctx)
        except BaseException as exc:  # noqa: BLE001  (nothing may cross back into C++)
            _say(self.backend_id, f"the simulator failed to execute: {type(exc).__name__}: {exc}")
            return INTERNAL

    def _execute(self, delegate: Any, nargs: int, args: Any, ctx: int) -> int:
        import torch

        count = delegate.num_inputs
        if count > nargs:
            _say(
                self.backend_id,
                f"the simulated delegate declares {count} inputs; the runtime passed {nargs} arguments",
            )
            return INVALID_ARGUMENT
        inputs: list[Any] = []
        for i in range(count):
            arg = args[i]
            if arg.kind == TENSOR:
                inputs.append(_tensor(arg))
            elif arg.kind in (INT, BOOL):
                inputs.append(bool(arg.ival) if arg.kind == BOOL else int(arg.ival))
            elif arg.kind == DOUBLE:
                inputs.append(float(arg.dval))
            elif arg.kind == NONE:
                inputs.append(None)
            else:
                _say(self.backend_id, f"argument {i} of the delegate is of a kind the bridge does not pass")
                return INVALID_ARGUMENT
        planned = nargs - count
        places = [
            _tensor(args[count + i]) if args[count + i].kind == TENSOR else None for i in range(planned)
        ]
        outputs = list(delegate.run(inputs, places))
        if len(outputs) != planned:
            _say(
                self.backend_id, f"the simulator returned {len(outputs)} outputs; the program plans {planned}"
            )
            return INVALID_ARGUMENT
        for offset, value in enumerate(outputs):
            index = count + offset
            arg = args[index]
            if arg.kind != TENSOR or not isinstance(value, torch.Tensor):
                _say(
                    self.backend_id,
                    f"output {offset}: only tensors are passed back (got {type(value).__name__})",
                )
                return INVALID_ARGUMENT
            want = SCALAR_TYPES.get(arg.dtype)
            if str(value.dtype) != f"torch.{want}":
                _say(self.backend_id, f"output {offset} is {value.dtype}; the program plans torch.{want}")
                return INVALID_ARGUMENT
            shape = list(value.shape)
            if shape != list(arg.sizes[: arg.ndim]):
                sizes = (ctypes.c_int64 * MAX_DIMS)(*shape)
                code = (
                    self.lib.bksim_resize(ctx, index, len(shape), sizes)
                    if len(shape) == arg.ndim
                    else INVALID_ARGUMENT
                )
                if code != OK:
                    _say(
                        self.backend_id,
                        f"output {offset} has shape {shape}; the program plans {list(arg.sizes[: arg.ndim])} "
                        f"and cannot resize it (error 0x{code:x})",
                    )
                    return code
                arg = args[index]
            target = _tensor(arg)
            if value.data_ptr() != target.data_ptr() or value.stride() != target.stride():
                target.copy_(value)
        return OK

    def destroy(self, slot: int, handle: int) -> None:
        with self.lock:
            self.delegates.pop(handle, None)


def _guarded(fn: Callable[..., Any], backend_id: str, failed: Any) -> Callable[..., Any]:
    """``fn`` as a ctypes callback may be: an exception it lets out would be printed by ctypes and the C++
    side would read 0 (success), so it is reported and ``failed`` returned instead."""

    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except BaseException as exc:  # noqa: BLE001  (nothing may cross back into C++)
            _say(backend_id, f"the simulator bridge failed: {type(exc).__name__}: {exc}")
            return failed

    return call


_registered: dict[str, tuple[_Served, tuple[Any, Any, Any]]] = {}
_register_lock = threading.Lock()


def register(
    backend_id: str, simulator: Callable[[bytes, SimulatorContext], Any], root: Path | None = None
) -> Path:
    """Registers ``backend_id`` in this process's ExecuTorch runtime, its delegates run by ``simulator``;
    returns the bridge library's path. Registering the same id again is refused (the runtime holds one
    backend per id). SimulatorError saying why otherwise."""
    import executorch.runtime  # noqa: F401  (the runtime must be in the process before the bridge)

    with _register_lock:
        if backend_id in _registered:
            raise SimulatorError(f"{backend_id!r} is already registered with a simulator in this process")
        library = bridge_library(root)
        try:
            lib = load_runtime(library, None, distribution="executorch-backend-kit")
        except RuntimeLoadError as exc:
            raise SimulatorError(f"the simulator bridge cannot be loaded: {exc}") from None
        lib.bksim_register.restype = ctypes.c_int32
        lib.bksim_register.argtypes = [ctypes.c_char_p, _INIT, _EXECUTE, _DESTROY]
        lib.bksim_named_data.restype = ctypes.c_int32
        lib.bksim_named_data.argtypes = [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.c_void_p,
            ctypes.c_uint64,
            ctypes.POINTER(ctypes.c_uint64),
        ]
        lib.bksim_compile_spec.restype = ctypes.c_int32
        lib.bksim_compile_spec.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint64,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_uint64),
        ]
        lib.bksim_method_name.restype = ctypes.c_char_p
        lib.bksim_method_name.argtypes = [ctypes.c_void_p]
        lib.bksim_resize.restype = ctypes.c_int32
        lib.bksim_resize.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint64,
            ctypes.c_int32,
            ctypes.POINTER(ctypes.c_int64),
        ]
        served = _Served(lib, backend_id, simulator)
        callbacks = (
            _INIT(_guarded(served.init, backend_id, INTERNAL)),
            _EXECUTE(_guarded(served.execute, backend_id, INTERNAL)),
            _DESTROY(_guarded(served.destroy, backend_id, None)),
        )
        code = lib.bksim_register(backend_id.encode(), *callbacks)
        if code != OK:
            raise SimulatorError(
                f"registering {backend_id!r} with the simulator bridge failed (runtime error 0x{code:x}): is "
                "another backend registered under that id, or a runtime of another executorch release loaded?"
            )
        _registered[backend_id] = (served, callbacks)  # the callbacks live as long as the process
        return library


def loader(backend_id: str, simulator: Callable[[bytes, SimulatorContext], Any]) -> Callable[[], Path]:
    """A ``load_runtime``-shaped function registering ``backend_id`` with ``simulator`` (once per process)."""

    def load() -> Path:
        if backend_id in _registered:
            return bridge_library()
        return register(backend_id, simulator)

    return load


def simulated_delegate(num_inputs: int, run: Callable[[list[Any], list[Any]], Sequence[Any]]) -> Any:
    """A simulated delegate of ``num_inputs`` inputs computed by ``run(inputs, outputs)`` (for simulators
    that need no class)."""

    class _Delegate:
        pass

    delegate = _Delegate()
    delegate.num_inputs = num_inputs  # type: ignore[attr-defined]
    delegate.run = run  # type: ignore[attr-defined]
    return delegate
