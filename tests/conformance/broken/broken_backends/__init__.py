"""Deliberately defective backends: each breaks one clause of the contract,
so the project's tests can assert the suite catches it with the right check.
Built from the reference backend's parts, renamed."""
