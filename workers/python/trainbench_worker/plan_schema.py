"""A plan checked against ``plan.schema.json`` before anything starts.

The schema is made from the core crate's ``WorkerPlan`` (the one definition
of what a worker is sent; a test there fails when this file's copy differs),
so a plan the studio wrote always passes, and one from another version of
the studio, or written by hand, is refused naming the field, the value and
what is allowed. The checker covers the keywords that schema uses:
``$ref``, ``type``, ``properties``, ``required``, ``additionalProperties``,
``items``, ``enum``, ``const``, ``oneOf``, ``anyOf``, ``minimum`` and
``pattern``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, TypedDict

from .protocol import bad_config

_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plan.schema.json")
# A JSON schema, or one of its sub-schemas: JSON, whose shape is open.
Schema = dict[str, Any]
# Where a plan breaks its schema: (path of keys, the value, what is expected).
Problem = tuple[tuple[str, ...], object, str]

# The plan's JSON objects whose shape the schema (plan.schema.json) gives and
# the core crate owns: the run spec, the model's config (one shape per family)
# and the run's length (``{"steps": N}``, ``{"epochs": N}`` or, for a
# training script, ``"script_decides"``).
Spec = dict[str, Any]
ModelConfig = dict[str, Any]
Length = dict[str, int] | str


class BreakdownRule(TypedDict):
    """``BreakdownRule`` in crates/core."""

    divisor: int
    min_steps: int
    max_steps: int


class ProfileRule(TypedDict):
    """``ProfileRule`` in crates/core."""

    steps: int


_SCHEMA: list[Schema] = []
_TYPES: dict[str, Callable[[object], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def schema() -> Schema:
    if not _SCHEMA:
        with open(_PATH, encoding="utf-8") as f:
            _SCHEMA.append(json.load(f))
    return _SCHEMA[0]


def check_plan(obj: dict[str, Any]) -> None:
    """Raises ``bad_config`` naming the first field of ``obj`` the schema refuses."""
    root = schema()
    found = problems(obj, root, (), root)
    if found:
        path, value, expected = found[0]
        field = ".".join(p for p in path if p != "spec") or "plan"
        shown = "(missing)" if value is _MISSING else json.dumps(value)[:200]
        raise bad_config(f"plan: {field} = {shown} is not allowed: expected {expected}", field)


_MISSING = object()


def problems(value: Any, s: Schema, path: tuple[str, ...], root: Schema) -> list[Problem]:
    """(path, value, what is expected) of each way ``value`` breaks ``s``."""
    if "$ref" in s:
        out = problems(value, _resolve(s["$ref"], root), path, root)
        if out:
            return out
    kinds = s.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_TYPES[k](value) for k in kinds):
            return [(path, value, " or ".join(kinds))]
    if "const" in s and value != s["const"]:
        return [(path, value, json.dumps(s["const"]))]
    if "enum" in s and value not in s["enum"]:
        return [(path, value, "one of " + ", ".join(json.dumps(e) for e in s["enum"]))]
    if "minimum" in s and _TYPES["number"](value) and value < s["minimum"]:
        return [(path, value, f"a number ≥ {s['minimum']}")]
    if "pattern" in s and isinstance(value, str) and not re.search(s["pattern"], value):
        return [(path, value, f"text matching {s['pattern']}")]
    for key in ("oneOf", "anyOf"):
        if key in s:
            out = _alternatives(value, s[key], key == "oneOf", path, root)
            if out:
                return out
    if isinstance(value, dict):
        return _object(value, s, path, root)
    if isinstance(value, list) and "items" in s:
        for i, item in enumerate(value):
            out = problems(item, s["items"], path + (str(i),), root)
            if out:
                return out
    return []


def _resolve(ref: str, root: Schema) -> Schema:
    node = root
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node


def _alternatives(
    value: Any, options: list[Schema], exactly_one: bool, path: tuple[str, ...], root: Schema
) -> list[Problem]:
    results = [problems(value, o, path, root) for o in options]
    matched = sum(1 for r in results if not r)
    if matched == 1 or (matched > 1 and not exactly_one):
        return []
    if matched > 1:
        return [(path, value, "a value that fits exactly one of its forms")]
    consts = [o["const"] for o in options if "const" in o]
    if consts and not isinstance(value, (dict, list)):
        # A choice of names (a precision, a data source): all of them.
        return [(path, value, "one of " + ", ".join(json.dumps(c) for c in consts))]
    if isinstance(value, dict):
        # A tagged choice (a model config by its family): the form whose
        # tag the value carries says what is wrong; no such tag, the tag.
        for key, tags in _tags(options, root).items():
            for tag, result in zip(tags, results):
                if tag is not None and value.get(key) == tag:
                    return result
            if key in value or all(t is not None for t in tags):
                allowed = ", ".join(json.dumps(t) for t in tags if t is not None)
                return [(path + (key,), value.get(key, _MISSING), "one of " + allowed)]
    return max(results, key=lambda r: len(r[0][0]))


def _tags(options: list[Schema], root: Schema) -> dict[str, list[Any]]:
    """{property: [its const in each option, or None]} for properties that
    carry a const in some option (the tag of a tagged choice)."""
    tags: dict[str, list[Any]] = {}
    for i, o in enumerate(options):
        props = dict(o.get("properties", {}))
        if "$ref" in o:
            props.update(_resolve(o["$ref"], root).get("properties", {}))
        for key, p in props.items():
            if "const" in p:
                tags.setdefault(key, [None] * len(options))[i] = p["const"]
    return tags


def _object(value: dict[str, Any], s: Schema, path: tuple[str, ...], root: Schema) -> list[Problem]:
    props = s.get("properties", {})
    for name in s.get("required", ()):
        if name not in value:
            return [(path + (name,), _MISSING, "a value (the field is required)")]
    for name, v in value.items():
        if name in props:
            out = problems(v, props[name], path + (name,), root)
        else:
            extra = s.get("additionalProperties", True)
            if extra is False:
                return [(path + (name,), v, "only the fields " + ", ".join(sorted(props)))]
            out = problems(v, extra, path + (name,), root) if isinstance(extra, dict) else []
        if out:
            return out
    return []
