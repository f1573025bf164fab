"""Golden vendor descriptor of suite 0.4.0: ``dataclasses.replace`` of the reference descriptor of 0.4.0
(which gives both ``supported_ops`` and ``operators``) that leaves out ``aten::sub.Tensor``.

The partitioner still claims ``aten::sub.Tensor`` (sample ``elementwise``), so AOT-4 must fail. Suite
0.4.0 passed it: ``__post_init__`` had stored ``operators`` derived from the original fields, and the
copy carried it over and re-declared the operator (issue 29)."""

from __future__ import annotations

import dataclasses

from suite_0_4_0.reference import DESCRIPTOR as REFERENCE

NARROWED = dataclasses.replace(REFERENCE, supported_ops=REFERENCE.supported_ops - {"aten::sub.Tensor"})
