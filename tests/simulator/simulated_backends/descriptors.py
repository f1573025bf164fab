"""Descriptors of SimGraphBackend (``graph_backend``): the good one, and simulators that misbehave the ways a
vendor's simulator can (wrong numbers, refusals, a crash, a hang, a broken delegate object)."""

from __future__ import annotations

import ctypes
import dataclasses
import os
import time

import torch

from conformance.descriptor import BackendDescriptor, SampleModel
from conformance.operators import OperatorSupport
from simulated_backends import graph_backend
from simulated_backends.graph_backend import BACKEND_ID, OPS, VERSION, SimGraphPartitioner, simulate


class _LinearRelu(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2.0 - torch.sigmoid(x[:, :4])  # sigmoid stays on CPU


class _AddMul(torch.nn.Module):
    def forward(self, x, y):
        return torch.tanh(x + y) * y


DESCRIPTOR = BackendDescriptor(
    backend_id=BACKEND_ID,
    distribution="sim-graph-backend",
    python_package="simulated_backends",
    version=VERSION,
    make_partitioners=lambda: [SimGraphPartitioner()],
    operators=OperatorSupport.float32(*OPS),
    sample_models=(
        SampleModel("linear_relu", lambda: (_LinearRelu().eval(), (torch.randn(3, 8),))),
        SampleModel("add_mul", lambda: (_AddMul(), (torch.randn(2, 5), torch.randn(2, 5)))),
    ),
    simulator=simulate,
)


def _off_by_one_percent(payload, context):
    delegate = simulate(payload, context)
    run = delegate.run
    delegate.run = lambda inputs, outputs: [t * 1.01 for t in run(inputs, outputs)]
    return delegate


def _refusing(payload, context):
    raise ValueError("this simulator build reads no payload at all")


def _crashing(payload, context):
    delegate = simulate(payload, context)
    delegate.run = lambda inputs, outputs: ctypes.string_at(0)  # a real SIGSEGV in the vendor process
    return delegate


def _hanging(payload, context):
    delegate = simulate(payload, context)

    def run(inputs, outputs):
        time.sleep(int(os.environ.get("SIM_HANG_SECONDS", "3600")))
        return []

    delegate.run = run
    return delegate


def _no_run(payload, context):
    graph_backend.read_payload(payload)
    return object()


def _short(payload, context):
    delegate = simulate(payload, context)
    delegate.run = lambda inputs, outputs: []
    return delegate


WRONG_NUMBERS = dataclasses.replace(DESCRIPTOR, simulator=_off_by_one_percent)
REFUSES = dataclasses.replace(DESCRIPTOR, simulator=_refusing)
CRASHES = dataclasses.replace(DESCRIPTOR, simulator=_crashing)
HANGS = dataclasses.replace(DESCRIPTOR, simulator=_hanging)
NOT_A_DELEGATE = dataclasses.replace(DESCRIPTOR, simulator=_no_run)
TOO_FEW_OUTPUTS = dataclasses.replace(DESCRIPTOR, simulator=_short)
