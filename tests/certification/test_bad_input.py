"""Bad input to verify and badge is a one-line error with a non-zero exit:
never a traceback, never a full read of a huge file."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from templates import make_report

from conformance.certification.strict_json import MAX_READ_BYTES, Unreadable, read_json
from conformance.report import seal


def cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def _resealed(change):
    report = make_report()
    report.pop("content_sha256")
    change(report)
    return json.dumps(seal(report))


def _check_id_list(r):
    r["results"][0]["id"] = ["AOT-1"]


def _capabilities_int(r):
    r["backend"]["capabilities"] = 3


def _summary_string(r):
    r["summary"]["passed"] = "24"


def _results_dict(r):
    r["results"] = {"AOT-1": "passed"}


def _bool_version(r):
    r["schema_version"] = True


def _options_list(r):
    r["options"] = ["ReferenceBackend"]


def _missing_keys(r):
    for key in ("results", "backend", "verdict"):
        del r[key]


CASES = {
    "a JSON list": (b"[1, 2]", "holds a JSON list, not a report object"),
    "a JSON string": (b'"report"', "holds a JSON string, not a report object"),
    "an empty object": (b"{}", "not a conformance report"),
    "missing keys": (_resealed(_missing_keys).encode(), "field 'results' is missing"),
    "a list as a check id": (
        _resealed(_check_id_list).encode(),
        "field 'results[0].id' is a list, not a string",
    ),
    "an int as capabilities": (
        _resealed(_capabilities_int).encode(),
        "field 'backend.capabilities' is an integer, not a list",
    ),
    "a string as a count": (_resealed(_summary_string).encode(), "field 'summary.passed' is a string"),
    "an object as results": (_resealed(_results_dict).encode(), "field 'results' is an object, not a list"),
    "a boolean as schema_version": (_resealed(_bool_version).encode(), "field 'schema_version' is a boolean"),
    "a list as options": (_resealed(_options_list).encode(), "field 'options' is a list, not an object"),
    "non-UTF-8 bytes": (b'{"schema": "\xff\xfe"}', "is not UTF-8 text (byte 0xff at offset 12)"),
    "not JSON": (
        b"schema: executorch-conformance-report\n",
        "is not JSON: Expecting value at line 1 column 1",
    ),
    "empty file": (b"", "is not JSON"),
    "deeply nested": (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    "an envelope with a garbage payload": (
        json.dumps(
            {"payload": "!!!", "payloadType": "application/vnd.in-toto+json", "signatures": []}
        ).encode(),
        "the envelope's payload is not base64",
    ),
    "an envelope of another payload type": (
        json.dumps({"payload": "e30=", "payloadType": "text/plain", "signatures": []}).encode(),
        "payloadType is 'text/plain'",
    ),
    "several JSON lines": (b'{"a": 1}\n{"b": 2}\n', "holds 2 JSON lines"),
    "a duplicated key": (
        b'{"schema": "executorch-conformance-report", "schema": "x"}',
        "key 'schema' appears twice in one object",
    ),
    "NaN": (b'{"duration_s": NaN}', "NaN is not JSON"),
}


@pytest.mark.parametrize("command", ["verify", "badge"])
@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_one_line_and_a_nonzero_exit(tmp_path, command, name):
    content, expected = CASES[name]
    path = tmp_path / "report.json"
    path.write_bytes(content)
    proc = cli(command, path)
    output = (proc.stdout + proc.stderr).strip()
    assert proc.returncode != 0, output
    assert "Traceback" not in output
    assert len(output.splitlines()) == 1, output
    assert expected in output, output
    assert not (tmp_path / "badge.svg").exists()


@pytest.mark.parametrize("command", ["verify", "badge"])
def test_a_3_gb_file_is_not_read(tmp_path, command):
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.truncate(3 * 1024**3)  # sparse: no disk space used
    started = time.monotonic()
    proc = cli(command, path)
    output = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 1 and len(output.splitlines()) == 1 and "Traceback" not in output
    assert "is 3 GiB, more than the 64 MiB verify reads; not read" in output
    assert time.monotonic() - started < 20


def test_the_cap_applies_to_what_is_read_not_only_to_the_size(tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(b" " * 1000 + b"{}")
    with pytest.raises(Unreadable, match="more than the 1000 bytes verify reads"):
        read_json(path, max_bytes=1000)
    assert MAX_READ_BYTES == 64 * 1024 * 1024


def test_missing_file_and_directory(tmp_path):
    for target, expected in (
        (tmp_path / "nope.json", "cannot be read: No such file or directory"),
        (tmp_path, "is a directory"),
    ):
        proc = cli("verify", target)
        output = (proc.stdout + proc.stderr).strip()
        assert proc.returncode == 1 and len(output.splitlines()) == 1 and expected in output, output


def test_usage_errors_are_one_line(tmp_path):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(make_report()))
    not_a_key = tmp_path / "report-start.json"  # under the size cap of a key file, and no PEM key
    not_a_key.write_text(path.read_text()[:4000])
    for args, expected in (
        (("--require-signature",), "--require-signature needs --trusted-key"),
        (("--at", "tomorrow"), "--at 'tomorrow' is not a date"),
        (("--trusted-key", tmp_path / "missing.pem"), "cannot read key"),
        (("--trusted-key", not_a_key), "is not a PEM public key"),
    ):
        proc = cli("verify", path, *args)
        output = (proc.stdout + proc.stderr).strip()
        assert proc.returncode == 2 and len(output.splitlines()) == 1 and expected in output, output
