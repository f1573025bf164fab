"""Arm Ethos-U delegate (executorch 1.5.1, ethos-u-vela 5.1.0): EthosUPartitioner claims an operator whose
operands have no elements, and Vela then kills the process (a signal in ``regor.compile``, called from
``EthosUBackend.preprocess``) instead of compiling or refusing the graph.

Standalone (torch, executorch 1.5.1 and ethos-u-vela 5.1.0; no conformance-suite code; make the environment
with scripts/arm_env.sh):

    .venv-arm/bin/python arm_ethos_u_zero_size_vela_crash.py                  # ethos-u55-128 and ethos-u85-256
    .venv-arm/bin/python arm_ethos_u_zero_size_vela_crash.py ethos-u85-256    # one target

What it does: for each target, ``x + y``, quantized with ``EthosUQuantizer(EthosUCompileSpec(target))`` and
Arm's symmetric int8 configuration (calibrated on the inputs), lowered with ``EthosUPartitioner``, for operands
of shape [4] and of shape [0]; each lowering runs in a child process of its own, as a crash takes its process.

Seen (x86-64 Linux), for both targets: shape [4] is delegated and compiled; shape [0] kills its process, with
SIGSEGV (exit -11) for ethos-u55-128 and SIGFPE (exit -8) for ethos-u85-256, so the program cannot be built at
all. A partitioner should leave what its compiler cannot take on ExecuTorch's CPU kernels (which compute the
empty result), or the compiler refuse it with an error.

Exit status: 1 while the zero-size lowering dies by a signal for a target, 0 otherwise.
"""

from __future__ import annotations

import subprocess
import sys

import torch


class Add(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


TARGETS = ("ethos-u55-128", "ethos-u85-256")


def lower(target: str, size: int) -> str:
    """Quantize and lower ``x + y`` for ``target`` and operands of shape [size]; what became of it."""
    from executorch.backends.arm import (
        EthosUCompileSpec,
        EthosUPartitioner,
        EthosUQuantizer,
        get_symmetric_quantization_config,
    )
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir.lowered_backend_module import LoweredBackendModule
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    x, y = torch.randn(size), torch.randn(size)
    quantizer = EthosUQuantizer(EthosUCompileSpec(target))
    quantizer.set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(torch.export.export(Add(), (x, y)).module(check_guards=False), quantizer)
    prepared(x, y)
    lowered = to_edge_transform_and_lower(
        torch.export.export(convert_pt2e(prepared), (x, y)),
        partitioner=[EthosUPartitioner(EthosUCompileSpec(target))],
    )
    module = lowered.exported_program().graph_module
    delegates = [m for m in module.children() if isinstance(m, LoweredBackendModule)]
    return f"delegated, {len(delegates[0].processed_bytes)} bytes" if delegates else "left on CPU kernels"


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--lower":
        print(lower(sys.argv[2], int(sys.argv[3])), flush=True)
        return 0
    crashed = False
    for target in sys.argv[1:] or TARGETS:
        for size in (4, 0):
            proc = subprocess.run(
                [sys.executable, __file__, "--lower", target, str(size)],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode < 0:
                crashed |= size == 0
                print(f"{target}, shape [{size}]: the lowering process died by signal {-proc.returncode}")
            elif proc.returncode:
                print(
                    f"{target}, shape [{size}]: the lowering failed: {proc.stderr.strip().splitlines()[-1:]}"
                )
            else:
                print(f"{target}, shape [{size}]: {proc.stdout.strip().splitlines()[-1]}")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
