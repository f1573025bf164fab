"""Method checks (C-MTH-1, C-MTH-2): a program of two methods sharing one set of weights, as an LLM program
carries ``prefill`` and ``decode``.

The program is made of one sample model of the backend (``conformance.vendor.method_tasks``): both methods
export the same module, so they use the same parameter tensors, and are lowered in one call. MTH-1 (the
first delegated sample, the backend's partitioners) loads each method by name and executes it, then loads
both from one program and executes them in turn; every output is compared with eager PyTorch, and a
method that fails is named. MTH-2 (the named-data sample, the named-data partitioners) runs the same way
with the program's .ptd and measures the program against a single-method one and against a two-method one
whose ``decode`` holds other weights: a program that stores the shared weights twice fails, naming the
sizes in bytes and both methods.
"""

from __future__ import annotations

from typing import Any

from conformance.comparison import assert_outputs_close
from conformance.context import Context
from conformance.outcomes import CheckFailed, NotApplicable
from conformance.registry import check
from conformance.vendor.process import quote_log
from conformance.vendor.records import unpack
from conformance.vendor.task_registry import METHOD_FLOW, RUN_METHODS

#: The program's data file, written in the run's scratch directory for the runtime.
DATA_DIR = "methods"


def first_delegated_sample(ctx: Context) -> str:
    """The sample model MTH-1's program is made of: the first that must be delegated."""
    models = ctx.descriptor.sample_models
    return next((m for m in models if m.delegated), models[0]).name


def method_flow(ctx: Context, which: str, name: str) -> dict[str, Any]:
    """The two-method program of sample ``name`` lowered with ``which``'s partitioners, shared by the run;
    measured (MTH-2's sizes) for the named-data partitioners."""
    label = "make_partitioners()" if which == "default" else f"{which}.make_partitioners()"
    return ctx.shared(
        ("method_flow", which, name),
        lambda: ctx.call(
            METHOD_FLOW,
            which,
            name,
            which != "default",
            what=f"lowering the two-method program of sample model {name!r} with {label}",
        ),
    )


def _differs(actual: list[Any], packed: bytes, rtol: float, atol: float) -> str | None:
    try:
        assert_outputs_close("its", actual, unpack(packed), rtol, atol)
    except CheckFailed as exc:
        return str(exc)
    return None


def _data_path(ctx: Context, which: str, flow: dict[str, Any]) -> str | None:
    data: dict[str, bytes] = flow["data"]
    if not data:
        return None
    if len(data) > 1:
        raise CheckFailed(
            f"the two-method program of sample model {flow['sample']!r} has {len(data)} data files "
            f"({', '.join(sorted(data))}); ExecuTorch's Python runtime loads one per program"
        )
    (file_name, content), *_ = data.items()
    out = ctx.scratch_dir() / DATA_DIR / which
    out.mkdir(parents=True, exist_ok=True)
    path = out / file_name
    path.write_bytes(content)
    return str(path)


def judge(ctx: Context, which: str, name: str) -> tuple[dict[str, Any], str]:
    """Runs the two-method program of sample ``name`` as the module docstring says: (the flow, a note of what
    ran), or CheckFailed naming the method, how it was loaded and the round."""
    ctx.require_runtime()
    flow = method_flow(ctx, which, name)
    methods: list[str] = flow["methods"]
    program = f"the two-method program ({' and '.join(methods)}) of sample model {name!r} ({flow['form']})"
    placed = flow["placement"]
    if not any(placed[m]["delegated"] for m in methods):
        cpu = sorted({op for m in methods for op in placed[m]["cpu"]})
        raise NotApplicable(
            f"the backend's partitioners delegated nothing of {program}; it ran on CPU: {', '.join(cpu)}"
        )
    model = ctx.descriptor.sample(name)
    rtol, atol = model.rtol, model.atol
    data_path = _data_path(ctx, which, flow)
    result, log = ctx.call(
        RUN_METHODS,
        flow["pte"],
        data_path,
        program,
        flow["inputs"],
        what=f"execution of the methods of {program}",
        with_log=True,
    )
    if "error" in result:
        logged = quote_log([line for line in log.splitlines() if line.strip()])
        raise CheckFailed(f"{result['step']} failed: {result['error']}{logged}")
    for method in methods:
        detail = _differs(unpack(result["alone"][method]), flow["expected"][method][0], rtol, atol)
        if detail:
            raise CheckFailed(
                f"method {method!r} of {program}, loaded alone, differs from eager PyTorch: {detail}"
            )
    for k in range(flow["rounds"]):
        for method in methods:
            detail = _differs(
                unpack(result["together"][(method, k)]), flow["expected"][method][k], rtol, atol
            )
            if detail:
                others = " and ".join(repr(m) for m in methods if m != method)
                raise CheckFailed(
                    f"method {method!r} of {program} differs from eager PyTorch in round {k + 1} of "
                    f"{flow['rounds']}, loaded from one program with {others} and executed in turn with it "
                    f"(it matched when loaded alone): {detail}"
                )
    delegated = "; ".join(f"{m}: {', '.join(placed[m]['delegated']) or 'nothing'}" for m in methods)
    return flow, (
        f"both methods of {program}, lowered in one call, each loaded alone and then both from one program, "
        f"executed in turn for {flow['rounds']} rounds, matched eager PyTorch; {ctx.descriptor.backend_id} "
        f"delegated {delegated}"
    )


def _bytes(size: dict[str, int]) -> str:
    total = size["pte"] + size["data"]
    return f"{total} bytes" + (f" (.pte {size['pte']} + .ptd {size['data']})" if size["data"] else "")


def stored_once(flow: dict[str, Any]) -> str:
    """A note of the sizes, or CheckFailed if the shared weights are stored twice: the program of two
    methods sharing one module saved less than half of what the methods' own weights cost (a two-method
    program whose ``decode`` holds other weights, less the single-method program)."""
    sizes = flow["sizes"]
    shared, single, apart = (sizes[k]["pte"] + sizes[k]["data"] for k in ("shared", "single", "apart"))
    prefill, decode = flow["methods"]
    name = flow["sample"]
    weights = apart - single  # one method's graph and one copy of the weights, as the backend stores them
    saved = apart - shared
    what = (
        f"the two-method program of sample model {name!r} (methods {prefill!r} and {decode!r}, one module, "
        f"{flow['parameter_bytes']} parameter bytes) is {_bytes(sizes['shared'])}; the single-method program "
        f"({decode!r} alone) is {_bytes(sizes['single'])}, and the two-method program whose {decode!r} holds "
        f"other weights {_bytes(sizes['apart'])}"
    )
    if weights <= 0:
        raise CheckFailed(f"the weights could not be measured: {what}; a second method added nothing")
    if saved * 2 < weights:
        raise CheckFailed(
            f"the weights {prefill!r} and {decode!r} share are stored twice: {what}; sharing the module saved "
            f"{saved} bytes of the {weights} a method with its own weights adds (less than half)"
        )
    return (
        f"{what}: sharing the module saved {saved} of the {weights} bytes a method with its own weights adds"
    )


@check(
    "MTH-1",
    "C-MTH-1",
    "two methods sharing one module, lowered in one call, each load and match eager, also loaded together",
)
def methods_sharing_weights(ctx: Context) -> str:
    return judge(ctx, "default", first_delegated_sample(ctx))[1]


@check(
    "MTH-2",
    "C-MTH-2",
    "with named data, two methods sharing one module store the weights once and run with the .ptd",
    applies_if="named_data",
)
def weights_stored_once(ctx: Context) -> str:
    support = ctx.capability("named_data")
    flow, ran = judge(ctx, "named_data", support.sample)
    return f"{stored_once(flow)}; {ran}"
