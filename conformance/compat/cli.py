"""``executorch-conformance compat MODEL.pte --runtime 1.4.1 --backend ReferenceBackend==0.2.0 [--json]``:
will the program run on a device with that ExecuTorch runtime and those backend runtimes?

Exit codes: 0 everything runs; 1 something is refused; 5 nothing is refused but something is unknown;
2 bad input (not a .pte, a malformed version, an unknown backend, a bad rules file); 3 a bug of this tool.
"""

from __future__ import annotations

import argparse
import json
import sys

from conformance.compat.decide import Prediction, parse_backend, parse_runtime, predict
from conformance.compat.errors import CompatInputError
from conformance.compat.lookup import find_rules
from conformance.compat.measured import load_measured
from conformance.compat.program import read_program

EXIT_USAGE = 2


def render(prediction: Prediction) -> str:
    """The human-readable report: the overall verdict, then one paragraph per answer."""
    backends = ", ".join(map(str, prediction.backends)) or "no backend runtimes"
    lines = [
        f"{prediction.program} on executorch {prediction.runtime} with {backends}: {prediction.status.upper()}"
    ]
    for a in prediction.answers:
        lines.append(f"  {a.target}: {a.status}")
        if a.error:
            lines.append(f"    error: {a.error}")
        if a.log:
            lines.append(f"    log:   {a.log}")
        if a.fix:
            lines.append(f"    fix:   {a.fix}")
        lines.append(f"    why:   {a.why}")
    return "\n".join(lines)


def _compat(args: argparse.Namespace) -> int:
    try:
        runtime = parse_runtime(args.runtime)
        specs = [parse_backend(b) for b in args.backend]
        # The program first: a path that is no .pte is refused before the installed backends' rules are
        # looked up, which imports their packages (seconds).
        program = read_program(args.pte)
        measured = load_measured()
        builtin = measured.builtin_backend_ids()
        rules = find_rules([s.backend_id for s in specs if s.backend_id not in builtin], args.rules)
        prediction = predict(program, runtime, specs, rules, measured)
    except CompatInputError as exc:
        print(f"executorch-conformance compat: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(prediction.to_json(), indent=1) if args.json else render(prediction))
    return prediction.exit_code


def add_subcommand(sub: argparse._SubParsersAction) -> None:
    """Adds ``compat`` to the ``executorch-conformance`` parser."""
    p = sub.add_parser(
        "compat",
        help="will a .pte run on a device with this ExecuTorch runtime and these backend runtimes? (docs/compat.md)",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("pte", help="the program (.pte)")
    p.add_argument(
        "--runtime",
        required=True,
        metavar="VERSION",
        help="the device's ExecuTorch runtime release, e.g. 1.4.1",
    )
    p.add_argument(
        "--backend",
        action="append",
        default=[],
        metavar="ID==VERSION",
        help="a backend runtime the device has (ReferenceBackend==0.2.0; XnnpackBackend alone for one that "
        "ships inside ExecuTorch); repeatable. A delegate whose backend is not given is refused (not registered)",
    )
    p.add_argument(
        "--rules",
        action="append",
        default=[],
        metavar="FILE",
        help="a backend's acceptance rules file, instead of the one its installed descriptor declares; repeatable",
    )
    p.add_argument("--json", action="store_true", help="print the prediction as JSON (docs/compat.md)")
    p.set_defaults(func=_compat)
