"""Certification a third party can trust: ``verify`` (a report re-checked against the released suite
version that wrote it), ``attestation`` (signed reports), ``rerun`` and ``rerun_identity``
(``verify --rerun``), ``badge``, ``check_wheel`` (a vendor wheel judged before it is installed) and the
commands ``certification_cli``. It may import ``conformance.outcomes``, ``conformance.version``,
``conformance.input_files``, ``conformance.descriptor``, ``conformance.profiles``, ``conformance.report``,
``conformance.released``, the operators' case outcomes, the packaging checks (``check_wheel``) and the
vendor process (``rerun_identity`` describes the backend there); never ``conformance.results`` nor
``conformance.run``."""
