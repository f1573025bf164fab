"""The documentation in docs/ is kept true by these tests.

Rules for fenced code blocks in docs/*.md (decided here, enforced below):

* ```python blocks are executed. All of them, from all documents, run in one
  subprocess so that importing torch and executorch is paid once. Each block is
  exec'd on its own in a fresh namespace, in document order, with the
  repository root as the working directory and TMPDIR pointing at a pytest
  temporary directory (write scratch files with ``tempfile``). A block must
  therefore be self-contained; it may call ``reference_backend.load_runtime()``.
  Aim for a few seconds per block; more than 30 s fails.
* ```console and ```bash blocks are executed too. They may hold only
  ``$ executorch-conformance ...`` commands, each followed by its expected
  output. A command runs from a temporary directory and must exit 0, and each
  expected line must appear in its output (stdout and stderr) once runs of
  whitespace are collapsed; a line ``...`` stands for omitted output.
* Every other block (```text, ```toml, ```json, ```cmake, ...) is not
  executed. Shell snippets that are slow or need a particular machine go in
  ```text blocks. ```json blocks must parse.

Other checks: the clauses of docs/contract.md and the checks of
``conformance.checks.all_checks()`` map onto each other both ways with equal
levels; docs/version-policy.md answers the RFC's questions 1 to 21 in order;
repository paths written in backticks exist (all of them in
docs/out-of-tree-guide.md, see ``_guide_paths``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS_DIR = REPO / "docs"
DOCS = sorted(DOCS_DIR.glob("*.md"))
CONTRACT = DOCS_DIR / "contract.md"
GUIDE = DOCS_DIR / "out-of-tree-guide.md"
POLICY = DOCS_DIR / "version-policy.md"

BLOCK_TIME_LIMIT_S = 30.0
COMMAND_PREFIX = "$ executorch-conformance "


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class Block:
    doc: str  # file name, e.g. "blob-header.md"
    line: int  # 1-based line of the opening fence
    lang: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def code_blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with their info string's first word."""
    blocks, lang, start, body = [], None, 0, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            if lang is None:
                lang, start, body = (line[3:].strip().split() or [""])[0], number, []
            else:
                blocks.append(Block(path.name, start, lang, "\n".join(body) + "\n"))
                lang = None
        elif lang is not None:
            body.append(line)
    assert lang is None, f"{path.name}: the fence opened at line {start} is never closed"
    return blocks


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of the lines outside fenced blocks."""
    out, inside = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            inside = not inside
        elif not inside:
            out.append((number, line))
    return out


def inline_code(path: Path) -> list[tuple[int, str]]:
    return [(n, m.group(1)) for n, line in prose_lines(path) for m in re.finditer(r"`([^`\n]+)`", line)]


ALL_BLOCKS = [b for doc in DOCS for b in code_blocks(doc)]
PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.lang == "python"]
SHELL_BLOCKS = [b for b in ALL_BLOCKS if b.lang in ("console", "bash")]
JSON_BLOCKS = [b for b in ALL_BLOCKS if b.lang == "json"]


def test_docs_exist():
    names = {p.name for p in DOCS}
    for wanted in (
        "contract.md",
        "blob-header.md",
        "version-policy.md",
        "out-of-tree-guide.md",
        "certification.md",
        "report-schema.md",
        "device-runner.md",
    ):
        assert wanted in names


# --------------------------------------------------------------------------- (a) contract <-> checks

HEADING = re.compile(r"^### (C-[A-Z]+-\d+) \((MUST|SHOULD|MAY)\): (\S.*)$")
CHECK_ID = re.compile(r"^[A-Z]+-\d+$")


@dataclass(frozen=True)
class Clause:
    id: str
    level: str
    title: str
    checks: tuple[str, ...]  # empty for "none yet"
    none_yet_reason: str | None
    line: int


def parse_contract(path: Path = CONTRACT) -> dict[str, Clause]:
    lines = prose_lines(path)
    starts = [i for i, (_, text) in enumerate(lines) if text.startswith("### ")]
    clauses: dict[str, Clause] = {}
    for k, i in enumerate(starts):
        number, text = lines[i]
        m = HEADING.match(text)
        assert m, f"contract.md:{number}: heading {text!r} is not '### C-XXX-N (MUST|SHOULD|MAY): title'"
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        section = [t for _, t in lines[i + 1 : end] if not t.startswith("## ")]
        checked = [t for t in section if t.startswith("Checked by:")]
        assert len(checked) == 1, f"contract.md:{number}: {m.group(1)} needs exactly one 'Checked by:' line"
        value = checked[0].removeprefix("Checked by:").strip()
        none = re.fullmatch(r"none yet \((.+)\)", value)
        if none:
            ids: tuple[str, ...] = ()
        else:
            ids = tuple(part.strip() for part in value.split(","))
            bad = [x for x in ids if not CHECK_ID.match(x)]
            assert not bad, (
                f"contract.md:{number}: {m.group(1)} lists {bad}; write check IDs or 'none yet (reason)'"
            )
        assert m.group(1) not in clauses, f"contract.md:{number}: clause {m.group(1)} appears twice"
        reason = none.group(1) if none else None
        clauses[m.group(1)] = Clause(m.group(1), m.group(2), m.group(3), ids, reason, number)
    return clauses


def _checks():
    from conformance.checks import all_checks

    return all_checks()


CHECKS = _checks()


def test_contract_clauses_parse_and_unchecked_ones_are_few():
    clauses = parse_contract()
    assert clauses, "no clauses found in contract.md"
    unchecked = [c.id for c in clauses.values() if not c.checks]
    assert len(unchecked) <= 5, f"keep 'none yet' clauses few: {unchecked}"
    for c in clauses.values():
        assert c.checks or c.none_yet_reason.strip(), c


def test_the_clauses_no_check_tests_are_the_ones_lists_name():
    """registry.NOT_CHECKED (what `list`, the terminal and the page show where a check number is missing)
    holds exactly the contract's 'none yet' clauses."""
    from conformance.registry import NOT_CHECKED

    unchecked = {c.id for c in parse_contract().values() if not c.checks}
    assert set(NOT_CHECKED) == unchecked, "conformance/registry.py NOT_CHECKED differs from contract.md"


def _clause_ids() -> list[str]:
    try:
        return sorted(parse_contract())
    except AssertionError:  # reported by test_contract_clauses_parse_and_unchecked_ones_are_few
        return []


@pytest.mark.parametrize("clause_id", _clause_ids())
def test_every_clause_names_existing_checks_of_that_clause(clause_id):
    clause = parse_contract()[clause_id]
    by_id = {c.id: c for c in CHECKS}
    for check_id in clause.checks:
        assert check_id in by_id, f"{clause_id} is 'Checked by' {check_id}, which is not a check"
        check = by_id[check_id]
        assert check.clause == clause_id, f"{check_id} cites {check.clause}, but is listed under {clause_id}"
        assert check.level == clause.level, (
            f"{check_id} is {check.level}, clause {clause_id} is {clause.level}"
        )


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.id)
def test_every_check_appears_under_its_own_clause_with_the_same_level(check):
    clauses = parse_contract()
    assert check.clause in clauses, f"{check.id} cites {check.clause}, which contract.md does not define"
    clause = clauses[check.clause]
    assert check.id in clause.checks, f"{check.clause}'s 'Checked by' line does not list {check.id}"
    assert clause.level == check.level, f"{check.clause} is {clause.level}, {check.id} is {check.level}"


# --------------------------------------------------------------------------- (b) python blocks

RUNNER = r"""
import contextlib, io, json, sys, time, traceback
# Warm-up, not timed: the imports most blocks share (a fresh namespace does not
# mean fresh modules; every block still imports what it uses).
import torch, executorch.exir, executorch.runtime, reference_backend, conformance.checks
blocks = json.load(open(sys.argv[1]))
results = {}
for block in blocks:
    out = io.StringIO()
    started = time.monotonic()
    error = None
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block["code"], block["id"], "exec"), {"__name__": "__doc_block__"})
    except BaseException:
        error = traceback.format_exc()
    results[block["id"]] = {"error": error, "stdout": out.getvalue(), "seconds": time.monotonic() - started}
    with open(sys.argv[2], "w") as f:  # written after every block: a crash keeps what ran
        json.dump(results, f)
"""


@pytest.fixture(scope="session")
def python_block_results(tmp_path_factory):
    """Runs every python block once (one subprocess) and returns id -> result."""
    work = tmp_path_factory.mktemp("doc-python")
    spec, out = work / "blocks.json", work / "results.json"
    spec.write_text(json.dumps([{"id": b.id, "code": b.code} for b in PYTHON_BLOCKS]))
    env = dict(os.environ, TMPDIR=str(work), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(spec), str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    results = json.loads(out.read_text()) if out.exists() else {}
    return results, proc


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=lambda b: b.id)
def test_python_block_runs(block, python_block_results):
    results, proc = python_block_results
    if block.id not in results:
        pytest.fail(f"the runner stopped before {block.id} (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    result = results[block.id]
    assert result["error"] is None, f"{block.id} raised:\n{result['error']}\nstdout:\n{result['stdout']}"
    assert result["seconds"] < BLOCK_TIME_LIMIT_S, f"{block.id} took {result['seconds']:.1f} s"


# --------------------------------------------------------------------------- (b) console blocks


def _commands(block: Block) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) of a console block."""
    commands: list[tuple[str, list[str]]] = []
    for line in block.code.splitlines():
        if line.startswith("$ "):
            assert line.startswith(COMMAND_PREFIX), (
                f"{block.id}: {line!r}: console/bash blocks may only run executorch-conformance; "
                "put other shell snippets in a ```text block"
            )
            commands.append((line[2:], []))
        else:
            assert commands, f"{block.id}: a console block must start with '{COMMAND_PREFIX}...'"
            commands[-1][1].append(line)
    return commands


def _squash(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=lambda b: b.id)
def test_console_block_output(block, tmp_path):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for command, expected in _commands(block):
        proc = subprocess.run(
            shlex.split(command), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        output = _squash(proc.stdout + "\n" + proc.stderr)
        assert proc.returncode == 0, (
            f"{block.id}: `{command}` exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
        )
        for line in expected:
            if line.strip() in ("", "..."):
                continue
            assert _squash(line) in output, (
                f"{block.id}: `{command}` did not print {line!r}; it printed:\n{proc.stdout}"
            )


@pytest.mark.parametrize("block", JSON_BLOCKS, ids=lambda b: b.id)
def test_json_block_parses(block):
    json.loads(block.code)


# --------------------------------------------------------------------------- structure of version-policy.md


def test_version_policy_answers_questions_1_to_21_in_order():
    numbers = [int(m.group(1)) for _, t in prose_lines(POLICY) if (m := re.match(r"^### (\d+)\. \S", t))]
    assert numbers == list(range(1, 22)), numbers


# --------------------------------------------------------------------------- (c) paths


def _guide_paths() -> list[tuple[int, str]]:
    """Backticked repository paths in the guide: every inline code span that
    contains '/' and no space, except paths inside the installed ExecuTorch
    package (``executorch/...``), placeholders (``<site-packages>/...``),
    variables (``$ORIGIN/...``), absolute paths and URLs. ``path::name`` also
    requires ``def name``/``class name`` in that file."""
    found = []
    for number, span in inline_code(GUIDE):
        if "/" not in span or any(ch.isspace() for ch in span):
            continue
        if span.startswith(("executorch/", "<", "$", "/", "http:", "https:")):
            continue
        found.append((number, span.removeprefix("./")))
    return found


#: Top-level folders that only commands make (never committed: .gitignore).
UNTRACKED_TOP = {"build", "reports", "dist"}


def _top_level_paths() -> list[tuple[str, int, str]]:
    """In every doc, backticked spans whose first component is a top-level
    folder of the repository (so they can only mean a repository path)."""
    # Folders of the checkout, not of this machine: build/, reports/ and .venv/ hold no tracked file (a
    # doc may name build/cross/... as where a command writes).
    top = {p.name for p in REPO.iterdir() if p.is_dir() and not p.name.startswith(".")} - UNTRACKED_TOP
    found = []
    for doc in DOCS:
        for number, span in inline_code(doc):
            first = span.split("/", 1)[0]
            if "/" in span and first in top and not any(ch.isspace() for ch in span):
                found.append((doc.name, number, span))
    return found


def _check_path(where: str, span: str) -> None:
    path, _, name = span.partition("::")
    matches = list(REPO.glob(path)) if any(c in path for c in "*?[") else [REPO / path]
    assert matches and all(p.exists() for p in matches), f"{where}: `{span}` does not exist in the repository"
    if name:
        text = matches[0].read_text(encoding="utf-8")
        defined = re.search(rf"^\s*(def|class) {re.escape(name)}\b", text, re.MULTILINE)
        assert defined, f"{where}: {path} has no {name}"


def test_guide_names_paths():
    assert len(_guide_paths()) >= 20  # the guide points at files for every step


@pytest.mark.parametrize(("number", "span"), _guide_paths(), ids=lambda x: str(x))
def test_guide_path_exists(number, span):
    _check_path(f"out-of-tree-guide.md:{number}", span)


@pytest.mark.parametrize(("doc", "number", "span"), _top_level_paths(), ids=lambda x: str(x))
def test_repository_path_exists(doc, number, span):
    _check_path(f"{doc}:{number}", span)
