"""The one bounded reader of a user's file (conformance/input_files.py ``read_bounded``), and each command
that reads a capped file through it refusing a file one byte over its cap, naming the file and the cap."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conformance.byte_sizes import byte_size, parse_bytes
from conformance.input_files import FileTooLarge, NotARegularFile, read_bounded


def test_a_file_at_the_limit_is_read_whole(tmp_path: Path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_bounded(path, 100) == b"x" * 100


def test_a_file_one_byte_over_the_limit_is_refused_naming_its_size(tmp_path: Path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 2049)
    with pytest.raises(FileTooLarge) as caught:
        read_bounded(path, 2048)
    assert (caught.value.size, caught.value.limit) == (2049, 2048)
    assert str(caught.value) == f"{path} is 2 KiB, more than the 2 KiB read; not read"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile, match="a FIFO"):
        read_bounded(fifo, 10)


@pytest.mark.parametrize(
    ("n", "text"), [(12, "12 bytes"), (1536, "1.5 KiB"), (64 << 20, "64 MiB"), (4 << 30, "4 GiB")]
)
def test_byte_sizes_read_as_a_person_says_them(n: int, text: str):
    assert byte_size(n) == text


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("4096", 4096),
        ("16MiB", 16 << 20),
        ("2 gib", 2 << 30),
        ("2G", 2 << 30),
        ("512m", 512 << 20),
        ("1.5K", 1536),
        ("100B", 100),
        ("3 GB", 3 << 30),
    ],
)
def test_sizes_parse_as_people_write_them(text: str, n: int):
    assert parse_bytes(text) == n


@pytest.mark.parametrize("text", ["", "lots", "-4G", "4T", "4 ib", "1.G", "G"])
def test_a_size_that_is_none_is_refused_naming_the_text(text: str):
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        parse_bytes(text)


def test_every_size_shown_parses_back_to_itself():
    for n in (12, 1536, 64 << 20, 4 << 30, 17 << 30):
        assert parse_bytes(byte_size(n).replace(" bytes", "")) == n


def test_each_capped_reader_refuses_one_byte_over_its_cap(tmp_path: Path):
    from conformance.certification.attestation import MAX_KEY_BYTES, AttestationError, load_private_key
    from conformance.certification.strict_json import MAX_READ_BYTES, Unreadable, read_json
    from conformance.compat.rules import MAX_RULES_BYTES, CompatInputError, load_rules
    from conformance.expectations import MAX_BYTES, ExpectationsError, load_expectations

    def over(name: str, cap: int) -> Path:
        path = tmp_path / name
        with open(path, "wb") as f:
            f.truncate(cap + 1)  # sparse: the cap of a report is 64 MiB
        return path

    with pytest.raises(AttestationError, match=f"more than {MAX_KEY_BYTES} bytes: not a PEM key"):
        load_private_key(over("key.pem", MAX_KEY_BYTES))
    with pytest.raises(Unreadable, match="more than the 64 MiB verify reads"):
        read_json(over("report.json", MAX_READ_BYTES))
    with pytest.raises(CompatInputError, match=f"more than {MAX_RULES_BYTES} bytes, not a rules file"):
        load_rules(over("rules.json", MAX_RULES_BYTES))
    with pytest.raises(ExpectationsError, match=r"is larger than .* KiB; not read"):
        load_expectations(over("expectations.toml", MAX_BYTES), [])
