"""Type layouts from libabigail's ABI XML (the output of ``abidw``).

``abidw`` reads the DWARF of a probe library compiled against a release's headers; this module
turns its XML into plain records: size, alignment, base classes, data members (name, type,
offset), virtual functions in vtable order, enumerators.

Alignment: DWARF (and so abidw) carries an alignment only for explicitly aligned types; for the
others it is derived here the way the Itanium C++ ABI does (the largest alignment of the bases
and non-static members, pointer alignment when there is a vtable pointer), and marked
``"alignment_source": "derived"``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from abi_checks.elf import demangle_many

_TYPE_TAGS = {
    "type-decl",
    "class-decl",
    "union-decl",
    "enum-decl",
    "typedef-decl",
    "pointer-type-def",
    "reference-type-def",
    "qualified-type-def",
    "array-type-def",
    "function-type",
    "pointer-to-member-type",
}
_SCOPED = {"class-decl", "union-decl", "enum-decl", "typedef-decl"}
POINTER_BITS = 64


class AbiXml:
    """An index of one abidw corpus: type-id -> element, and qualified names."""

    def __init__(self, text: str) -> None:
        self.root = ET.fromstring(text)  # noqa: S314  abidw output made on this machine
        self.by_id: dict[str, ET.Element] = {}
        self.qualname: dict[int, str] = {}  # id(element) -> qualified name
        self.defs: dict[str, ET.Element] = {}  # qualified name -> defining class/union/enum element
        self._walk(self.root, [])
        self._render_cache: dict[tuple[str, bool], str] = {}

    def _walk(self, elem: ET.Element, scope: list[str]) -> None:
        for child in elem:
            tag = child.tag
            if tag == "namespace-decl":
                self._walk(child, scope + [child.get("name", "")])
                continue
            if tag in _TYPE_TAGS:
                tid = child.get("id")
                if tid and (tid not in self.by_id or not _is_decl_only(child)):
                    self.by_id[tid] = child
                if tag in _SCOPED:
                    name = child.get("name", "")
                    q = "::".join(scope + [name]) if name else ""
                    self.qualname[id(child)] = q
                    if tag != "typedef-decl" and q and not _is_decl_only(child):
                        self.defs.setdefault(q, child)
                    if tag in ("class-decl", "union-decl"):
                        self._walk(child, scope + [name])
                    continue
            if tag in ("member-type", "abi-instr", "abi-corpus", "abi-corpus-group"):
                self._walk(child, scope)

    # ------------------------------------------------------------ names

    def definition(self, elem: ET.Element) -> ET.Element:
        """The defining element for a declaration-only class (same qualified name)."""
        if _is_decl_only(elem):
            q = self.qualname.get(id(elem))
            if q and q in self.defs:
                return self.defs[q]
        return elem

    def render(self, tid: str | None, canonical: bool = False) -> str:
        """The type's name as written (typedefs kept) or canonical (typedefs resolved)."""
        if tid is None:
            return "void"
        key = (tid, canonical)
        if key in self._render_cache:
            return self._render_cache[key]
        self._render_cache[key] = "<recursive>"
        out = self._render(tid, canonical)
        self._render_cache[key] = out
        return out

    def _render(self, tid: str, canonical: bool) -> str:
        e = self.by_id.get(tid)
        if e is None:
            return f"<unknown {tid}>"
        tag = e.tag
        if tag == "type-decl":
            return e.get("name", "?")
        if tag == "typedef-decl" and canonical:
            return self.render(e.get("type-id"), canonical)
        if tag in _SCOPED:
            q = self.qualname.get(id(e)) or ""
            return q or f"<anonymous {tag.split('-')[0]}>"
        if tag == "pointer-type-def":
            return self.render(e.get("type-id"), canonical) + "*"
        if tag == "reference-type-def":
            return self.render(e.get("type-id"), canonical) + ("&" if e.get("kind") == "lvalue" else "&&")
        if tag == "qualified-type-def":
            quals = [q for q in ("const", "volatile") if e.get(q) == "yes"]
            return self.render(e.get("type-id"), canonical) + ("" if not quals else " " + " ".join(quals))
        if tag == "array-type-def":
            dims = "".join(
                f"[{s.get('length')}]" if s.get("length") not in (None, "infinite", "unknown") else "[]"
                for s in e.findall("subrange")
            )
            return self.render(e.get("element-type-id"), canonical) + dims
        if tag == "function-type":
            params = [
                self.render(p.get("type-id"), canonical)
                for p in e.findall("parameter")
                if p.get("is-artificial") != "yes"
            ]
            ret = e.find("return")
            rtype = self.render(ret.get("type-id") if ret is not None else None, canonical)
            return f"{rtype} ({', '.join(params)})"
        if tag == "pointer-to-member-type":
            member = self.render(e.get("member-type-id"), canonical)
            return f"{member} {self.render(e.get('containing-type-id'), canonical)}::*"
        return f"<{tag}>"

    def strip(self, tid: str | None) -> ET.Element | None:
        """Follows typedefs and cv-qualifiers to the underlying type element."""
        seen = set()
        while tid and tid not in seen:
            seen.add(tid)
            e = self.by_id.get(tid)
            if e is None:
                return None
            if e.tag in ("typedef-decl", "qualified-type-def"):
                tid = e.get("type-id")
                continue
            return self.definition(e)
        return None

    # ------------------------------------------------------------ size / alignment

    def size_bits(self, tid: str | None) -> int | None:
        e = self.strip(tid)
        if e is None:
            return None
        if e.tag in ("pointer-type-def", "reference-type-def", "pointer-to-member-type"):
            return int(e.get("size-in-bits", POINTER_BITS))
        if e.tag == "array-type-def":
            bits = e.get("size-in-bits")
            return int(bits) if bits and bits.isdigit() else None
        s = e.get("size-in-bits")
        if s is None and e.tag == "enum-decl":
            u = e.find("underlying-type")
            return self.size_bits(u.get("type-id")) if u is not None else None
        return int(s) if s and s.isdigit() else None

    def align_bits(self, tid: str | None, _depth: int = 0) -> int | None:
        e = self.strip(tid)
        if e is None or _depth > 50:
            return None
        if alignment := e.get("alignment-in-bits"):
            return int(alignment)
        if e.tag in ("pointer-type-def", "reference-type-def"):
            return POINTER_BITS
        if e.tag == "pointer-to-member-type":
            return POINTER_BITS
        if e.tag == "type-decl":
            s = int(e.get("size-in-bits", "8") or 8)
            return min(max(s, 8), 128)
        if e.tag == "enum-decl":
            u = e.find("underlying-type")
            return self.align_bits(u.get("type-id"), _depth + 1) if u is not None else None
        if e.tag == "array-type-def":
            return self.align_bits(e.get("element-type-id"), _depth + 1)
        if e.tag in ("class-decl", "union-decl"):
            al = 8
            if _has_vptr(self, e):
                al = POINTER_BITS
            for b in e.findall("base-class"):
                al = max(al, self.align_bits(b.get("type-id"), _depth + 1) or 8)
            for dm in e.findall("data-member"):
                if dm.get("static") == "yes":
                    continue
                v = dm.find("var-decl")
                if v is not None:
                    al = max(al, self.align_bits(v.get("type-id"), _depth + 1) or 8)
            return al
        return None

    # ------------------------------------------------------------ records

    def record(self, elem: ET.Element) -> dict:
        """Layout record of a class, union or enum element."""
        elem = self.definition(elem)
        q = self.qualname.get(id(elem), "")
        if elem.tag == "enum-decl":
            u = elem.find("underlying-type")
            return {
                "qualified_name": q,
                "kind": "enum",
                "underlying_type": self.render(u.get("type-id")) if u is not None else None,
                "size": (self.size_bits(elem.get("id")) or 0) // 8,
                "values": {en.get("name"): int(en.get("value", "")) for en in elem.findall("enumerator")},
            }
        kind = (
            "union" if elem.tag == "union-decl" else ("struct" if elem.get("is-struct") == "yes" else "class")
        )
        if _is_decl_only(elem):
            return {"qualified_name": q, "kind": kind, "declaration_only": True}
        rec: dict = {
            "qualified_name": q,
            "kind": kind,
            "size": int(elem.get("size-in-bits", "0")) // 8,
            "alignment": (self.align_bits(elem.get("id")) or 8) // 8,
            "alignment_source": "dwarf" if elem.get("alignment-in-bits") else "derived",
            "bases": [
                {
                    "type": self.render(b.get("type-id"), canonical=True),
                    "offset": int(b.get("layout-offset-in-bits", "0")) // 8,
                    "virtual": b.get("is-virtual") == "yes",
                }
                for b in elem.findall("base-class")
            ],
            "members": [],
        }
        for dm in elem.findall("data-member"):
            v = dm.find("var-decl")
            if v is None or dm.get("static") == "yes":
                continue
            off = dm.get("layout-offset-in-bits")
            tid = v.get("type-id")
            m = {
                "name": v.get("name"),
                "type": self.render(tid),
                "canonical_type": self.render(tid, canonical=True),
                "offset": (int(off) // 8) if off is not None else 0,
                "size": (self.size_bits(tid) or 0) // 8,
            }
            if off is not None and int(off) % 8:
                m["bit_offset"] = int(off)
            if m["canonical_type"] == m["type"]:
                del m["canonical_type"]
            rec["members"].append(m)
        vt = self.vtable(elem)
        if vt:
            rec["vtable"] = vt
        nested = {}
        for mt in elem.findall("member-type"):
            for ch in mt:
                if ch.tag in ("class-decl", "union-decl", "enum-decl") and not _is_decl_only(ch):
                    name = ch.get("name", "")
                    if name and not name.startswith("__anonymous"):
                        nested[name] = self.record(ch)
        if nested:
            rec["nested"] = nested
        return rec

    def vtable(self, elem: ET.Element) -> list[dict]:
        """Virtual functions in vtable order (slot numbers of the Itanium C++ ABI).

        GCC emits no vtable slot for a virtual destructor (abidw shows -1): in the Itanium ABI
        the destructor takes two consecutive slots (complete, deleting) at its declaration
        position, which is the lowest pair of slots the other virtuals leave free.
        """
        slots, dtors = [], []
        mangled_names = []
        for mf in elem.findall("member-function"):
            off = mf.get("vtable-offset")
            if off is None:
                continue
            fd = mf.find("function-decl")
            if fd is None:
                continue
            mangled_names.append(fd.get("mangled-name") or "")
            ret = fd.find("return")
            entry: dict[str, Any] = {
                "name": fd.get("name"),
                "mangled": fd.get("mangled-name") or "",
                "const": mf.get("const") == "yes",
                "returns": self.render(ret.get("type-id") if ret is not None else None, canonical=True),
            }
            if mf.get("destructor") == "yes" or int(off) < 0:
                dtors.append(entry)
            else:
                entry["slot"] = int(off)
                slots.append(entry)
        if not slots and not dtors:
            return []
        dem = demangle_many([n for n in mangled_names if n])
        taken = {s["slot"] for s in slots}
        out = []
        for d in dtors[:1]:
            slot = 0
            while slot in taken or slot + 1 in taken:
                slot += 1
            taken |= {slot, slot + 1}
            out.append(
                {**d, "slot": slot, "slots": 2, "slot_source": "inferred (Itanium ABI destructor pair)"}
            )
        out += slots
        out.sort(key=lambda s: s["slot"])
        for s in out:
            s["signature"] = dem.get(s["mangled"], s["mangled"]) if s["mangled"] else s["name"]
            s.pop("mangled")
        return out

    def by_value_dependencies(self, elem: ET.Element, prefix: tuple[str, ...]) -> dict[str, ET.Element]:
        """Class, union and enum types reachable by value (members, bases, arrays, typedefs)
        from ``elem`` whose qualified names start with one of ``prefix``."""
        out: dict[str, ET.Element] = {}
        stack = [self.definition(elem)]
        while stack:
            e = stack.pop()
            tids = [b.get("type-id") for b in e.findall("base-class")]
            tids += [
                var.get("type-id")
                for dm in e.findall("data-member")
                if (var := dm.find("var-decl")) is not None and dm.get("static") != "yes"
            ]
            for mt in e.findall("member-type"):
                stack += [self.definition(ch) for ch in mt if ch.tag in ("class-decl", "union-decl")]
            for tid in tids:
                t = self.strip(tid)
                while t is not None and t.tag == "array-type-def":
                    t = self.strip(t.get("element-type-id"))
                if t is None or t.tag not in ("class-decl", "union-decl", "enum-decl"):
                    continue
                q = self.qualname.get(id(t), "")
                if q and q.startswith(prefix) and q not in out:
                    out[q] = t
                    if t.tag != "enum-decl":
                        stack.append(t)
        return out


def _is_decl_only(e: ET.Element) -> bool:
    return e.get("is-declaration-only") == "yes"


def _has_vptr(x: AbiXml, e: ET.Element) -> bool:
    if any(mf.get("vtable-offset") is not None for mf in e.findall("member-function")):
        return True
    return any(
        _has_vptr(x, base) for b in e.findall("base-class") if (base := x.strip(b.get("type-id"))) is not None
    )
