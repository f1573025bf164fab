"""The release matrix: the conformance suite and the ABI check of the
reference backend against each ExecuTorch release, and the table they produce."""
