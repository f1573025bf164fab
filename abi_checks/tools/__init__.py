"""Maintainer tools that make the committed ABI data; run with ``python -m abi_checks.tools.NAME``.

make_baseline   symbols and type layouts of one release's wheel -> abi_checks/baselines/<release>.json
python_api      the Python AOT surface of releases (griffe) -> abi_checks/python_api/<release>.json
prove_table     builds the reference backend against one release and runs it on another, both ways
abixml, dwarf_types, run_delegated   their helpers (run_delegated runs inside another release's venv)

Nothing under this package is imported by what ships (``abi_checks.cli``, ``diff``, ``check``, ``elf``).
"""
