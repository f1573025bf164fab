"""``python -m conformance.device_runner``: prints the directory of the runner's sources (for ``cmake -S``)."""

from conformance.device_runner import SOURCES

print(SOURCES)
