"""How a vendor describes their backend to the suite.

A vendor package exposes a ``BackendDescriptor`` object, found either through
the entry point group ``executorch_conformance.backends`` (by name) or as
``module:attribute`` on the command line.

Each field is declared once, below, with its kind (``conformance.descriptor_fields``): the JSON form
in which it reaches the process that judges, its validation and the capability list all come from
that declaration. A descriptor is built when the vendor's module is imported and never raises there:
what is wrong with it is kept and reported, naming the descriptor, the field and the value, when that
descriptor is loaded (``load_descriptor``), so the other descriptors of the module still load. This is
vendor-facing API: docs/api-stability.md says what may change and how.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from conformance.deprecations import SuiteDeprecationWarning, is_error, notice
from conformance.descriptor_fields import (
    RecordedError,
    capability,
    capability_absent,
    code,
    custom,
    data,
    listing,
    records,
    sample_name,
)
from conformance.descriptor_fields import capabilities as _capabilities
from conformance.descriptor_fields import from_json as _from_json
from conformance.descriptor_fields import problems as _problems
from conformance.descriptor_fields import to_json as _to_json
from conformance.operators.corpus import normalize
from conformance.operators.support import OperatorSupport, is_schema_name

ENTRY_POINT_GROUP = "executorch_conformance.backends"


class DescriptorError(ValueError):
    """The backend could not be found, or its descriptor is malformed."""


def raised(exc: BaseException) -> str:
    """'Type: message' of an exception, or the text of a RecordedError."""
    return exc.text if isinstance(exc, RecordedError) else f"{type(exc).__name__}: {exc}"


@dataclasses.dataclass(frozen=True)
class SampleModel:
    """A model the backend claims to run: ``make()`` returns (module, example inputs).

    ``delegated`` says whether lowering must delegate at least one subgraph;
    ``rtol``/``atol`` are the tolerances the backend declares against eager PyTorch;
    ``make_inputs(generator)``, if given, returns fresh inputs for the repeated-use
    check (RT-4), drawn from the ``torch.Generator`` it is handed; without it RT-4
    reuses the sample's own inputs.
    """

    name: str = data(str)
    make: Callable[[], tuple[Any, tuple[Any, ...]]] = code()
    rtol: float = data(float, default=1e-5)
    atol: float = data(float, default=1e-5)
    delegated: bool = data(bool, default=True)
    make_inputs: Callable[[Any], tuple[Any, ...]] | None = code(optional=True)


@dataclasses.dataclass(frozen=True)
class NamedDataSupport:
    """How a backend keeps large constants out of its blobs as ExecuTorch named
    data in an external .ptd file (contract clauses C-NDATA-1..4).

    sample:             name of a SampleModel of ``sample_models``, lowered with
                        ``make_partitioners`` for the NDATA checks.
    make_partitioners:  returns fresh partitioners whose compile specs turn named
                        data on and put it into one external file (TAG.ptd).
    max_blob_bytes:     the most bytes any delegate blob of that sample may have
                        when lowered so.
    required_keys:      optional: a blob -> the named-data keys it needs, each with
                        the external file name it expects ("weights.ptd") or None
                        (inside the .pte). Lets the suite check every key; without
                        it only the presence of named data is checked.
    """

    sample: str = sample_name()
    make_partitioners: Callable[[], Sequence[Any]] = code()
    max_blob_bytes: int = data(int, positive=True)
    required_keys: Callable[[bytes], Sequence[tuple[str, str | None]]] | None = code(optional=True)


@dataclasses.dataclass(frozen=True)
class QuantizedSupport:
    """How a backend runs PT2E-quantized models (contract clauses C-QNT-1..3).

    sample:          name of a SampleModel (a float module) that the suite quantizes:
                     export, prepare_pt2e(make_quantizer()), calibrate on the sample's
                     inputs (and make_inputs, if declared), convert_pt2e, export again
                     and lower with make_partitioners().
    make_quantizer:  returns a fresh quantizer (a torchao.quantization.pt2e.quantizer.Quantizer).
    max_steps:       outputs must be within this many quantization steps (the scale of
                     the output's dequantize) of the converted, fake-quantized model.
    every_sample:    the backend takes only quantized graphs (an integer-only accelerator): the suite
                     quantizes every sample model the same way before any check lowers it, and its
                     eager outputs are the converted model's. Each sample's rtol/atol then bound the
                     difference from that model. Default False: samples are lowered as make() returns them.
    """

    sample: str = sample_name()
    make_quantizer: Callable[[], Any] = code()
    max_steps: float = data(float, default=1.0, positive=True)
    every_sample: bool = data(bool, default=False)


@dataclasses.dataclass(frozen=True)
class DynamicShapesSupport:
    """How a backend runs programs exported with dimensions bounded above
    (contract clauses C-DYN-1..2).

    sample:          name of a SampleModel exported with ``dynamic_shapes()``.
    dynamic_shapes:  returns the ``dynamic_shapes`` argument of torch.export.export,
                     every dynamic dimension a torch.export.Dim with a ``max``. At least
                     one input should have two dynamic dimensions, so that a size
                     above one bound fits ExecuTorch's capacity and reaches the backend.
    """

    sample: str = sample_name()
    dynamic_shapes: Callable[[], Any] = code()


@dataclasses.dataclass(frozen=True)
class CompositionSupport:
    """How a backend shares a program with ExecuTorch's XNNPACK delegate (C-CMP-1..2).

    sample:  name of a SampleModel with operators this backend leaves to XNNPACK; it is
             lowered with [*make_partitioners(), XnnpackPartitioner()].
    """

    sample: str = sample_name()


@dataclasses.dataclass(frozen=True)
class MutableStateSupport:
    """Partitioners that claim the buffers a program mutates (a KV cache), with ExecuTorch's
    ``tag_mutated_buffer`` (C-STATE-2).

    make_partitioners:  returns fresh partitioners that delegate the buffer's update (index_copy_,
                        index_put_) and the buffer itself; the state checks' program is lowered
                        with them and must keep its state as with make_partitioners() (STATE-1).
    """

    make_partitioners: Callable[[], Sequence[Any]] = code()


@dataclasses.dataclass(frozen=True)
class IncompatibleBlob:
    """A blob in the backend's own format that claims a version its runtime cannot run, made by the
    descriptor's ``incompatible_blobs`` hook from a blob the backend wrote (C-RT-5, RT-5).

    label:      what was changed, in words ('flatbuffer identifier XN02').
    blob:       the changed blob.
    forged:     the version the changed blob claims, as the runtime's log line must name it ('XN02').
    supported:  a version the runtime reads, as the log line must name it ('XN01').
    """

    label: str
    blob: bytes
    forged: str
    supported: str


def _acceptance_problem(value: Any) -> str | None:
    from conformance.compat.rules import (
        rules_problem,  # jsonschema is imported only for a descriptor that declares rules
    )

    return rules_problem(value)


@dataclasses.dataclass(frozen=True)
class AcceptanceRulesFile:
    """Which blobs each runtime version of the backend accepts (clause C-RT-9, docs/compat.md).

    path:  a JSON rules file the vendor ships in its package (``conformance.compat.rules`` says its
           form): per runtime version, the header formats and blob formats it reads and the ExecuTorch
           releases it runs on. RT-7 checks the runtime against it; ``executorch-conformance compat``
           predicts from it whether a program runs on a device.
    """

    path: str = custom(str, str, _acceptance_problem, default=dataclasses.MISSING)


def _operators_json(value: Any) -> Any:
    return value.to_json()


def _operators_back(data: Any) -> Any:
    return OperatorSupport.from_json(data)


def _operators_problem(value: Any) -> str | None:
    return (
        None if isinstance(value, OperatorSupport) else f"is a {type(value).__name__}, not an OperatorSupport"
    )


def _vendor_frame() -> int:
    """The ``stacklevel`` of the first caller of ``__post_init__`` that is not the dataclass machinery (the
    generated ``__init__``, ``dataclasses.replace``) or this module: the vendor's line. A walk, not a
    constant: the depth differs between construction, ``replace`` (one more frame, two from Python 3.13)
    and a subclass's own ``__post_init__``, and ``warnings.warn(skip_file_prefixes=)`` needs Python 3.12."""
    import sys

    skip = {__file__, dataclasses.__file__}
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and (
        frame.f_code.co_filename in skip or frame.f_code.co_filename.startswith("<")
    ):
        frame, level = frame.f_back, level + 1
    return level


class _DeclaredOps(frozenset):
    """``supported_ops`` as stored: the name of every declared operator (what reading it gives).

    ``dataclasses.replace`` passes every init field back to ``__init__``, so this value comes back as
    the ``supported_ops`` of a copy that does not set the field; ``given`` is what the descriptor was
    given, the copy's ``supported_ops`` then, not this union. A frozenset subclass rather than an
    ``InitVar`` plus a property: ``replace`` reads an ``InitVar`` back through the same attribute, so
    that attribute has to carry both the names a reader wants and what was given."""

    given: Any = frozenset()


class _DeclaredOperators(OperatorSupport):
    """``operators`` as stored (every declared operator). Met again by ``__post_init__`` next to a
    ``supported_ops`` that is not a ``_DeclaredOps``, it is the copy's carried ``operators`` of
    ``replace(d, supported_ops=S)``: the copy declares S, with the declarations it has for those."""


@dataclasses.dataclass(frozen=True)
class BackendDescriptor:
    """Everything the suite needs to know about one backend.

    backend_id:         the id stored in the .pte (= the BackendDetails subclass name).
    distribution:       the vendor's Python distribution name (for packaging checks).
    python_package:     its import name (scanned for private ExecuTorch imports).
    version:            the backend's version, as written into blob headers.
    make_partitioners:  returns fresh partitioner instances for lowering.
    supported_ops:      deprecated since 0.6.0 (an error from 0.7.0; give ``operators``): operator schema
                        names the backend claims ("aten::add.Tensor"), each declared for float32. Read, it
                        is the name of every declared operator (the keys of ``operators``).
    sample_models:      models to lower, serialize and run; the first is the primary one.
    operators:          per operator, the dtypes it runs in (an OperatorSupport, or a mapping
                        op -> dtypes); every case of the operator corpus for them is run (C-OPS-*).
                        Read, it is every declared operator: those given here and, for float32,
                        those of a (deprecated) supported_ops it does not name.
    load_runtime:       loads the runtime library into this process (registration);
                        None if the backend ships no runtime for this host.
    runtime_libraries:  paths of the runtime libraries (hashed into the report; PKG-5..7 read them).
    named_data:         how the backend uses named data and .ptd files (C-NDATA-*);
                        None if it does not (the NDATA checks are then not applicable).
    quantized:          PT2E quantized flow (C-QNT-*); None if not declared.
    dynamic_shapes:     upper-bounded dynamic dimensions (C-DYN-*); None if not declared.
    composition:        lowering next to XNNPACK (C-CMP-*); None if not declared.
    registered_at_import: True for a backend that ExecuTorch's own Python runtime registers when
                        ``executorch.runtime`` is imported (a library its pybindings NEED: XNNPACK,
                        OpenVINO, QNN in the 1.5 wheels), before load_runtime() runs; RT-1 then
                        checks that it is registered by one of runtime_libraries() (C-RT-1).
    acceptance:         the acceptance rules file of the backend's runtimes (C-RT-9); None if not declared.
    engine_libraries:   paths of the libraries the runtime library opens itself at run time
                        (dlopen), such as an inference engine found through an environment variable
                        (OpenVINO's libopenvino_c): PKG-5 and PKG-6 check them as they check
                        runtime_libraries().
    lowering_environment: names of the environment variables whose values change what lowering
                        makes (a compiler option, a fault switch); their values are part of the
                        lowering cache's key, so a cached lowering never stands for another setting.
    mutable_state:      partitioners that claim mutated buffers (C-STATE-2); None if not declared (the
                        buffer's update is then left on CPU and STATE-1 judges the state).
    incompatible_blobs: for a backend whose blobs carry a version of their own format instead of the
                        contract header: called with a blob the backend wrote, returns IncompatibleBlob
                        values, each that blob changed to claim a version the runtime cannot run; RT-5
                        loads each and expects its refusal (C-RT-5). None: RT-5 forges the contract header.
    simulator:          for a backend with no runtime for this host (load_runtime None): the vendor's host
                        simulator, ``simulator(payload, context)`` -> a simulated delegate (the kit's
                        ``backend_kit.simulator``). The runtime checks then run each program in ExecuTorch's
                        runtime with the backend's delegates computed by the simulator, every result of
                        theirs marked simulated; what stays unjudged is docs/contract.md, "Simulated
                        runtimes". Ignored when load_runtime is set or a --target runs the runtime.

    A copy declares what it sets: ``dataclasses.replace(d, supported_ops=S)`` declares the operators
    of S (with the dtypes ``d`` declared for them), ``replace(d, operators=O)`` those of O and of the
    ``supported_ops`` ``d`` was given; a subclass's field defaults are given values like any other.
    """

    backend_id: str = data(str)
    distribution: str = data(str)
    python_package: str = data(str)
    version: str = data(str)
    make_partitioners: Callable[[], Sequence[Any]] = code()
    supported_ops: frozenset[str] = data(frozenset, items=str, default=frozenset())
    sample_models: tuple[SampleModel, ...] = records(SampleModel, at_least=1)
    load_runtime: Callable[[], Any] | None = code(optional=True)
    runtime_libraries: Callable[[], Sequence[Path]] = listing(default=lambda: ())
    named_data: NamedDataSupport | None = capability(NamedDataSupport, "named data support")
    quantized: QuantizedSupport | None = capability(QuantizedSupport, "quantized flow")
    dynamic_shapes: DynamicShapesSupport | None = capability(DynamicShapesSupport, "dynamic shapes")
    composition: CompositionSupport | None = capability(CompositionSupport, "composition with XNNPACK")
    operators: Any = custom(_operators_json, _operators_back, _operators_problem, default=None)
    registered_at_import: bool = data(bool, default=False)
    acceptance: AcceptanceRulesFile | None = capability(AcceptanceRulesFile, "acceptance rules")
    engine_libraries: Callable[[], Sequence[Path]] = listing(default=lambda: ())
    lowering_environment: frozenset[str] = data(frozenset, items=str, default=frozenset())
    mutable_state: MutableStateSupport | None = capability(
        MutableStateSupport, "partitioners claiming mutated buffers"
    )
    incompatible_blobs: Callable[[bytes], Sequence[IncompatibleBlob]] | None = code(optional=True)
    simulator: Callable[[bytes, Any], Any] | None = code(optional=True)

    def __post_init__(self) -> None:
        """Derives the declared operators (``supported_ops`` and ``operators`` as documented above) and
        keeps what is wrong or deprecated (never raises: ``load_descriptor`` reports it)."""

        found: list[str] = []
        deprecated: list[str] = []
        given_ops: Any = self.supported_ops
        given_opers = self.operators
        carried = isinstance(given_ops, _DeclaredOps)  # a copy that does not set supported_ops
        if carried:
            given_ops = given_ops.given
        claimed: set[str] = set()
        if not isinstance(given_ops, (set, frozenset, tuple, list)):
            found.append(
                f"supported_ops is {given_ops!r}, a {type(given_ops).__name__}, not a frozenset of str"
            )
            given_ops = frozenset()
        for op in sorted(given_ops, key=repr):
            if is_schema_name(op):
                claimed.add(normalize(op))
            elif isinstance(op, str):
                text = notice(
                    "supported_ops-non-schema", f"supported_ops lists {op!r}, not an operator schema name"
                )
                (found if is_error("supported_ops-non-schema") else deprecated).append(text)
            else:
                found.append(
                    f"supported_ops holds {op!r}, a {type(op).__name__}, not an operator schema name (str)"
                )
        try:
            explicit = OperatorSupport() if given_opers is None else OperatorSupport.coerce(given_opers)
        except (TypeError, ValueError, AttributeError) as exc:
            found.append(f"operators {given_opers!r:.80}: {exc}")
            explicit = OperatorSupport()
        if not carried and isinstance(given_opers, _DeclaredOperators):  # replace(d, supported_ops=S)
            explicit = OperatorSupport({op: d for op, d in explicit.items() if op in claimed})
        declared = _DeclaredOperators(
            dict(OperatorSupport.float32(*sorted(claimed - set(explicit))) | explicit)
        )
        ops = _DeclaredOps(declared)
        ops.given = given_ops
        if given_ops:
            text = notice("supported_ops", f"supported_ops is given ({len(given_ops)} operator names)")
            (found if is_error("supported_ops") else deprecated).append(text)
        object.__setattr__(self, "operators", declared)
        object.__setattr__(self, "supported_ops", ops)
        object.__setattr__(self, "_problems", tuple(found))
        object.__setattr__(self, "_deprecations", tuple(deprecated))
        for text in deprecated:
            warnings.warn(text, SuiteDeprecationWarning, stacklevel=_vendor_frame())

    def capabilities(self) -> list[str]:
        """The optional capabilities declared, which make conditional checks apply."""
        return _capabilities(self)

    def deprecations(self) -> tuple[str, ...]:
        """The deprecated forms this descriptor uses, each message naming its replacement."""
        return tuple(getattr(self, "_deprecations", ()))

    @property
    def quantizes_every_sample(self) -> bool:
        """Whether the suite quantizes every sample and every float corpus case of a ``quantized_only``
        operator with the backend's quantizer before lowering it (``quantized.every_sample``). The one
        reading of that field: every caller asks this (``tests/layering/test_every_sample_owner.py``)."""
        return self.quantized is not None and self.quantized.every_sample

    def sample(self, name: str) -> SampleModel:
        for model in self.sample_models:
            if model.name == name:
                return model
        raise KeyError(name)


#: Capability -> the reason a conditional check gives when the descriptor does not declare it (the
#: check is then exempt: ``verify`` accepts a conditional result as exempt only with this reason).
CAPABILITY_ABSENT: dict[str, str] = capability_absent(BackendDescriptor)


#: The key of the descriptor's JSON form that holds its deprecation messages (not a field).
DEPRECATIONS_KEY = "deprecations"


def to_info(descriptor: BackendDescriptor, call: Callable[[str, Callable[[], Any]], Any]) -> dict[str, Any]:
    """The descriptor's JSON form, made in the vendor process (``call(what, fn)`` runs the vendor's
    code there): every field by its kind, and the deprecation messages."""
    return {**_to_json(descriptor, "", call), DEPRECATIONS_KEY: list(descriptor.deprecations())}


def from_info(info: dict[str, Any]) -> BackendDescriptor:
    """The descriptor rebuilt from ``to_info``'s form, in the process that judges: every callable of the
    vendor's is a stand-in that refuses to run. ``supported_ops`` is left out: ``operators`` declares every
    operator, and given back it would be a deprecated form (the vendor process reported that already)."""
    descriptor = _from_json(BackendDescriptor, {k: v for k, v in info.items() if k != "supported_ops"})
    object.__setattr__(descriptor, "_deprecations", tuple(info.get(DEPRECATIONS_KEY, ())))
    return descriptor


def _validate(obj: Any, where: str) -> BackendDescriptor:
    """``obj`` if it is a valid descriptor; DescriptorError naming ``where`` (the descriptor), and each
    field that is wrong with its value, otherwise."""
    if not isinstance(obj, BackendDescriptor):
        raise DescriptorError(
            f"{where} is a {type(obj).__name__}, not a conformance.descriptor.BackendDescriptor"
        )
    found = list(getattr(obj, "_problems", ())) + _problems(obj)
    if found:
        raise DescriptorError(f"{where}: " + "; ".join(found))
    return obj


#: The descriptors the suite ships for delegates of ExecuTorch itself (scoreboard/, in the package), by the
#: backend id their programs name: ``--backend`` takes them as 'module:attribute'.
SHIPPED_DESCRIPTORS = {
    "XnnpackBackend": "scoreboard.xnnpack.descriptor:DESCRIPTOR",
    "OpenvinoBackend": "scoreboard.openvino.descriptor:DESCRIPTOR",
    "CoreMLBackend": "scoreboard.coreml.descriptor:DESCRIPTOR",
}


def available_backends() -> dict[str, str]:
    """Entry point name -> 'module:attr' for every installed backend."""
    return {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def load_descriptor(spec: str) -> BackendDescriptor:
    """Loads a descriptor from an entry point name or a 'module:attribute' path."""
    if ":" not in spec:
        found = available_backends()
        if spec not in found:
            known = ", ".join(sorted(found)) or "none installed"
            shipped = SHIPPED_DESCRIPTORS.get(spec)
            raise DescriptorError(
                f"no backend named {spec!r} in entry point group {ENTRY_POINT_GROUP!r} (known: {known}); "
                + (
                    f"the suite ships a descriptor of ExecuTorch's own {spec}: --backend {shipped}"
                    if shipped
                    else "give 'module:attribute' or install the vendor package (executorch-conformance list "
                    "--backends names what is installed and what the suite ships)"
                )
            )
        spec = found[spec]
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise DescriptorError(
            f"backend {spec!r} is not 'module:attribute' (module {module_name or '(empty)'!r}, attribute "
            f"{attr or '(empty)'!r}); for example --backend your_package.conformance:DESCRIPTOR"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        from conformance.vendor.import_hints import hint

        missing = hint(exc)
        raise DescriptorError(
            f"cannot import {module_name!r} for backend {spec!r}: {exc}" + (f": {missing}" if missing else "")
        ) from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001  the vendor's module raised while being imported
        raise DescriptorError(
            f"importing {module_name!r} for backend {spec!r} raised {type(exc).__name__}: {exc}"
        ) from None
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise DescriptorError(f"module {module_name!r} has no attribute {attr!r}") from None
    return _validate(obj, spec)
