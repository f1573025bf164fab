"""The run's options have one owner (conformance/run/run_options.py): each wrong option gets the same message
from ``executorch-conformance run`` and from ``pytest -p conformance.plugin``, naming the option as that
entry point spells it, before any vendor process starts (exit 2 from the CLI, pytest's usage error)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
from pathlib import Path

import pytest
from suite_runner import PLAIN_PYTEST, run_suite

import conformance
from conformance.run.run_options import FLAGS, OptionsError, RunOptions

#: (options, message) with the options and messages in the CLI's spelling; OPTION stands for a flag.
CASES = [
    (["--timeout", "0"], r"--timeout must be a positive number of seconds, at most 86400 \(a day\), not 0"),
    (["--timeout", "-5"], r"--timeout must be a positive number of seconds, at most 86400 \(a day\), not -5"),
    (
        ["--timeout", "inf"],
        r"--timeout must be a positive number of seconds, at most 86400 \(a day\), not inf",
    ),
    (["--timeout", "nan"], r"--timeout must be a positive number of seconds, .* not nan"),
    (
        ["--timeout", "86401"],
        r"--timeout must be a positive number of seconds, at most 86400 \(a day\), not 86401",
    ),
    (["--memory-limit", "-1"], r"--memory-limit must be a positive number of GiB, not -1"),
    (["--memory-limit", "0"], r"--memory-limit must be a positive number of GiB, not 0"),
    (["--memory-limit", "1048576"], r"--memory-limit must be a positive number of GiB, not 1.04858e\+06"),
    (["--certify", "--checks", "PKG"], r"--certify runs every check; it cannot be combined with --checks"),
    (
        ["--certify", "--ops", "aten::add.Tensor"],
        r"--certify runs every operator; it cannot be combined with --ops",
    ),
    (["--checks", "NOPE-9"], r"--checks 'NOPE-9' selects unknown NOPE-9; give check IDs \(AOT-1, "),
    (["--checks", ","], r"--checks ',' selects nothing; give check IDs"),
    (["--models", "resnet99"], r"--models 'resnet99' selects unknown resnet99; give 'all' or model names"),
    (["--runner", "build/runner"], r"--runner is given without --target: say where the runner runs"),
]


def _pytest_spelling(items: list[str]) -> list[str]:
    """``items`` (options or a message) with each CLI flag in the plugin's spelling."""
    cli_to_pytest = {cli: plugin for cli, plugin in FLAGS.values() if cli}
    return [re.sub(r"--[a-z-]+", lambda m: cli_to_pytest.get(m.group(0), m.group(0)), item) for item in items]


@pytest.mark.parametrize(("args", "message"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_the_cli_names_its_own_option(tmp_path, capsys, args, message):
    """In this process: the CLI refuses these before it starts pytest or a vendor process."""
    from conformance.cli import EXIT_USAGE, main

    code = main(["run", "--backend", "ReferenceBackend", "--report-dir", str(tmp_path), *args])
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert code == EXIT_USAGE, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("executorch-conformance run: "), output
    assert re.search(message, lines[0]), output
    assert "--et-" not in output
    assert not list(tmp_path.iterdir())  # refused before the report directory was made or a process started


@pytest.mark.parametrize(("args", "message"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_the_plugin_names_its_own_option(tmp_path, args, message):
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.run(
        [
            *PLAIN_PYTEST,
            "-p",
            "conformance.plugin",
            "-p",
            "no:cacheprovider",
            "--et-backend",
            "ReferenceBackend",
            "--et-report",
            str(tmp_path / "report.json"),
            *_pytest_spelling(args),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, output
    (expected,) = _pytest_spelling([message])
    assert re.search(f"ERROR: {expected}", output), output
    assert "Traceback" not in output
    assert not (tmp_path / "vendor-process.log").exists()


@pytest.mark.full
def test_an_undeclared_operator_is_named_by_each_entry_point(tmp_path):
    """--ops needs the descriptor: refused once the backend is described, in the entry point's spelling."""
    code, report, output = run_suite(tmp_path / "cli", "ReferenceBackend", "--ops", "aten::made_up.Tensor")
    assert code == 2 and report is None, output
    assert re.search(
        r"--ops 'aten::made_up.Tensor' selects undeclared aten::made_up.Tensor; the backend declares: aten::",
        output,
    )
    proc = subprocess.run(
        [
            *PLAIN_PYTEST,
            "-p",
            "no:cacheprovider",
            "--et-backend",
            "ReferenceBackend",
            "--et-ops",
            "aten::made_up.Tensor",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert re.search(
        r"ERROR: --et-ops 'aten::made_up.Tensor' selects undeclared aten::made_up.Tensor", output
    )


@pytest.mark.parametrize(("args", "message"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_run_options_validate_in_both_spellings(args, message):
    """The owner itself, without a process: the same cases, both spellings."""
    given: dict = {}
    flags = {cli: name for name, (cli, _plugin) in FLAGS.items() if cli}
    i = 0
    while i < len(args):
        name = flags[args[i]]
        if name == "certify":
            given[name], i = True, i + 1
        else:
            value = args[i + 1]
            given[name] = float(value) if name in ("timeout", "memory_limit") else value
            i += 2
    with pytest.raises(OptionsError, match=message):
        RunOptions(backend="ReferenceBackend", entry="cli", **given)
    (expected,) = _pytest_spelling([message])
    with pytest.raises(OptionsError, match=expected):
        RunOptions(backend="ReferenceBackend", entry="pytest", **given)


def test_valid_options_translate_into_the_plugins_options():
    options = RunOptions(
        backend="ReferenceBackend", timeout=30, memory_limit=2, checks="rt,PKG-1", models="all", entry="cli"
    )
    assert options.selected == frozenset({"RT", "PKG-1"})
    assert options.memory_bytes == 2 << 30 and options.model_names
    args = options.pytest_args()
    assert args[:4] == ["--et-backend", "ReferenceBackend", "--et-timeout", "30.0"]
    assert args[args.index("--et-checks") : args.index("--et-checks") + 2] == ["--et-checks", "rt,PKG-1"]
    assert "--et-memory-limit" in args and "--et-models" in args and "--et-certify" not in args


def test_no_entry_point_validates_an_option_itself():
    """The messages of RunOptions are written once: neither the CLI nor the plugin repeats them."""
    package = Path(conformance.__file__).parent
    for module in ("cli.py", "plugin.py"):
        texts = [
            node.value
            for node in ast.walk(ast.parse((package / module).read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        ]
        for phrase in (
            "must be a positive number",
            "cannot be combined with",
            "is given without",
            "selects ",
        ):
            assert not [t for t in texts if phrase in t], f"{module} validates an option itself: {phrase!r}"


def test_the_cli_rewrites_no_message():
    source = (Path(conformance.__file__).parent / "cli.py").read_text()
    assert '.replace("--et-' not in source and "MAX_TIMEOUT_S" not in source


def test_a_runner_the_command_line_checked_is_not_checked_again(tmp_path):
    """``run`` checks --target/--runner once (reaching the target) and hands the result to the session it
    starts; the plugin uses what was handed for the same options and checks the options itself otherwise."""
    from conformance.run.target_option import CheckedRunner, runner_of

    gone = str(tmp_path / "no-runner-here")  # what the plugin would refuse if it checked again
    options = RunOptions(backend="ReferenceBackend", target="local", runner=gone, entry="pytest")
    assert runner_of([object(), CheckedRunner("local", gone)], options) == gone
    with pytest.raises(OptionsError, match=r"no runner at .*no-runner-here"):
        runner_of([CheckedRunner("local", str(tmp_path / "another"))], options)  # handed for other options
    with pytest.raises(OptionsError, match=r"no runner at .*no-runner-here"):
        runner_of([], options)  # plain pytest: nothing handed
