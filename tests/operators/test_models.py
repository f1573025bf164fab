"""The model tier (``run --models``): a defect that only a model exposes and a backend that delegates
nothing of a model are reported in the report's ``models`` section and table, and change no verdict.
The reference backend's models run with its operator test (test_operator_defects.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.models.architectures import MODELS
from conformance.models.runner import measure, parse_models
from conformance.operators.corpus import cases
from conformance.results.result_tables import MODELS as MODEL_TABLE
from conformance.results.table_text import render

# The full tier (CI; bash scripts/test.sh --full): lowers the model tier (ResNet, MobileNetV2, ViT, M5)
pytestmark = pytest.mark.full

HERE = Path(__file__).parent


def run(tmp_path: Path, backend: str, models: str) -> tuple[int, dict, str]:
    cmd = [
        sys.executable,
        "-m",
        "conformance.cli",
        "run",
        "--backend",
        backend,
        "--report-dir",
        str(tmp_path),
        "--checks",
        "AOT-1",
        "--models",
        models,
    ]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    path = tmp_path / "report.json"
    assert path.exists(), proc.stdout + proc.stderr
    return proc.returncode, json.loads(path.read_text()), proc.stdout + proc.stderr


def test_corpus_has_no_convolution_wider_than_16_channels():
    """Why WIDE_CONV_BIAS_DROPPED passes OPS-2: no convolution of the corpus has more than 16 output channels."""
    widths = [c.inputs[1].shape[0] for c in cases("aten::convolution", "float32")]
    assert widths and max(widths) <= 16, widths


def test_a_defect_only_a_model_exposes_is_reported(tmp_path):
    code, report, output = run(tmp_path, "broken_operators:WIDE_CONV_BIAS_DROPPED", "vit")
    models = {m["model"]: m for m in report["models"]}
    vit = models["vit"]
    assert vit["result"] == "mismatch", vit
    assert vit["reason"].startswith("output 0 differs from eager PyTorch: max abs difference"), vit
    assert vit["tolerance_used"] > 1 and vit["max_abs_error"] > vit["atol"], vit
    # Report-only: the verdict and the exit code are the checks' alone.
    assert report["verdict"] == "conformant" and code == 0, report["verdict_reasons"]
    assert [r["id"] for r in report["results"]] == ["AOT-1"]
    assert "[model] vit            mismatch" in output
    assert "mismatch  output 0 differs from eager" in output
    page = (tmp_path / "report.html").read_text()
    assert '<section id="models">' in page and '<td class="bad">mismatch</td>' in page


def test_a_model_left_on_cpu_is_reported(tmp_path):
    code, report, output = run(tmp_path, "broken_operators:ALL_OR_NOTHING", "m5")
    (m5,) = report["models"]
    assert m5["result"] == "not_delegated", m5
    assert m5["delegated_nodes"] == 0 and m5["delegates"] == 0 and m5["delegated_fraction"] == 0.0, m5
    assert m5["nodes"] == sum(m5["cpu_ops"].values()) > 0, m5
    assert {"aten::convolution", "aten::_native_batch_norm_legit_no_training"} <= set(m5["cpu_ops"]), m5
    assert "no operator node was delegated" in m5["reason"]
    assert code == 0 and report["verdict"] == "conformant"
    assert "0/" in output and "not_delegated" in output


def test_models_selection_is_validated(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "conformance.cli",
            "run",
            "--backend",
            "ReferenceBackend",
            "--models",
            "resnet,lenet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert "unknown lenet" in proc.stderr and "resnet, mobilenet_v2, vit, m5" in proc.stderr
    assert parse_models("all") == tuple(MODELS) and parse_models(None) is None
    assert parse_models("m5, resnet") == ("resnet", "m5")  # the tier's order


def test_measure_and_table():
    import torch

    e = [torch.tensor([10.0, -2.0])]
    worst, used, problem = measure([torch.tensor([10.0005, -2.0])], e, 1e-4, 1e-4)
    assert problem is None and worst == pytest.approx(5e-4, rel=1e-3) and used < 1  # atol scales with max |e|
    _, _, problem = measure([torch.tensor([10.0, float("nan")])], e, 1e-4, 1e-4)
    assert problem is not None and "output 0 differs" in problem
    _, _, problem = measure([torch.zeros(3)], e, 1e-4, 1e-4)
    assert problem == "output 0 is torch.float32[3], eager PyTorch gives torch.float32[2]"
    row = {
        "model": "m5",
        "family": "family",
        "nodes": 4,
        "delegated_nodes": 1,
        "delegated_fraction": 0.25,
        "delegates": 1,
        "max_abs_error": 2e-7,
        "tolerance_used": 0.002,
        "result": "matched",
        "reason": "",
        "cpu_ops": {"aten::mean.dim": 2, "aten::bmm": 1},
    }
    _head, line = render(MODEL_TABLE, [row])
    assert line.split() == [
        "m5",
        "family",
        "1/4",
        "(25%)",
        "1",
        "2e-07",
        "(0.20%)",
        "-",
        "matched",
        "mean.dim",
        "x2,",
        "bmm",
        "x1",
    ]
