"""The JSON Schema of report.json (conformance/schemas/report.schema.json) and what it finds wrong.

``structure_problems(report, schema_version)`` validates a report object against the schema with the
``jsonschema`` package and gives one line per problem, each naming the JSON path of the field:
"field 'results[2].outcome' is an integer, not a string", "field 'summary.total' is missing".
The schema covers every schema version: a field required from version N is required when
``schema_version`` is N or more. ``verify`` and ``Report.from_dict`` run it before anything reads the
report's content.
"""

from __future__ import annotations

import functools
import json
import math
from importlib import resources
from typing import Any

#: The schema file, in the installed package (the docs link to it: docs/report-schema.md).
SCHEMA_FILE = "report.schema.json"

_TYPE_NAMES = {
    "object": "an object",
    "array": "a list",
    "string": "a string",
    "boolean": "a boolean",
    "integer": "an integer",
    "number": "a number",
    "null": "null",
}


def kind_of(value: Any) -> str:
    """'an object', 'a list', 'a string', ... for a JSON value."""
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def load_schema() -> dict[str, Any]:
    """The schema as a JSON object."""
    return json.loads(resources.files("conformance.schemas").joinpath(SCHEMA_FILE).read_text("utf-8"))


def _bounds_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema's top-level size bounds (``maxItems``) alone: checked first, so that a report flooded
    with items is refused at once instead of having each of them validated (jsonschema's cost grows with
    every item)."""
    bounded = {k: {"maxItems": v["maxItems"]} for k, v in schema["properties"].items() if "maxItems" in v}
    return {"$schema": schema["$schema"], "properties": bounded}


@functools.cache
def _validators():
    """(the bounds validator, the full validator)."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    base.check_schema(load_schema())
    # A report's numbers are finite (JSON has no NaN; Python's json module reads one) and an integer is
    # never a bool or a float like 1.0: stricter than JSON Schema's own types.
    checker = base.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda _, v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda _, v: (
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            ),
        }
    )
    strict = jsonschema.validators.extend(base, type_checker=checker)
    return strict(_bounds_schema(load_schema())), strict(load_schema())


def _path(parts) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _field(parts, key: str | None = None) -> str:
    path = _path([*parts, key] if key is not None else parts)
    return f"field {path!r}"


def _message(error) -> list[str]:
    where, schema = list(error.absolute_path), error.schema
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return [f"{_field(where, key)} is missing" for key in missing]
    if error.validator == "type":
        kinds = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        value = error.instance
        if isinstance(value, float) and not math.isfinite(value):
            return [f"{_field(where)} is {value}, not a finite number"]
        return [f"{_field(where)} is {kind_of(value)}, not {' or '.join(_TYPE_NAMES[k] for k in kinds)}"]
    if error.validator == "maxItems":
        bound = error.validator_value
        return [f"{_field(where)} holds {len(error.instance)} items, more than the {bound} a report can hold"]
    if error.validator == "minimum" and error.validator_value == 0:
        return [f"{_field(where)} is negative"]
    if "propertyNames" in error.schema_path:  # a key that is not one of the object's known keys
        return [f"{_field(where, str(error.instance))} is not {schema.get('title', 'a known key')}"]
    if error.validator == "anyOf":  # a SHA-256 or null: name what the string should be
        titles = [s["title"] for s in error.validator_value if "title" in s]
        if titles:
            return [f"{_field(where)} is not {' or '.join(titles)}"]
    return [f"{_field(where)}: {error.message}"]


def structure_problems(report: Any, schema_version: int | None = None) -> list[str]:
    """One line per place where ``report`` does not have the schema's structure ([] when it has it).
    ``schema_version`` (default: the report's own) decides which fields are required: verify passes the
    version the report's suite writes, so that a report cannot drop a field by claiming an older one
    (the claim itself is refused later, as a schema_version mismatch)."""
    if not isinstance(report, dict):
        return [f"holds a JSON {kind_of(report).split()[-1]}, not a report object"]
    document = report
    named = report.get("schema_version")
    if schema_version is not None and isinstance(named, int) and not isinstance(named, bool):
        document = {**report, "schema_version": schema_version}
    problems: list[str] = []
    bounds, full = _validators()
    errors = list(bounds.iter_errors(document)) or full.iter_errors(document)
    for error in errors:  # in the order of the schema's properties
        for line in _message(error):
            if line not in problems:
                problems.append(line)
    return problems
