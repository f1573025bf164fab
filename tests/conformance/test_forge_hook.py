"""What RT-5 takes from a descriptor's ``incompatible_blobs`` hook (conformance/vendor/forge_tasks.py): the
blobs it made, each checked, and a clear error naming the hook for anything else; XNNPACK's hook
(scoreboard/xnnpack/descriptor.py) changes exactly its format identifier."""

from __future__ import annotations

import struct

import pytest

from conformance.descriptor import IncompatibleBlob
from conformance.vendor.envelope import VendorError
from conformance.vendor.forge_tasks import MAX_BLOBS, checked

BLOB = b"\x00" * 4 + b"XH00" + b"\x00" * 24


def test_the_blobs_the_hook_made_cross_as_they_are():
    made = [IncompatibleBlob("format 9.0", b"new", "9.0", "1.4")]
    assert checked(made, BLOB) == [
        {"label": "format 9.0", "blob": b"new", "forged": "9.0", "supported": "1.4"}
    ]


@pytest.mark.parametrize(
    ("made", "says"),
    [
        ([], "returned 0 blobs: give 1 to 16 IncompatibleBlob values"),
        ([IncompatibleBlob("x", b"a", "1", "2")] * (MAX_BLOBS + 1), f"returned {MAX_BLOBS + 1} blobs"),
        (
            [("x", b"a", "1", "2")],
            "incompatible_blobs(blob)[0] is a tuple, not a conformance.descriptor.IncompatibleBlob",
        ),
        (
            [IncompatibleBlob("x", b"a", "", "2")],
            "incompatible_blobs(blob)[0].forged is '': give a non-empty string",
        ),
        (
            [IncompatibleBlob("x", "a", "1", "2")],
            "incompatible_blobs(blob)[0] (x): its blob is a str, not bytes",
        ),
        ([IncompatibleBlob("x", BLOB, "1", "2")], "its blob is the blob it was given: it changed nothing"),
    ],
)
def test_anything_else_is_refused_naming_the_hook(made, says):
    with pytest.raises(VendorError) as caught:
        checked(made, BLOB)
    assert says in str(caught.value)


def test_xnnpack_s_hook_changes_only_the_format_identifier():
    from scoreboard.xnnpack.descriptor import incompatible_blobs

    start = 32
    blob = (
        b"\x00" * 4
        + b"XH00"
        + struct.pack("<HI", 30, start)
        + b"\x00" * (start - 14)
        + b"\x10\x00\x00\x00XN01rest"
    )
    (case,) = incompatible_blobs(blob)
    assert (case.forged, case.supported) == ("XN02", "XN01")
    assert case.blob == blob.replace(b"XN01", b"XN02") and len(case.blob) == len(blob)
    with pytest.raises(ValueError, match="does not start with XNNPACK's header"):
        incompatible_blobs(b"\x00" * 40)
