"""Wrong inputs to the CLI get one clear line and a documented exit code, never a
traceback: abi diff with files that are not baselines, expectations files that are
not text, inspect on a multi-gigabyte file (mapped, not read), and generated inputs."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.checks import check_ids
from conformance.cli import main
from conformance.expectations import ExpectationsError, load_expectations

REPO = Path(__file__).resolve().parents[2]
GOLDEN_PTE = REPO / "tests" / "golden" / "1.5.1" / "reference.pte"


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def one_line(proc) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("list.json", "[1, 2]", "list.json holds a JSON list, not an ABI baseline object"),
        (
            "{}.json",
            "{}",
            "{}.json is not an ABI baseline: it lacks release, runtime_library, symbols, layouts",
        ),
        (
            "report.json",
            json.dumps({"schema": "executorch-conformance-report", "results": []}),
            "is not an ABI baseline (it is a conformance report",
        ),
        ("bin.json", b"\x00\xff\xfe", "is not UTF-8"),
        (
            "missing.json",
            None,
            "missing.json: no such file (give a release, e.g. 1.5.0, or a baseline .json)",
        ),
    ],
)
def test_abi_diff_with_a_file_that_is_no_baseline(tmp_path, name, content, says):
    if content is not None:
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    proc = cli("abi", "diff", "1.5.0", name, cwd=tmp_path)
    assert proc.returncode == 2
    assert says in one_line(proc)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    ["release", "symbols", "layouts", "runtime_library", "types", "exported", "x"]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_abi_diff_never_raises_on_any_json(tmp_path, capsys, value):
    path = tmp_path / "b.json"
    path.write_text(json.dumps(value))
    code = main(["abi", "diff", "1.5.0", str(path)])
    err = capsys.readouterr().err
    assert code in (0, 1, 2), err
    assert "internal error" not in err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (bytes(range(256)) * 4, "is not UTF-8 text (byte 0x80 at offset 128)"),
        (b"\xff\xfe[not_applicable]", "is not UTF-8 text (byte 0xff at offset 0)"),
        (b"expected_failures = 3\n", "expected_failures must be a table"),
        (b"[expected_failures\n", "is not valid TOML"),
    ],
)
def test_expectations_that_are_not_a_toml_text_are_refused(tmp_path, content, says):
    path = tmp_path / "expectations.toml"
    path.write_bytes(content)
    with pytest.raises(ExpectationsError, match=r".*") as info:
        load_expectations(path, check_ids())
    assert says in str(info.value)


def test_run_with_a_binary_expectations_file_is_a_usage_error(tmp_path):
    path = tmp_path / "expectations.toml"
    path.write_bytes(bytes(range(256)))
    proc = cli("run", "--backend", "ReferenceBackend", "--expectations", path, "--report-dir", tmp_path / "r")
    assert proc.returncode == 2 and "is not UTF-8 text" in one_line(proc)
    assert not (tmp_path / "r" / "report.json").exists()


@settings(max_examples=60, deadline=None)
@given(content=st.binary(max_size=300) | st.text(max_size=200).map(str.encode))
def test_expectations_raise_only_expectations_errors(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("e") / "e.toml"
    path.write_bytes(content)
    with contextlib.suppress(ExpectationsError):
        load_expectations(path, check_ids())


def _max_rss_of_inspect(path: Path) -> tuple[int, int, str]:
    code = (
        "import resource, sys\n"
        "from conformance.cli import main\n"
        "rc = main(['inspect', sys.argv[1]])\n"
        "print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300
    )
    rss = int(next(line.split()[1] for line in proc.stderr.splitlines() if line.startswith("MAXRSS_KB")))
    return proc.returncode, rss, proc.stdout + proc.stderr


def test_inspect_maps_a_sparse_3_gb_file_instead_of_reading_it(tmp_path):
    zeros = tmp_path / "zeros.pte"
    with open(zeros, "wb") as f:
        f.truncate(3 * 1024**3)
    code, rss_kb, output = _max_rss_of_inspect(zeros)
    assert code == 2 and "wrong file identifier" in output and "Traceback" not in output
    assert rss_kb < 1024 * 1024, f"inspect used {rss_kb // 1024} MiB for a sparse 3 GB file"


def test_inspect_describes_a_real_program_padded_to_3_gb(tmp_path):
    big = tmp_path / "big.pte"
    big.write_bytes(GOLDEN_PTE.read_bytes())
    with open(big, "r+b") as f:
        f.truncate(3 * 1024**3)
    code, rss_kb, output = _max_rss_of_inspect(big)
    assert code == 0, output
    assert "contract header: backend ReferenceBackend" in output and "method 'forward'" in output
    assert rss_kb < 1536 * 1024, f"inspect used {rss_kb // 1024} MiB for a 3 GB file"


def test_inspect_of_a_directory_or_missing_file_is_one_line(tmp_path):
    for target in (tmp_path, tmp_path / "missing.pte"):
        proc = cli("inspect", target)
        assert proc.returncode == 2 and str(target.name) in one_line(proc)
