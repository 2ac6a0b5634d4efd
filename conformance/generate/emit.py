"""A small YAML writer for case dicts: deterministic byte for byte (it depends on no YAML
library's formatting choices), fast, and readable: block mappings, flow style for scalar lists
and nested lists of scalars, flow mappings for small flat dicts, plain scalars where YAML reads
them back unchanged and JSON-quoted strings elsewhere.

Only what case dicts hold is supported: dict, list, str, int, float, bool, None.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

WIDTH = 100
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_./()\- ]*")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "nan", "inf"}


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        if "." not in mantissa:  # YAML 1.1 reads a float only with a dot: 1e-46 -> 1.0e-46
            mantissa += ".0"
        return mantissa + e + exponent
    if isinstance(value, str):
        if (_PLAIN.fullmatch(value) and value.lower() not in _RESERVED
                and not value.endswith(" ") and ": " not in value):
            return value
        return json.dumps(value)
    raise TypeError(f"cannot write {type(value).__name__} {value!r}")


def _is_leaf(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def _nested_scalars(value: Any) -> bool:
    return all(_nested_scalars(v) for v in value) if isinstance(value, list) else _is_leaf(value)


def _flat_dict(value: Any) -> bool:
    return (isinstance(value, dict) and 0 < len(value) <= 6
            and all(_is_leaf(v) or (isinstance(v, list) and all(map(_is_leaf, v)))
                    for v in value.values()))


def flow(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar(k)}: {flow(v)}" for k, v in value.items()) + "}"
    return scalar(value)


def _wrap(head: str, text: str, indent: int) -> list[str]:
    """head + text, broken after commas so lines stay near WIDTH; continuation lines are
    indented deeper than the key, as YAML requires of a multi-line flow collection."""
    line = head + text
    if len(line) <= WIDTH or not text.startswith(("[", "{")):
        return [line]
    lines, current = [], head
    pad = " " * (indent + 2)
    for piece in re.split(r"(?<=,) ", text):
        if len(current) + len(piece) + 1 > WIDTH and current.strip():
            lines.append(current.rstrip())
            current = pad
        current += piece + " "
    lines.append(current.rstrip())
    return lines


def _block(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, v in value.items():
            head = f"{pad}{scalar(key)}:"
            if _is_leaf(v) or _nested_scalars(v) or _flat_dict(v) or v == {}:
                lines += _wrap(head + " ", flow(v), indent)
            else:
                lines.append(head)
                lines += _block(v, indent + 2)
        return lines
    for item in value:  # a list holding dicts or lists of dicts
        if isinstance(item, dict) and not _flat_dict(item):
            inner = _block(item, indent + 2)
            lines.append(f"{pad}- {inner[0][indent + 2:]}")
            lines += inner[1:]
        else:
            lines += _wrap(f"{pad}- ", flow(item), indent)
    return lines


def dump(doc: dict[str, Any]) -> str:
    return "\n".join(_block(doc, 0)) + "\n"
