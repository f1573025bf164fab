"""Commit messages (CONTRIBUTING.md, "Commits"): .gitlint refuses a subject over 72 characters and a
message without a body, accepts the form CONTRIBUTING shows, and the pre-commit hooks run it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BODY = "\n\nA body that says why the change is needed, in a sentence or two.\n"


def gitlint(tmp_path: Path, message: str) -> subprocess.CompletedProcess:
    gitlint = shutil.which("gitlint", path=str(Path(sys.executable).parent))
    assert gitlint, "gitlint is in the test extra (pyproject.toml); rerun scripts/bootstrap.sh"
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message)
    return subprocess.run(
        [gitlint, "--config", str(REPO / ".gitlint"), "--staged", "--msg-filename", str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


def contributing_example() -> str:
    text = (REPO / "CONTRIBUTING.md").read_text()
    section = text.split("## Commits", 1)[1]
    return re.search(r"```text\n(.*?)```", section, re.DOTALL).group(1)


def test_the_example_of_contributing_passes(tmp_path):
    proc = gitlint(tmp_path, contributing_example())
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("message", "rule"),
    [
        ("S" * 73 + BODY, "T1 Title exceeds max length (73>72)"),
        ("A subject of a sensible length\n", "B6 Body message is missing"),
        ("A subject of a sensible length\n\nWhy.\n", "B5 Body message is too short"),
    ],
    ids=["long subject", "no body", "a body that says nothing"],
)
def test_a_message_against_the_rules_is_refused(tmp_path, message, rule):
    proc = gitlint(tmp_path, message)
    assert proc.returncode != 0 and rule in proc.stderr + proc.stdout, proc.stdout + proc.stderr


def test_a_subject_of_exactly_72_passes(tmp_path):
    proc = gitlint(tmp_path, "S" * 72 + BODY)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_pre_commit_hooks_check_the_message():
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    assert "commit-msg" in config["default_install_hook_types"]
    hooks = [h for repo in config["repos"] for h in repo["hooks"]]
    lint = [h for h in hooks if h["id"] == "gitlint"]
    assert lint and lint[0]["stages"] == ["commit-msg"] and ".gitlint" in lint[0]["entry"]
