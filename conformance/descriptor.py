"""How a vendor describes their backend to the suite.

A vendor package exposes a ``BackendDescriptor`` object, found either through
the entry point group ``executorch_conformance.backends`` (by name) or as
``module:attribute`` on the command line.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ENTRY_POINT_GROUP = "executorch_conformance.backends"


class DescriptorError(ValueError):
    """The backend could not be found, or its descriptor is malformed."""


class RecordedError(Exception):
    """What the vendor's code raised in the vendor process, kept as text ('TypeError: ...')."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


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

    name: str
    make: Callable[[], tuple[Any, tuple[Any, ...]]]
    rtol: float = 1e-5
    atol: float = 1e-5
    delegated: bool = True
    make_inputs: Callable[[Any], tuple[Any, ...]] | None = None


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

    sample: str
    make_partitioners: Callable[[], Sequence[Any]]
    max_blob_bytes: int
    required_keys: Callable[[bytes], Sequence[tuple[str, str | None]]] | None = None


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
    """

    sample: str
    make_quantizer: Callable[[], Any]
    max_steps: float = 1.0


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

    sample: str
    dynamic_shapes: Callable[[], Any]


@dataclasses.dataclass(frozen=True)
class CompositionSupport:
    """How a backend shares a program with ExecuTorch's XNNPACK delegate (C-CMP-1..2).

    sample:  name of a SampleModel with operators this backend leaves to XNNPACK; it is
             lowered with [*make_partitioners(), XnnpackPartitioner()].
    """

    sample: str


@dataclasses.dataclass(frozen=True)
class BackendDescriptor:
    """Everything the suite needs to know about one backend.

    backend_id:         the id stored in the .pte (= the BackendDetails subclass name).
    distribution:       the vendor's Python distribution name (for packaging checks).
    python_package:     its import name (scanned for private ExecuTorch imports).
    version:            the backend's version, as written into blob headers.
    make_partitioners:  returns fresh partitioner instances for lowering.
    supported_ops:      operator schema names the backend claims ("aten::add.Tensor").
    sample_models:      models to lower, serialize and run; the first is the primary one.
    operators:          per operator, the dtypes it runs in (an OperatorSupport, or a mapping
                        op -> dtypes); every case of the operator corpus for them is run (C-OPS-*).
                        Derived from supported_ops when not given (float32 for each); an operator
                        of supported_ops it does not name is declared for float32. supported_ops
                        becomes the union of both.
    load_runtime:       loads the runtime library into this process (registration);
                        None if the backend ships no runtime for this host.
    runtime_libraries:  paths of the runtime libraries (hashed into the report).
    registered_at_import: True for a backend that ExecuTorch's own Python runtime registers when
                        ``executorch.runtime`` is imported (a library its pybindings NEED: XNNPACK,
                        OpenVINO, QNN in the 1.5 wheels), before load_runtime() runs; RT-1 then
                        checks that it is registered by one of runtime_libraries() (C-RT-1).
    engine_libraries:   paths of the libraries the runtime library opens itself at run time
                        (dlopen), such as an inference engine found through an environment variable
                        (OpenVINO's libopenvino_c): PKG-5 and PKG-6 check them as they check
                        runtime_libraries().
    named_data:         how the backend uses named data and .ptd files (C-NDATA-*);
                        None if it does not (the NDATA checks are then not applicable).
    quantized:          PT2E quantized flow (C-QNT-*); None if not declared.
    dynamic_shapes:     upper-bounded dynamic dimensions (C-DYN-*); None if not declared.
    composition:        lowering next to XNNPACK (C-CMP-*); None if not declared.
    """

    backend_id: str
    distribution: str
    python_package: str
    version: str
    make_partitioners: Callable[[], Sequence[Any]]
    supported_ops: frozenset[str] = frozenset()
    sample_models: tuple[SampleModel, ...] = ()
    load_runtime: Callable[[], Any] | None = None
    runtime_libraries: Callable[[], Sequence[Path]] = lambda: ()
    registered_at_import: bool = False
    engine_libraries: Callable[[], Sequence[Path]] = lambda: ()
    named_data: NamedDataSupport | None = None
    quantized: QuantizedSupport | None = None
    dynamic_shapes: DynamicShapesSupport | None = None
    composition: CompositionSupport | None = None
    operators: Any = None

    def __post_init__(self) -> None:
        from conformance.operators.corpus import normalize
        from conformance.operators.support import OperatorSupport

        claimed = frozenset(normalize(op) for op in self.supported_ops)
        try:
            declared = OperatorSupport() if self.operators is None else OperatorSupport.coerce(self.operators)
        except (TypeError, ValueError) as exc:
            raise DescriptorError(f"operators: {exc}") from None
        declared = OperatorSupport.float32(*sorted(claimed - set(declared))) | declared
        object.__setattr__(self, "operators", declared)
        object.__setattr__(self, "supported_ops", claimed | frozenset(declared))

    def capabilities(self) -> list[str]:
        """The optional capabilities declared, which make conditional checks apply."""
        optional = ("named_data", "quantized", "dynamic_shapes", "composition")
        return [name for name in optional if getattr(self, name) is not None]

    def sample(self, name: str) -> SampleModel:
        for model in self.sample_models:
            if model.name == name:
                return model
        raise KeyError(name)


def _validate(obj: Any, where: str) -> BackendDescriptor:
    if not isinstance(obj, BackendDescriptor):
        raise DescriptorError(
            f"{where} is a {type(obj).__name__}, not a conformance.descriptor.BackendDescriptor"
        )
    if not obj.sample_models:
        raise DescriptorError(f"{where} declares no sample_models; the suite needs at least one")
    for i, m in enumerate(obj.sample_models):
        if not isinstance(m, SampleModel):
            raise DescriptorError(f"{where}.sample_models[{i}] is a {type(m).__name__}, not a SampleModel")
        if not callable(m.make):
            raise DescriptorError(f"{where}.sample_models[{i}] ({m.name!r}): make is not callable")
    for attr in ("make_partitioners", "runtime_libraries", "engine_libraries"):
        if not callable(getattr(obj, attr)):
            raise DescriptorError(f"{where}.{attr} is a {type(getattr(obj, attr)).__name__}, not callable")
    if obj.load_runtime is not None and not callable(obj.load_runtime):
        raise DescriptorError(
            f"{where}.load_runtime is a {type(obj.load_runtime).__name__}, not callable or None"
        )
    if not isinstance(obj.registered_at_import, bool):
        raise DescriptorError(
            f"{where}.registered_at_import is a {type(obj.registered_at_import).__name__}, not True or False"
        )
    names = [m.name for m in obj.sample_models]
    if len(set(names)) != len(names):
        raise DescriptorError(f"{where} has duplicate sample model names: {names}")
    nd = obj.named_data
    if nd is not None:
        if not isinstance(nd, NamedDataSupport):
            raise DescriptorError(f"{where}.named_data is a {type(nd).__name__}, not a NamedDataSupport")
        if nd.sample not in names:
            raise DescriptorError(
                f"{where}.named_data.sample {nd.sample!r} is not one of the sample_models {names}"
            )
        if nd.max_blob_bytes <= 0:
            raise DescriptorError(
                f"{where}.named_data.max_blob_bytes must be positive, not {nd.max_blob_bytes}"
            )
    for field, kind in (
        ("quantized", QuantizedSupport),
        ("dynamic_shapes", DynamicShapesSupport),
        ("composition", CompositionSupport),
    ):
        support = getattr(obj, field)
        if support is None:
            continue
        if not isinstance(support, kind):
            raise DescriptorError(f"{where}.{field} is a {type(support).__name__}, not a {kind.__name__}")
        if support.sample not in names:
            raise DescriptorError(
                f"{where}.{field}.sample {support.sample!r} is not one of the sample_models {names}"
            )
    return obj


def available_backends() -> dict[str, str]:
    """Entry point name -> 'module:attr' for every installed backend."""
    return {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def load_descriptor(spec: str) -> BackendDescriptor:
    """Loads a descriptor from an entry point name or a 'module:attribute' path."""
    if ":" not in spec:
        found = available_backends()
        if spec not in found:
            known = ", ".join(sorted(found)) or "none installed"
            raise DescriptorError(
                f"no backend named {spec!r} in entry point group {ENTRY_POINT_GROUP!r} "
                f"(known: {known}); give 'module:attribute' or install the vendor package"
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
        from conformance.import_hints import hint

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
