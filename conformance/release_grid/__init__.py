"""A vendor's own release grid (``executorch-conformance release-grid``).

A backend ships releases: each a Python package that writes blobs and a C++ runtime that reads them.
Users mix them (a model exported last year, an app updated this week), so every pair must behave:
blobs written by release W, loaded by the runtime of release R, either run and give the right outputs or
are refused with DelegateInvalidCompatibility (0x30) and a log line naming the runtime's version (the
contract's C-RT-5, docs/version-policy.md "A vendor's own release grid"). Anything else (another error,
such as 0x23 for an opcode the runtime does not know; a crash; a hang; wrong outputs) fails the cell, and
a release must run every blob it writes itself.

Each release is an environment of its own, given as the python that has it installed
(``--release 0.4.0=/envs/0.4.0/bin/python``). The writer's vendor process lowers the backend's sample
models and one program per declared operator; the runtime's vendor process loads and runs each of them.

- ``releases``: the ``--release`` arguments, checked.
- ``programs``: what one release writes, with the inputs and the outputs eager PyTorch gives.
- ``cells``: what one runtime release does with those programs, each judged.
- ``grid_cli``: the command, its table and its JSON file.
"""
