"""The descriptor as the process that judges sees it: plain data read in the vendor process.

The vendor's descriptor module is vendor code: importing it may hang, crash, exit, print, or change
the suite's own modules (replace the verdict function, say). So the process that judges never imports
it. ``describe`` loads it in a vendor process (``vendor_tasks.describe``), under a timeout, and gets
back JSON text; ``from_info`` rebuilds a ``BackendDescriptor`` from that text alone, in which every
callable of the vendor's is a stand-in that refuses to run (the checks reach the vendor's code only
through the Context, in the vendor process). The runtime libraries the descriptor names are read in the
vendor process too and kept as data.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.descriptor import BackendDescriptor, DescriptorError
from conformance.descriptor import from_info as _from_info
from conformance.outcomes import CheckFailed
from conformance.vendor_process import VendorProcess


def from_info(text: str) -> BackendDescriptor:
    """The descriptor rebuilt from ``vendor_tasks.describe``'s JSON text (``descriptor.from_info``)."""
    return _from_info(json.loads(text))


def describe(spec: str, vendor: VendorProcess, timeout: float) -> tuple[BackendDescriptor, str]:
    """(the descriptor, its JSON text), read in ``vendor``; DescriptorError (one line) if the descriptor
    cannot be loaded there, whatever its module did (raised, crashed, exited, hung)."""
    try:
        answer = vendor.call("describe", what=f"loading the descriptor {spec!r}", timeout=timeout)
    except CheckFailed as exc:
        raise DescriptorError(f"loading backend {spec!r} in the vendor process failed: {exc}") from None
    if "error" in answer:
        raise DescriptorError(answer["error"])
    return from_info(answer["info"]), answer["info"]


#: A vendor process the CLI already started and described the backend with, for the run in this process.
_prepared: dict[str, tuple[BackendDescriptor, str, VendorProcess]] = {}


def prepare(spec: str, log_path: Path, timeout: float) -> BackendDescriptor:
    """Describes ``spec`` in a new vendor process kept for the run that follows in this process (the
    CLI's ``pytest.main``), so that the backend's module is imported once; DescriptorError if it fails."""
    vendor = VendorProcess(spec, None, log_path)
    try:
        descriptor, text = describe(spec, vendor, timeout)
    except BaseException:
        vendor.close()
        raise
    _prepared[spec] = (descriptor, text, vendor)
    return descriptor


def take_prepared(spec: str) -> tuple[BackendDescriptor, str, VendorProcess] | None:
    """What ``prepare`` made for ``spec``, once."""
    return _prepared.pop(spec, None)


def discard_prepared() -> None:
    """Stops the vendor processes of ``prepare`` that no run took."""
    while _prepared:
        _spec, (_d, _t, vendor) = _prepared.popitem()
        vendor.close()
