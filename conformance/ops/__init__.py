"""Operator specs, one package per operator family (docs/operators.md). Each package lists its
specs in OPERATORS; this package finds them, so adding an operator is adding a package.

discover() is the one way the harness finds what the operator packages bring: their specs
here, their case families and large/bit-level calls (conformance.generate), their misreadings
(conformance.judge.misreadings).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from typing import Any

from conformance.ops.base import OperatorCall, OperatorSpec

__all__ = ["OPERATORS", "PACKAGES", "OperatorCall", "OperatorSpec", "discover", "get"]


def discover(attribute: str, module: str = "") -> list[tuple[str, Any]]:
    """(package name, value) of `attribute` in every operator package (each sub-package of
    conformance.ops, in name order) whose `module` (the package itself when "") defines it.
    A package without that module is left out; one whose module lacks the attribute too."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue  # base.py and the other shared modules are no operator packages
        name = f"{__name__}.{info.name}" + (f".{module}" if module else "")
        if module and importlib.util.find_spec(name) is None:
            continue
        value = getattr(importlib.import_module(name), attribute, None)
        if value is not None:
            found.append((info.name, value))
    return found


def _operators() -> tuple[dict[str, OperatorSpec], dict[str, str]]:
    specs: dict[str, OperatorSpec] = {}
    packages: dict[str, str] = {}
    for package, listed in discover("OPERATORS"):
        for spec in listed:
            if spec.name in specs:
                raise RuntimeError(f"operator {spec.name} defined twice")
            specs[spec.name] = spec
            packages[spec.name] = package
    return specs, packages


#: Operator name -> its spec; operator name -> the name of the package that defines it.
OPERATORS, PACKAGES = _operators()


def get(name: str) -> OperatorSpec:
    """The spec of an operator by its DML_OPERATOR_TYPE name (the DML_OPERATOR_ prefix is
    optional)."""
    key = name.upper().removeprefix("DML_OPERATOR_")
    try:
        return OPERATORS[key]
    except KeyError:
        raise KeyError(f"unknown operator {name!r}; known: {', '.join(OPERATORS)}") from None
