"""Descriptors of the broken backends, for ``--backend broken_backends.descriptors:NAME``.

Runtime libraries come from $BROKEN_RUNTIME_DIR (built by the tests from runtime/).
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
from pathlib import Path

import torch
from packaging.version import Version
from torch.fx.passes.operator_support import OperatorSupportBase

import broken_backends.backends  # noqa: F401  (makes the backend ids resolvable)
from backend_kit.aot import schema_name
from conformance.descriptor import (
    AcceptanceRulesFile,
    BackendDescriptor,
    IncompatibleBlob,
    MutableStateSupport,
    NamedDataSupport,
    SampleModel,
)
from reference_backend.conformance import DESCRIPTOR as REFERENCE
from reference_backend.ops import why_unsupported
from reference_backend.partitioner import ReferencePartitioner


def partitioner_for(backend_id: str, base=ReferencePartitioner):
    return type(f"{backend_id}Partitioner", (base,), {"backend_id": backend_id})


def named_data_through(cls) -> NamedDataSupport:
    """The reference backend's named-data support with its partitioners made as ``cls`` (same compile specs)."""
    return dataclasses.replace(
        REFERENCE.named_data,
        make_partitioners=lambda: [
            cls(list(p.compile_specs)) for p in REFERENCE.named_data.make_partitioners()
        ],
    )


def runtime_loader(library: str):
    def load():
        import executorch.runtime  # noqa: F401  (the runtime the library binds to)

        path = Path(os.environ["BROKEN_RUNTIME_DIR"]) / library
        ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        return path

    return load


#: The capabilities whose samples a variant with its own sample_models does not have.
WITHOUT_NEW_CAPABILITIES = {"quantized": None, "dynamic_shapes": None, "composition": None}


def variant(backend_id: str, partitioner=None, **changes) -> BackendDescriptor:
    cls = partitioner or partitioner_for(backend_id)
    fields = {
        "backend_id": backend_id,
        "make_partitioners": lambda: [cls()],
        "load_runtime": None,
        "runtime_libraries": lambda: (),
    }
    if backend_id != REFERENCE.backend_id:
        # The reference rules name ReferenceBackend: a backend of another id declares none (RT-7 n/a).
        fields["acceptance"] = None
    fields.update(changes)
    return dataclasses.replace(REFERENCE, **fields)


# The partitioner delegates to an id that no BackendDetails subclass has.
WRONG_ID = variant("ReferenceBackend", partitioner=partitioner_for("ReferenceBackendV2"))

NONDETERMINISTIC = variant("NondeterministicBackend")

MISSING_HEADER = variant("HeaderlessBackend")

# The package scanned for imports contains a private executorch import.
PRIVATE_IMPORT = dataclasses.replace(REFERENCE, python_package="private_import_vendor")


class _GreedySupport(OperatorSupportBase):
    """Also claims exp, which the runtime cannot execute."""

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return why_unsupported(node) is None or schema_name(node.target) == "aten::exp"


class _GreedyPartitioner(ReferencePartitioner):
    def operator_support(self):
        return _GreedySupport()


CLAIMS_TOO_MUCH = variant("ReferenceBackend", partitioner=_GreedyPartitioner)

WRONG_NUMERICS = variant(
    "WrongNumericsBackend",
    load_runtime=runtime_loader("libwrong_numerics_backend.so"),
    runtime_libraries=lambda: [Path(os.environ["BROKEN_RUNTIME_DIR"]) / "libwrong_numerics_backend.so"],
)

ACCEPTS_INCOMPATIBLE = variant(
    "LenientBackend",
    load_runtime=runtime_loader("liblenient_backend.so"),
    runtime_libraries=lambda: [Path(os.environ["BROKEN_RUNTIME_DIR"]) / "liblenient_backend.so"],
)

# Not broken: the reference backend without the optional named-data capability.
NO_NAMED_DATA = dataclasses.replace(
    REFERENCE, named_data=None, quantized=None, dynamic_shapes=None, composition=None, acceptance=None
)


def _broken_library(name: str) -> dict:
    path = lambda: Path(os.environ["BROKEN_RUNTIME_DIR"]) / name  # noqa: E731
    return {"load_runtime": runtime_loader(name), "runtime_libraries": lambda: [path()]}


_MisbehavingPartitioner = partitioner_for("MisbehavingBackend")

# Crashes or hangs where $MISBEHAVE says (init:segv, execute:abort, init:hang, ...); the named-data
# sample goes through the same runtime, so the NDATA runtime checks meet the fault too.
MISBEHAVING = variant(
    "MisbehavingBackend",
    version="0.1.0",  # what tests/conformance/broken/runtime builds into the runtime's messages
    sample_models=tuple(m for m in REFERENCE.sample_models if m.name in ("mlp", "large_mlp")),
    partitioner=_MisbehavingPartitioner,
    named_data=named_data_through(_MisbehavingPartitioner),
    **WITHOUT_NEW_CAPABILITIES,
    **_broken_library("libmisbehaving_backend.so"),
)

# The reference runtime, refusing blobs of a newer major but running a newer minor it cannot know
# (run with LENIENT_MINOR_ONLY=1).
ACCEPTS_NEWER_MINOR = dataclasses.replace(ACCEPTS_INCOMPATIBLE, version="0.1.0")  # the version built in

# Not broken: a pre-release of the backend; the runtime writes its release (0.2.0) in log lines.
PRERELEASE = dataclasses.replace(REFERENCE, version=f"{REFERENCE.version}rc1")

PROCESS_DEPENDENT = variant("ProcessDependentBackend")


class _ClampToRelu(ReferencePartitioner):
    """Not broken: rewrites clamp(x, min=0) into relu before decomposition (the public
    transform_for_pre_decomposition hook), so that the runtime's relu kernel takes it."""

    def transform_for_pre_decomposition(self, exported_program):
        graph = exported_program.graph_module.graph
        for node in graph.nodes:
            if node.op == "call_function" and node.target in (
                torch.ops.aten.clamp.default,
                torch.ops.aten.clamp_min.default,
            ):
                low = node.args[1] if len(node.args) > 1 else node.kwargs.get("min")
                high = node.args[2] if len(node.args) > 2 else node.kwargs.get("max")
                if low == 0 and high is None:
                    node.target, node.args, node.kwargs = torch.ops.aten.relu.default, (node.args[0],), {}
        graph.lint()
        exported_program.graph_module.recompile()
        return exported_program


class _LinearClamp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.clamp(self.fc(x), min=0.0)


PRE_DECOMPOSITION = variant(
    "ReferenceBackend",
    partitioner=_ClampToRelu,
    named_data=None,
    sample_models=(SampleModel("linear_clamp", lambda: (_LinearClamp(), (torch.randn(2, 8),))),),
    load_runtime=REFERENCE.load_runtime,
    runtime_libraries=REFERENCE.runtime_libraries,
    **WITHOUT_NEW_CAPABILITIES,
)


def _no_driver():
    raise RuntimeError("no NPU driver found")


RAISING_PARTITIONERS = variant("ReferenceBackend", make_partitioners=_no_driver)


def _bad_make():
    raise ValueError("weights file missing")


BAD_SAMPLE = dataclasses.replace(
    REFERENCE,
    named_data=None,
    sample_models=(*REFERENCE.sample_models[:1], SampleModel("broken", _bad_make)),
    **WITHOUT_NEW_CAPABILITIES,
)


def _raises_type_error():
    raise TypeError("runtime_libraries() takes a path")


RUNTIME_LIBRARIES_RAISE = dataclasses.replace(REFERENCE, runtime_libraries=_raises_type_error)

MISSING_LIBRARY = dataclasses.replace(
    REFERENCE, runtime_libraries=lambda: [Path("/nonexistent/libvendor_runtime.so")]
)

# The library named is not the one that registered the backend.
OTHER_LIBRARY = dataclasses.replace(
    REFERENCE,
    runtime_libraries=lambda: [Path(os.environ["BROKEN_RUNTIME_DIR"]) / "liblenient_backend.so"],
)

# The package scanned for imports is a single module that imports a private module dynamically.
SINGLE_MODULE_PRIVATE_IMPORT = dataclasses.replace(REFERENCE, python_package="single_module_vendor")
# Reaches private modules through strings (sys.modules, importlib.import_module, find_spec) only.
STRING_IMPORT = dataclasses.replace(REFERENCE, python_package="string_import_vendor")

# The runtime library named by $FOREIGN_RUNPATH_LIBRARY (built by the test) carries a RUNPATH
# into a build environment that is not this one.
FOREIGN_RUNPATH = dataclasses.replace(
    REFERENCE, runtime_libraries=lambda: [Path(os.environ["FOREIGN_RUNPATH_LIBRARY"])]
)

# --------------------------------------------------------------------------- quantized, dynamic, composition


class _KeepsQdqOnCpu(OperatorSupportBase):
    """Refuses every quantize/dequantize node: the float operators between them are still claimed."""

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return why_unsupported(node) is None and not (schema_name(node.target) or "").startswith(
            "quantized_decomposed::"
        )


class _LeavesDequantizePartitioner(ReferencePartitioner):
    def operator_support(self):
        return _KeepsQdqOnCpu()


# The quantized sample is delegated as float operators: its dequantize nodes (and quantize) stay on CPU
# and the delegate receives floats (C-QNT-2).
LEAVES_DEQUANTIZE = variant(
    "ReferenceBackend",
    partitioner=_LeavesDequantizePartitioner,
    load_runtime=REFERENCE.load_runtime,
    runtime_libraries=REFERENCE.runtime_libraries,
)

# Every quantized op's output zero point is one higher than it should be (backends.RequantOffByOneBackend).
REQUANT_OFF_BY_ONE = variant("RequantOffByOneBackend", **_broken_library("librequant_off_by_one_backend.so"))

# The runtime dies with SIGSEGV on an input dimension above its bound (runtime/crashes_above_bound_backend.cpp).
CRASHES_ABOVE_BOUND = variant(
    "CrashesAboveBoundBackend",
    version="0.1.0",
    **_broken_library("libcrashes_above_bound_backend.so"),
)


class _StealsExp(OperatorSupportBase):
    """Also claims exp, which XNNPACK would take and the runtime cannot execute."""

    def is_node_supported(self, submodules, node: torch.fx.Node) -> bool:
        return why_unsupported(node) is None or schema_name(node.target) == "aten::exp"


# The exp of the composition sample goes to GreedyBackend, which writes it as an opcode its runtime
# does not have (backends.GreedyBackend): XNNPACK is left nothing and the program does not load.
STEALS_FROM_XNNPACK = variant(
    "GreedyBackend",
    partitioner=type(
        "GreedyPartitioner",
        (ReferencePartitioner,),
        {"backend_id": "GreedyBackend", "operator_support": lambda self: _StealsExp()},
    ),
    **_broken_library("libgreedy_backend.so"),
)


def _reference_rules() -> tuple[dict, str]:
    """(the reference backend's acceptance rules as JSON data, the release of the runtime it loads)."""
    import json

    assert REFERENCE.acceptance is not None
    rules = json.loads(Path(REFERENCE.acceptance.path).read_text())
    release = Version(REFERENCE.version).base_version
    assert release in rules["runtimes"], f"the reference rules have no entry for {release}"
    return rules, release


_REFERENCE_RULES, _RELEASE = _reference_rules()
_NEWEST_MINOR = _REFERENCE_RULES["runtimes"][_RELEASE]["blob_format_minors"][1]


def _rules(name: str, **changes) -> AcceptanceRulesFile:
    """The reference backend's own acceptance rules with ``changes`` made to the entry of the runtime this
    descriptor loads, written once to a file named by its content (the vendor process and the judge read
    the same path). Derived, not copied, so the broken rules stay one change away from the real ones when
    the reference backend moves to a new version or blob format."""
    import copy
    import hashlib
    import json
    import tempfile

    rules = copy.deepcopy(_REFERENCE_RULES)
    rules["runtimes"][_RELEASE].update(changes)
    text = json.dumps(rules, indent=1, sort_keys=True) + "\n"
    out = Path(tempfile.gettempdir()) / "conformance-broken-rules"
    out.mkdir(exist_ok=True)
    path = out / f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.partial")
        partial.write_text(text)
        os.replace(partial, path)
    return AcceptanceRulesFile(str(path))


# The reference runtime with acceptance rules that do not describe it: rules claiming it reads one blob
# format minor past its newest (it refuses it with 0x30), and rules claiming it reads neither header
# format 2 nor blob formats older than 1.2 (it runs them). RT-7 catches both; RT-5 passes them (they
# refuse what it forges).
CLAIMS_NEWER_MINOR = dataclasses.replace(
    REFERENCE, acceptance=_rules("claims_newer_minor", blob_format_minors=[0, _NEWEST_MINOR + 1])
)
UNDERSTATES_OLD_FORMATS = dataclasses.replace(
    REFERENCE,
    acceptance=_rules(
        "understates_old_formats", header_formats=[1, 1], blob_format_minors=[2, _NEWEST_MINOR]
    ),
)

# Wrong across calls of a program with a mutated buffer (runtime/state_defects_backend.cpp). The runtime
# zeroes its inputs after a call, so the KV cache does not carry; of the samples, it keeps those whose
# delegate inputs are dead after the call (a program reading a delegate's input later, quant_net, shows
# the defect without state, in RT-3).
SCRATCHES_STATE = variant(
    "ScratchesStateBackend",
    version="0.1.0",
    sample_models=tuple(m for m in REFERENCE.sample_models if m.name in ("mlp", "large_mlp")),
    named_data=None,
    **WITHOUT_NEW_CAPABILITIES,
    **_broken_library("libscratches_state_backend.so"),
)
# The same runtime judged for what it does to its inputs: RT-8 sees the zeroed input of a stateless program.
WRITES_INPUTS = SCRATCHES_STATE

# The runtime binds the inputs of identical delegates once for every load: two loaded methods executed
# with the same inputs agree (RT-4), two with their own states share the first one's.
BINDS_ONCE = variant("BindsOnceBackend", version="0.1.0", **_broken_library("libbinds_once_backend.so"))

# Right in every program, but its library also registers the reference runtime under a generic id,
# "GenericNpuBackend" (runtime/extra_id_backend.cpp): RT-6 names the extra id.
EXTRA_ID = variant("ExtraIdBackend", version="0.1.0", **_broken_library("libextra_id_backend.so"))


def _accepted_forgery(blob: bytes) -> list[IncompatibleBlob]:
    """Says it forges a blob of a newer format, but changes only the writer's patch release in the header:
    a blob the runtime rightly runs, so the hook proves nothing of the runtime's refusal."""
    from backend_kit.header import decode
    from conformance.inspection.forge import with_header_fields

    major, minor, patch = decode(blob).backend_version
    forged = with_header_fields(blob, backend_version=(major, minor, patch + 1))
    return [IncompatibleBlob("blob format 9.0", forged, "9.0", ".".join(map(str, decode(blob).blob_format)))]


# The reference backend with an incompatible_blobs hook whose blob is not incompatible: RT-5 fails, naming
# the hook's label, since the runtime loads it.
FORGES_ACCEPTED = dataclasses.replace(REFERENCE, incompatible_blobs=_accepted_forgery)

# Declares partitioners that claim mutated buffers, but they are the reference partitioners, which
# leave the cache update on CPU: STATE-2 holds the declaration to what lowering shows.
CLAIMS_NO_STATE = dataclasses.replace(
    REFERENCE, mutable_state=MutableStateSupport(make_partitioners=REFERENCE.make_partitioners)
)

# Right with one loaded method, wrong with two methods of one program loaded together: the runtime
# executes every handle with the graph of the latest init (runtime/last_init_wins_backend.cpp).
LAST_INIT_WINS = variant(
    "LastInitWinsBackend",
    version="0.1.0",
    sample_models=tuple(m for m in REFERENCE.sample_models if m.name in ("mlp", "large_mlp")),
    named_data=None,
    **WITHOUT_NEW_CAPABILITIES,
    **_broken_library("liblast_init_wins_backend.so"),
)

# Declares named data, but its partitioners keep every constant inside the blobs (the reference
# partitioners without named-data compile specs): a program of two methods sharing one module holds
# the weights twice (MTH-2).
WEIGHTS_TWICE = dataclasses.replace(
    REFERENCE,
    named_data=NamedDataSupport(
        sample="large_mlp",
        make_partitioners=REFERENCE.make_partitioners,
        max_blob_bytes=REFERENCE.named_data.max_blob_bytes,
    ),
)


#: Declares that the reference backend's max pooling leaves a NaN out (nan_mode="ignore"), which it does not:
#: its NaN cases propagate NaN as eager PyTorch does, and OPS-2 judges them by the declaration.
DECLARES_NAN_IGNORED = dataclasses.replace(
    REFERENCE, operators=REFERENCE.operators.ignoring_nan("aten::max_pool2d_with_indices")
)


def _xnnpack_declaring_nan_ignored():
    from scoreboard.xnnpack.descriptor import OPERATORS, descriptor

    return descriptor(
        OPERATORS.ignoring_nan("aten::maximum", "aten::minimum", "aten::max_pool2d_with_indices")
    )


def __getattr__(name: str):
    """XNNPACK_DECLARES_NAN_IGNORED, made when it is named (importing XNNPACK's descriptor takes seconds):
    ExecuTorch's XNNPACK declaring nan_mode="ignore" (IEEE maxNum/minNum) for maximum, minimum and max pooling,
    which it does not compute either: its result depends on the operands' order (maximum(-2.5, nan) is NaN,
    maximum(nan, 0) is 0)."""
    if name == "XNNPACK_DECLARES_NAN_IGNORED":
        return _xnnpack_declaring_nan_ignored()
    raise AttributeError(name)


# Right while its named data fits in 4 GiB, wrong past it: the runtime packs the named data into one arena
# and keeps each key's offset in 32 bits (runtime/narrow_offsets_backend.cpp; NARROW_OFFSET_BITS=24 narrows
# them to 24 bits, for a quick test crossing 2^24 with EXECUTORCH_CONFORMANCE_LARGE_WEIGHTS=16MiB). Its blobs
# record no named-data checksums (broken_backends.backends.NarrowOffsetsBackend).
_NarrowOffsetsPartitioner = partitioner_for("NarrowOffsetsBackend")
NARROW_OFFSETS = variant(
    "NarrowOffsetsBackend",
    version="0.1.0",
    partitioner=_NarrowOffsetsPartitioner,
    sample_models=tuple(m for m in REFERENCE.sample_models if m.name in ("mlp", "large_mlp")),
    named_data=dataclasses.replace(named_data_through(_NarrowOffsetsPartitioner), required_keys=None),
    **WITHOUT_NEW_CAPABILITIES,
    **_broken_library("libnarrow_offsets_backend.so"),
)

# The reference runtime run with flush-to-zero and denormals-are-zero on (runtime/flushes_subnormals_backend.cpp):
# a subnormal operand is read as zero. Undeclared, OPS-2 fails its subnormal cases (sqrt, log, ceil of a
# subnormal, a subnormal scaled by 2^60); declared (subnormals="flushed"), they pass and the report says so.
FLUSHES_SUBNORMALS = variant(
    "FlushesSubnormalsBackend",
    version="0.1.0",
    sample_models=tuple(m for m in REFERENCE.sample_models if m.name in ("mlp", "large_mlp")),
    named_data=None,
    **WITHOUT_NEW_CAPABILITIES,
    **_broken_library("libflushes_subnormals_backend.so"),
)
# Not broken: the same runtime, declaring what it does.
FLUSHES_SUBNORMALS_DECLARED = dataclasses.replace(
    FLUSHES_SUBNORMALS, operators=FLUSHES_SUBNORMALS.operators.flushing_subnormals()
)


class _FaultingNamedDataPartitioner(ReferencePartitioner):
    """The reference named-data partitioner that hangs (``fault = "hang"``) or crashes with SIGSEGV
    (``"segv"``) when it partitions a program with more than 16 linears: NDATA-5's program, made ahead
    when the run begins (``Context.ahead``), while the samples' lowerings stay right."""

    fault = "hang"

    def partition(self, exported_program):
        linears = sum(1 for n in exported_program.graph.nodes if "linear" in str(n.target))
        if linears > 16:
            if self.fault == "hang":
                import time

                time.sleep(3600)
            ctypes.string_at(0)  # a read of address 0: SIGSEGV
        return super().partition(exported_program)


def _faulting_named_data(fault: str) -> BackendDescriptor:
    cls = type(f"NamedData{fault.title()}Partitioner", (_FaultingNamedDataPartitioner,), {"fault": fault})
    return dataclasses.replace(REFERENCE, named_data=named_data_through(cls))


# Their named-data lowering of NDATA-5's program hangs, or crashes: the check meets it as its own failure.
HANGS_LOWERING_LARGE_WEIGHTS = _faulting_named_data("hang")
CRASHES_LOWERING_LARGE_WEIGHTS = _faulting_named_data("segv")
