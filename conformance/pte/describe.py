"""Human-readable summary of a ``PteProgram`` (for an ``inspect`` command)."""

from __future__ import annotations

from .model import DataLocation, Delegate, PteProgram

_PREVIEW_BYTES = 32


def _name(text: str, missing: str) -> str:
    """A name from the file, quoted if it could garble the output."""
    if not text:
        return missing
    return text if text.isprintable() else repr(text)


def format_bytes(value: bytes) -> str:
    """Render a compile-spec value or blob preview on one line.

    Printable ASCII shows as a quoted string, anything else as hex (the first
    32 bytes); 1-, 2-, 4- and 8-byte values also show as little-endian ints.
    """
    size = f"{len(value)} byte{'' if len(value) == 1 else 's'}"
    if value and all(32 <= b < 127 for b in value):
        return f"{bytes(value).decode('ascii')!r} ({size})"
    shown = value[:_PREVIEW_BYTES].hex(" ")
    more = " ..." if len(value) > _PREVIEW_BYTES else ""
    text = f"{shown}{more} ({size})" if value else f"empty ({size})"
    if len(value) in (1, 2, 4, 8):
        text += f" = {int.from_bytes(value, 'little')} as u{len(value) * 8} LE"
    return text


def _delegate_lines(i: int, d: Delegate) -> list[str]:
    where = "inline data" if d.location is DataLocation.INLINE else "segment"
    lines = [
        f"    delegate {i}: {_name(d.backend_id, '(no id)')}",
        (
            f"      blob: {len(d.data)} bytes in {where} {d.index} at file offset {d.data_offset}"
            f", starts {format_bytes(d.data[:16]) if d.data else 'empty'}"
        ),
    ]
    if not d.compile_specs:
        lines.append("      compile specs: none")
    else:
        lines.append(f"      compile specs: {len(d.compile_specs)}")
        lines.extend(
            f"        {_name(key, '(no key)')} = {format_bytes(value)}" for key, value in d.compile_specs
        )
    return lines


def describe(program: PteProgram) -> str:
    """A multi-line summary: header, plans, delegates, segments, named data."""
    p = program
    lines = [
        (
            f"{p.file_identifier} program, schema version {p.schema_version}, {p.file_size} bytes"
            f" ({p.program_size} bytes of flatbuffer data)"
        )
    ]
    eh = p.extended_header
    if eh is None:
        lines.append("extended header: none (all data inline)")
    else:
        data_size = "absent" if eh.segment_data_size is None else eh.segment_data_size
        lines.append(
            f"extended header at offset {eh.offset}: {eh.magic.decode('ascii', 'replace')}, "
            f"{eh.length} bytes, program_size {eh.program_size}, segment_base_offset "
            f"{eh.segment_base_offset}, segment_data_size {data_size}"
        )

    lines.append(f"execution plans: {len(p.execution_plans)}")
    for plan in p.execution_plans:
        lines.append(
            f"  {_name(plan.name, '(no name)')}: {plan.num_inputs} inputs, {plan.num_outputs} outputs, "
            f"{len(plan.delegates)} delegates, {len(plan.operators)} operators"
        )
        if plan.operators:
            lines.append(f"    operators: {', '.join(_name(op, '(no name)') for op in plan.operators)}")
        for i, d in enumerate(plan.delegates):
            lines.extend(_delegate_lines(i, d))

    lines.append(f"inline delegate data: {len(p.backend_delegate_data)}")
    lines.extend(f"  {i}: {len(blob)} bytes" for i, blob in enumerate(p.backend_delegate_data))

    lines.append(f"segments: {len(p.segments)}")
    for s in p.segments:
        where = "not locatable" if s.file_offset is None else f"file offset {s.file_offset}"
        lines.append(f"  {s.index}: offset {s.offset}, size {s.size} ({where})")

    if p.constant_segment is not None:
        c = p.constant_segment
        lines.append(f"constant segment: segment {c.segment_index}, {len(c.offsets)} offsets")
    for i, m in enumerate(p.mutable_data_segments):
        lines.append(f"mutable data {i}: segment {m.segment_index}, {len(m.offsets)} offsets")

    lines.append(f"named data: {len(p.named_data)}")
    sizes = {s.index: s.size for s in p.segments}
    lines.extend(
        f"  {n.key!r} -> segment {n.segment_index} ({sizes.get(n.segment_index, '?')} bytes)"
        for n in p.named_data
    )
    return "\n".join(lines)
