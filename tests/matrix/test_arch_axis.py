"""The architecture section of the matrix is rendered from the committed results/arch/*.json
(python -m matrix.arch_axis): every runtime check passes on each column, the aarch64 column ran on
aarch64 under QEMU, and a broken result file is one clear line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.cli import main as cli_main
from matrix import arch_render
from matrix.arch_axis import COLUMNS, RUNTIME_CHECKS
from matrix.grid_render import GridError

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "matrix" / "results"


def test_every_column_is_committed_and_every_runtime_check_passes_there():
    columns = arch_render.load(RESULTS)
    assert list(columns) == list(COLUMNS)
    for name, column in columns.items():
        assert {c: v["outcome"] for c, v in column["checks"].items()} == dict.fromkeys(
            RUNTIME_CHECKS, "passed"
        ), name
        assert column["machine"] == COLUMNS[name][1]
        rows = [r for r in column["operators"] if r["cases"]]
        assert rows and all(r["ran"] == r["passed"] == r["delegated"] > 0 for r in rows), name
    # The same operator cases ran everywhere; the emulated column ran aarch64 code under QEMU.
    cases = {name: [(r["op"], r["dtype"], r["ran"]) for r in c["operators"]] for name, c in columns.items()}
    assert len({json.dumps(v) for v in cases.values()}) == 1, cases
    emulated = columns["aarch64-qemu"]
    assert emulated["target"]["machine"] == "aarch64" and emulated["target"]["emulator"].startswith(
        "qemu-aarch64"
    )
    assert emulated["runner_build"]["executorch"].endswith("manylinux_2_28_aarch64.whl")
    assert columns["x86_64-runner"]["target"]["transport"] == "local"
    assert columns["x86_64-in-process"]["target"] is None


def test_the_committed_readme_holds_the_rendered_section():
    committed = (ROOT / "matrix" / "README.md").read_text()
    rendered = arch_render.markdown(arch_render.load(RESULTS))
    assert f"## {arch_render.TITLE}" in committed
    table = [line for line in rendered if line.startswith("| ")]
    assert table and all(line in committed for line in table)
    for limit in arch_render.LIMITS:
        assert f"- {limit}" in committed
    text = "\n".join(rendered)
    assert "| check | x86-64 in-process | x86-64 runner | aarch64 runner under emulation |" in text
    assert "x the x86-64 runner)" in text and "needs glibc >= " in text


def test_no_results_is_a_not_run_section(tmp_path):
    assert arch_render.markdown(arch_render.load(tmp_path)) == [
        f"## {arch_render.TITLE}",
        "",
        "not run: no results/arch/*.json (run `python -m matrix.arch_axis`)",
        "",
    ]


@pytest.mark.parametrize(
    ("content", "said"),
    [("{not json", "not JSON (line 1"), ('{"column": "x"}', "no title, machine, checks, operators")],
)
def test_a_broken_result_file_is_one_clear_line(tmp_path, content, said, capsys):
    shutil.copytree(RESULTS, tmp_path / "results")
    (tmp_path / "results" / "arch" / "aarch64-qemu.json").write_text(content)
    with pytest.raises(GridError) as err:
        arch_render.load(tmp_path / "results")
    assert said in str(err.value) and "arch/aarch64-qemu.json" in str(err.value)
    assert "python -m matrix.arch_axis" in str(err.value)
    results, out = tmp_path / "results", tmp_path / "README.md"
    code = cli_main(["matrix", "render", "--no-abi", "--results", str(results), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in err
