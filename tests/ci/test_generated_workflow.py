"""The CI workflow ``executorch-conformance new-backend`` writes into a backend
package (from the kit's template): linted with zizmor and actionlint like the
reusable workflow, pinned to a commit whose reusable workflow is the one in
this checkout, and calling it only with inputs it has."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_vendor_workflow import REPO, WORKFLOW, _actionlint, load, zizmor

from conformance.cli import main
from conformance.new_backend import WORKFLOW_COMMIT, WORKFLOW_REPOSITORY


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("generated") / "acme"
    assert main(["new-backend", "AcmeNpuBackend", "--dir", str(target)]) == 0
    return target / ".github" / "workflows" / "conformance.yml"


def test_zizmor_finds_nothing(generated):
    proc = zizmor(generated)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_finds_nothing(generated):
    proc = subprocess.run([*_actionlint(), str(generated)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_catches_an_unpinned_suite(generated, tmp_path):
    """The pin matters to the linter the test above trusts: the same workflow calling the suite at a
    branch is a finding."""
    unpinned = tmp_path / "unpinned.yml"
    unpinned.write_text(generated.read_text().replace(f"@{WORKFLOW_COMMIT}", "@main"))
    proc = zizmor(unpinned)
    assert proc.returncode != 0 and "unpinned-uses" in proc.stdout, proc.stdout + proc.stderr


def test_it_certifies_the_backend_through_the_reusable_workflow(generated):
    jobs = load(generated)["jobs"]
    call = jobs["conformance"]
    assert call["uses"] == f"{WORKFLOW_REPOSITORY}/.github/workflows/conformance.yml@{WORKFLOW_COMMIT}"
    reusable = load()["on"]["workflow_call"]["inputs"]
    assert set(call["with"]) <= set(reusable), set(call["with"]) - set(reusable)
    assert call["with"]["backend"] == "AcmeNpuBackend" and call["with"]["certify"] is True
    from executorch.version import __version__

    assert call["with"]["executorch-versions"] == f'["{__version__.split("+")[0]}"]'
    assert jobs["tests"]["env"]["ET_VERSION"] == __version__.split("+")[0]
    assert call["needs"] == "tests"


def test_the_pinned_commit_holds_this_checkout_s_reusable_workflow():
    """The generated CI calls the reusable workflow at WORKFLOW_COMMIT: that commit's file must be
    the one the suite ships, or the generated CI runs an older workflow. After changing
    .github/workflows/conformance.yml, set WORKFLOW_COMMIT (conformance/new_backend.py) to the
    commit that changed it."""
    git = shutil.which("git")
    if git is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the pinned commit cannot be read")
    proc = subprocess.run(
        [git, "-C", str(REPO), "show", f"{WORKFLOW_COMMIT}:.github/workflows/conformance.yml"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, f"commit {WORKFLOW_COMMIT} is not in this repository: {proc.stderr}"
    assert proc.stdout == WORKFLOW.read_text(), (
        f".github/workflows/conformance.yml changed since {WORKFLOW_COMMIT}: pin the generated CI to the "
        "commit that changed it (WORKFLOW_COMMIT in conformance/new_backend.py)"
    )


def test_its_actions_are_the_reusable_workflow_s_pins(generated):
    """Pinned by commit, and to the same commits as the suite's own workflow (one place to update)."""
    pinned = {
        step["uses"].split("@")[0]: step["uses"]
        for step in load()["jobs"]["conformance"]["steps"]
        if "uses" in step
    }
    for step in load(generated)["jobs"]["tests"]["steps"]:
        if "uses" in step:
            assert re.fullmatch(r"[\w-]+/[\w-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
            assert step["uses"] == pinned[step["uses"].split("@")[0]]
