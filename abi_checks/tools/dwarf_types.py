"""Canonical member types of classes, read straight from DWARF with pyelftools.

libabigail 2.2's ``abidw`` keeps a single typedef for all instantiations of an alias template
(``executorch::aten::ArrayRef<T>`` is ``using ArrayRef = executorch::runtime::ArrayRef<T>``), so
``ArrayRef<double>`` and ``ArrayRef<bool>`` members both come out as the first instantiation it
met. Layout numbers (offsets, sizes) are right; the type names are not. This module re-reads the
member types from the probe's DWARF, resolving typedefs to the type they name, so member type
comparisons between releases are exact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

_CLASS_TAGS = {"DW_TAG_class_type", "DW_TAG_structure_type", "DW_TAG_union_type"}
_SCOPE_TAGS = _CLASS_TAGS | {"DW_TAG_namespace", "DW_TAG_enumeration_type"}


def _name(die) -> str | None:
    a = die.attributes.get("DW_AT_name")
    return a.value.decode("utf-8", "replace") if a is not None else None


class _Renderer:
    def __init__(self) -> None:
        self.qual: dict[int, str] = {}  # die offset -> qualified name of scopes

    def type_of(self, die) -> object | None:
        return die.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in die.attributes else None

    def render(self, die, depth: int = 0) -> str:
        if die is None:
            return "void"
        if depth > 40:
            return "<deep>"
        tag = die.tag
        if tag == "DW_TAG_base_type":
            return _name(die) or "?"
        if tag in ("DW_TAG_typedef", "DW_TAG_atomic_type"):
            return self.render(self.type_of(die), depth + 1)
        if tag in _CLASS_TAGS or tag == "DW_TAG_enumeration_type":
            return self.qual.get(die.offset) or self._qualify(die)
        if tag == "DW_TAG_pointer_type":
            return self.render(self.type_of(die), depth + 1) + "*"
        if tag == "DW_TAG_reference_type":
            return self.render(self.type_of(die), depth + 1) + "&"
        if tag == "DW_TAG_rvalue_reference_type":
            return self.render(self.type_of(die), depth + 1) + "&&"
        if tag == "DW_TAG_const_type":
            return self.render(self.type_of(die), depth + 1) + " const"
        if tag == "DW_TAG_volatile_type":
            return self.render(self.type_of(die), depth + 1) + " volatile"
        if tag == "DW_TAG_array_type":
            dims = ""
            for sub in die.iter_children():
                if sub.tag != "DW_TAG_subrange_type":
                    continue
                if "DW_AT_count" in sub.attributes:
                    dims += f"[{sub.attributes['DW_AT_count'].value}]"
                elif "DW_AT_upper_bound" in sub.attributes:
                    dims += f"[{sub.attributes['DW_AT_upper_bound'].value + 1}]"
                else:
                    dims += "[]"
            return self.render(self.type_of(die), depth + 1) + dims
        if tag == "DW_TAG_subroutine_type":
            params = [
                self.render(self.type_of(c), depth + 1)
                for c in die.iter_children()
                if c.tag == "DW_TAG_formal_parameter"
            ]
            return f"{self.render(self.type_of(die), depth + 1)} ({', '.join(params)})"
        if tag == "DW_TAG_ptr_to_member_type":
            cont = die.get_DIE_from_attribute("DW_AT_containing_type")
            return f"{self.render(self.type_of(die), depth + 1)} {self.render(cont, depth + 1)}::*"
        if tag == "DW_TAG_unspecified_type":
            return _name(die) or "?"
        return f"<{tag}>"

    def _qualify(self, die) -> str:
        parts = [_name(die) or "<anonymous>"]
        p = die.get_parent()
        while p is not None and p.tag in _SCOPE_TAGS:
            parts.append(_name(p) or "<anonymous>")
            p = p.get_parent()
        q = "::".join(reversed(parts))
        self.qual[die.offset] = q
        return q


def member_types(so: str | Path, wanted: set[str]) -> dict[str, dict[str, str]]:
    """{qualified class name: {member name: canonical type}} for the classes in ``wanted``."""
    from elftools.elf.elffile import ELFFile

    out: dict[str, dict[str, str]] = {}
    r = _Renderer()
    with open(so, "rb") as f:
        elf = ELFFile(f)
        if not elf.has_dwarf_info():
            return out
        dwarf = elf.get_dwarf_info()
        for cu in dwarf.iter_CUs():
            stack: list[tuple[Any, list[str]]] = [(cu.get_top_DIE(), [])]
            while stack:
                die, scope = stack.pop()
                for child in die.iter_children():
                    if child.tag == "DW_TAG_namespace":
                        stack.append((child, scope + [_name(child) or "<anonymous>"]))
                    elif child.tag in _CLASS_TAGS and (name := _name(child)):
                        q = "::".join([*scope, name])
                        r.qual[child.offset] = q
                        if q in wanted and q not in out and "DW_AT_declaration" not in child.attributes:
                            out[q] = {
                                member: r.render(r.type_of(m))
                                for m in child.iter_children()
                                if m.tag == "DW_TAG_member"
                                and (member := _name(m))
                                and "DW_AT_external" not in m.attributes
                            }
                        stack.append((child, [*scope, name]))
    return out
