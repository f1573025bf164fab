"""What a reason quotes of a vendor process's log (conformance.vendor.process.backend_lines and
quote_log): the backend's own lines, once each, never the warnings Python libraries print."""

from __future__ import annotations

from conformance.vendor.process import backend_lines, quote_log

LEAFSPEC = (
    "/root/.pyenv/versions/3.11.7/lib/python3.11/copyreg.py:105: FutureWarning: `isinstance(treespec, LeafSpec)` "
    "is deprecated, use `isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead."
)
SOURCE = "  return cls.__new__(cls, *args)"


def test_library_warnings_and_their_source_lines_are_left_out():
    lines = [LEAFSPEC, SOURCE, "XnnpackBackend: Failed to create runtime", LEAFSPEC, SOURCE, LEAFSPEC, SOURCE]
    assert backend_lines(lines) == ["XnnpackBackend: Failed to create runtime"]
    assert quote_log(lines) == "; the runtime logged: XnnpackBackend: Failed to create runtime"


def test_each_line_is_quoted_once_where_it_last_appeared_and_indented_lines_of_the_backend_stay():
    lines = ["E init: a", "   detail of a", "E init: b", "E init: a", ""]
    assert backend_lines(lines) == ["   detail of a", "E init: b", "E init: a"]


def test_only_warnings_logged_quotes_nothing():
    assert quote_log([LEAFSPEC, SOURCE]) == ""
    assert quote_log([]) == ""
