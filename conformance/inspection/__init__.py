"""Readers of what a vendor ships, for the checks and the ``inspect`` command: ``blob_header`` (the
contract blob header, over ``backend_kit.header``), ``forge`` (a delegate blob rewritten inside a real
.pte), ``library_paths`` (where a shared library's dependencies resolve), ``private_imports`` (the
private executorch modules a vendor's sources reach) and ``inspect_pte`` (``executorch-conformance
inspect``). It may import ``conformance.pte``, ``conformance.input_files``, ``conformance.fdcapture``,
``conformance.descriptor`` and the vendor process (``inspect_pte`` loads a method there); the checks
and ``conformance.compat`` import it, so it imports neither."""
