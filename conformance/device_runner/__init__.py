"""The conformance runner's C++ sources, shipped in the package so that an installed suite can build it
without a checkout of this repository (docs/device-runner.md).

``SOURCES`` is the directory to give ``cmake -S``; ``python -m conformance.device_runner`` prints it. The
same sources build the runner program a target runs and, with ``-DRUNNER_IN_PROCESS=ON``, the library a
vendor process loads to run an entry in its own runtime (``conformance.vendor.in_process_runner``).
"""

from __future__ import annotations

from pathlib import Path

#: The directory holding CMakeLists.txt and the runner's sources.
SOURCES = Path(__file__).resolve().parent
