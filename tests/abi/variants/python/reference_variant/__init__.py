"""Test variant: the reference backend's runtime split into two sibling libraries (lib/)."""

from pathlib import Path

LIBRARY = Path(__file__).resolve().parent / "lib" / "libreference_variant.so"
