"""Golden vendor module of suite 0.4.0 with two descriptors, one of them malformed: ``MISNAMED``
declares an operator by its Python name (``"relu"``) instead of its schema name.

Suite 0.4.0 raised while the module was imported (``__post_init__`` turned the bad ``operators`` into a
DescriptorError), so ``GOOD`` could not be loaded either; only ``MISNAMED`` may be refused (issue 29)."""

from __future__ import annotations

import dataclasses

from suite_0_4_0.reference import DESCRIPTOR as REFERENCE

GOOD = dataclasses.replace(REFERENCE)

MISNAMED = dataclasses.replace(REFERENCE, operators={"relu": ["float32"]})
