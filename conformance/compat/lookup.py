"""Where ``compat`` finds a backend's acceptance rules: a rules file given on the command line, or the
file the installed backend's descriptor points to (its ``acceptance`` field).

The descriptor is the vendor's code, so it is read in a vendor process (``remote_descriptor``), as the
suite reads it for a run: importing it there may fail or hang without harming this process. The entry
point named like the backend id is the one read (the suite's convention: ``--backend ReferenceBackend``
names both), so an unknown id costs no vendor process.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from conformance.compat.errors import CompatInputError
from conformance.compat.rules import AcceptanceRules, load_rules

#: How long reading one descriptor in the vendor process may take (it imports torch and the vendor's package).
DESCRIBE_TIMEOUT_S = 300.0


def _declared_rules(spec: str, timeout: float) -> tuple[str, AcceptanceRules | None]:
    """(backend id, its rules or None) of the installed descriptor ``spec``."""
    from conformance.descriptor import DescriptorError
    from conformance.vendor.process import VendorProcess
    from conformance.vendor.remote_descriptor import describe

    vendor = VendorProcess(spec)
    try:
        descriptor, _ = describe(spec, vendor, timeout)
    except DescriptorError as exc:
        raise CompatInputError(f"the installed backend {spec!r} cannot be read: {exc}") from None
    finally:
        vendor.close()
    if descriptor.acceptance is None:
        return descriptor.backend_id, None
    return descriptor.backend_id, load_rules(descriptor.acceptance.path)


def find_rules(
    backend_ids: Iterable[str], rules_files: Sequence[str | Path] = (), timeout: float = DESCRIBE_TIMEOUT_S
) -> list[AcceptanceRules]:
    """The rules of each of ``backend_ids`` that has some: from ``rules_files`` first, then from the
    installed descriptor of that name. A backend with none is left out (``predict`` then refuses it as
    unknown, unless its runtime ships inside ExecuTorch and was measured)."""
    from conformance.descriptor import available_backends

    found: dict[str, AcceptanceRules] = {}
    for path in rules_files:
        rules = load_rules(path)
        if rules.backend_id in found:
            raise CompatInputError(f"--rules {path}: a rules file for {rules.backend_id} is already given")
        found[rules.backend_id] = rules
    wanted = [b for b in dict.fromkeys(backend_ids) if b not in found]
    if not wanted:
        return list(found.values())
    installed = available_backends()
    for spec in (b for b in wanted if b in installed):
        backend_id, declared = _declared_rules(spec, timeout)
        if declared is not None and backend_id == spec:
            found[backend_id] = declared
    return list(found.values())
