"""The descriptor as the process that judges sees it: plain data read in the vendor process.

The vendor's descriptor module is vendor code: importing it may hang, crash, exit, print, or change
the suite's own modules (replace the verdict function, say). So the process that judges never imports
it. ``describe`` loads it in a vendor process (``core_tasks.describe``), under a timeout, and gets
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
from conformance.vendor.process import VendorProcess


def from_info(text: str) -> BackendDescriptor:
    """The descriptor rebuilt from ``core_tasks.describe``'s JSON text (``descriptor.from_info``)."""
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


class Prepared:
    """A vendor process that already described the backend, handed by ``executorch-conformance run`` to
    the run it starts in the same process (as a plugin object of ``pytest.main``), so that the backend's
    module is imported once. The plugin takes it (``take``); whoever made it discards it at the end."""

    def __init__(
        self,
        spec: str,
        descriptor: BackendDescriptor,
        text: str,
        vendor: VendorProcess,
        warm: VendorProcess | None = None,
    ) -> None:
        self.spec, self.descriptor = spec, descriptor
        self._kept: tuple[BackendDescriptor, str, VendorProcess] | None = (descriptor, text, vendor)
        self._warm = warm

    def take(self, spec: str) -> tuple[BackendDescriptor, str, VendorProcess] | None:
        """(the descriptor, its JSON text, the vendor process) for ``spec``, once; None otherwise."""
        if spec != self.spec or self._kept is None:
            return None
        kept, self._kept = self._kept, None
        return kept

    def take_warm(self, spec: str) -> VendorProcess | None:
        """The vendor process started for work ahead while the backend was described (``prepare``), once;
        None if there is none or ``spec`` is another backend."""
        if spec != self.spec:
            return None
        warm, self._warm = self._warm, None
        return warm

    def discard(self) -> None:
        """Stops the vendor processes no run took."""
        if self._kept is not None:
            self._kept[2].close()
            self._kept = None
        if self._warm is not None:
            self._warm.close()
            self._warm = None


def prepare(
    spec: str, log_path: Path, timeout: float, memory_bytes: int | None = None, warm_huge_pages: bool = False
) -> Prepared:
    """Describes ``spec`` in a new vendor process (with ``memory_bytes`` as its memory limit) kept for the
    run that follows in this process; DescriptorError if it fails. ``warm_huge_pages``: meanwhile, a second
    vendor process with huge pages starts (``VendorProcess.warm_up``) for the work the run makes ahead
    (``Context.keep_warm``: NDATA-5's program), on the core the description leaves idle."""
    warm = VendorProcess(spec, None, None, memory_bytes, huge_pages=True) if warm_huge_pages else None
    vendor = VendorProcess(spec, None, log_path, memory_bytes)
    try:
        if warm is not None:
            warm.warm_up()
        descriptor, text = describe(spec, vendor, timeout)
    except BaseException:
        vendor.close()
        if warm is not None:
            warm.close()
        raise
    return Prepared(spec, descriptor, text, vendor, warm)
