"""The lint, type and format checks: CI runs scripts/lint.sh, the pre-commit hooks run the same
tools, and those tools are pinned where CI's bootstrap installs them."""

from __future__ import annotations

import os
import re
from pathlib import Path

import tomllib
import yaml

REPO = Path(__file__).resolve().parents[2]
LINT = REPO / "scripts" / "lint.sh"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
#: The tools scripts/lint.sh runs, by the PyPI package that provides each.
TOOLS = {"ruff": "ruff", "mypy": "mypy", "clang-format": "clang-format"}


def _commands(path: Path) -> list[str]:
    """The non-comment lines of a shell script; a timed step of .ci/run (``step "NAME" COMMAND...``) as
    its command."""
    lines = [
        ln.strip() for ln in path.read_text().splitlines() if ln.strip() and not ln.strip().startswith("#")
    ]
    return [re.sub(r'^step "[^"]*" ', "", ln) for ln in lines]


def _pins(extra: str) -> dict[str, str]:
    out = {}
    for requirement in PYPROJECT["project"]["optional-dependencies"][extra]:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*==\s*([\w.]+)", requirement)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_ci_runs_lint_after_bootstrap_and_before_the_tests():
    lines = _commands(REPO / ".ci" / "run")
    assert "bash scripts/lint.sh" in lines
    at = lines.index("bash scripts/lint.sh")
    tests = [i for i, ln in enumerate(lines) if ln.startswith("bash scripts/test.sh")]
    assert tests, "CI does not run the README's test command"
    assert lines.index("bash scripts/bootstrap.sh") < at < tests[0]


def test_ci_prints_a_timing_table_of_its_steps_even_when_a_step_fails():
    """Every command of .ci/run after the set-up is a timed step, and the table is printed by an EXIT trap."""
    text = (REPO / ".ci" / "run").read_text()
    assert "trap timing_table EXIT" in text
    for command in ("bash scripts/bootstrap.sh", "bash scripts/lint.sh", "bash scripts/test.sh --full -q"):
        assert re.search(rf'^step "[^"]+" {re.escape(command)}', text, re.MULTILINE), command


def test_lint_script_runs_every_tool_in_check_mode():
    assert LINT.exists() and os.access(LINT, os.X_OK)
    text = LINT.read_text()
    for command in (
        '"$RUFF" check',
        '"$RUFF" format --check',
        '"$MYPY"',
        '"$CLANG_FORMAT" --dry-run -Werror',
    ):
        assert command in text, command
    # --fix applies what can be applied mechanically.
    for command in ('"$RUFF" check --fix', '"$RUFF" format --quiet', '"$CLANG_FORMAT" -i'):
        assert command in text, command


def test_the_tools_are_pinned_in_the_extra_ci_installs():
    bootstrap = (REPO / "scripts" / "bootstrap.sh").read_text()
    # The project and its test extra (other extras may come with it: ".[test,scoreboard]").
    assert re.search(r'-e "\.\[(?:[a-z]+,)*test(?:,[a-z]+)*\]"', bootstrap)
    test, dev = _pins("test"), _pins("dev")
    for package in TOOLS.values():
        assert package in test, f"{package} is not pinned (==) in the test extra, which CI installs"
        assert dev.get(package) == test[package], f"the dev extra pins another {package}"


def test_pre_commit_hooks_run_the_same_tools():
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert set(hooks) == {"ruff-check", "ruff-format", "mypy", "clang-format", "gitlint"}
    for hook in hooks.values():
        # The venv's pinned tools: the versions CI uses, and nothing for pre-commit to clone.
        assert hook["language"] == "system"
        assert hook["entry"].split()[0] == f".venv/bin/{hook['entry'].split()[0].rsplit('/', 1)[-1]}"
    assert hooks["ruff-check"]["entry"].startswith(".venv/bin/ruff check")
    assert hooks["ruff-format"]["entry"].startswith(".venv/bin/ruff format")
    assert hooks["mypy"]["entry"] == ".venv/bin/mypy" and hooks["mypy"]["pass_filenames"] is False
    assert hooks["clang-format"]["entry"] == ".venv/bin/clang-format -i"
    # The commit message check (CONTRIBUTING.md "Commits") runs on the message, with the project's rules.
    assert hooks["gitlint"]["stages"] == ["commit-msg"] and "--config .gitlint" in hooks["gitlint"]["entry"]
    assert "pre-commit" in " ".join(PYPROJECT["project"]["optional-dependencies"]["dev"])


def test_one_line_length_for_python_and_cpp():
    ruff = PYPROJECT["tool"]["ruff"]
    clang = dict(
        ln.split(":", 1) for ln in (REPO / ".clang-format").read_text().splitlines() if re.match(r"^\w+:", ln)
    )
    assert int(clang["ColumnLimit"]) == ruff["line-length"] == 110


def test_generated_code_is_left_alone_and_the_checked_scope_is_named():
    assert "conformance/pte/_generated" in PYPROJECT["tool"]["ruff"]["extend-exclude"]
    mypy = PYPROJECT["tool"]["mypy"]
    assert set(mypy["files"]) == {"conformance", "kit/backend_kit", "abi_checks", "matrix"}
    # The bodies of functions without annotations are checked too.
    assert mypy["check_untyped_defs"] is True
    assert any("_generated" in e for e in mypy["exclude"])
    # A real rule set, not ruff's defaults.
    assert {"E", "F", "I", "B", "UP", "RUF"} <= set(PYPROJECT["tool"]["ruff"]["lint"]["select"])
