"""Operator specs, one module per operator family. Each module lists its specs in OPERATORS;
this package finds them, so adding an operator is adding a module."""

from __future__ import annotations

import importlib
import pkgutil

from conformance.ops.base import OperatorCall, OperatorSpec

__all__ = ["OPERATORS", "OperatorCall", "OperatorSpec", "get"]


def _discover() -> dict[str, OperatorSpec]:
    found: dict[str, OperatorSpec] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for spec in getattr(module, "OPERATORS", ()):
            if spec.name in found:
                raise RuntimeError(f"operator {spec.name} defined twice")
            found[spec.name] = spec
    return found


OPERATORS: dict[str, OperatorSpec] = _discover()


def get(name: str) -> OperatorSpec:
    """The spec of an operator by its DML_OPERATOR_TYPE name (the DML_OPERATOR_ prefix is
    optional)."""
    key = name.upper().removeprefix("DML_OPERATOR_")
    try:
        return OPERATORS[key]
    except KeyError:
        raise KeyError(f"unknown operator {name!r}; known: {', '.join(OPERATORS)}") from None
