"""Operator specs, one package per operator family (docs/operators.md). Each package lists its
specs in OPERATORS; this package finds them, so adding an operator is adding a package.

discover() is the one way the harness finds what the operator packages bring: their specs and
pages here, their case families and large/bit-level calls (conformance.generate), their
misreadings (conformance.judge.misreadings). The packages are imported when first asked for
(OPERATORS, PACKAGES, get(), pages()), not when this package is imported; they build their
plug-ins with conformance.kit and import nothing above the operator layer.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import pkgutil
from collections.abc import Iterable
from functools import cache
from typing import Any

from conformance.ops.base import OperatorCall, OperatorSpec
from conformance.spec import PAGES as SHARED_PAGES

__all__ = ["OPERATORS", "PACKAGES", "OperatorCall", "OperatorSpec", "did_you_mean", "discover",
           "get", "pages"]


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


@cache
def _operators() -> tuple[dict[str, OperatorSpec], dict[str, str]]:
    """Operator name -> its spec; operator name -> the name of the package that defines it. The
    packages are found and imported when this is first asked, not when conformance.ops is."""
    specs: dict[str, OperatorSpec] = {}
    packages: dict[str, str] = {}
    for package, listed in discover("OPERATORS"):
        for spec in listed:
            if spec.name in specs:
                raise RuntimeError(f"operator {spec.name} defined twice")
            specs[spec.name] = spec
            packages[spec.name] = package
    return specs, packages


@cache
def pages() -> dict[str, str]:
    """Every spec page a case may cite, key -> address: the shared ones (conformance.spec.PAGES)
    and each operator package's PAGES, found when first asked."""
    found = dict(SHARED_PAGES)
    for package, listed in discover("PAGES"):
        for key, url in listed.items():
            if found.setdefault(key, url) != url:
                raise RuntimeError(f"spec page {key} has two addresses ({package}: {url})")
    return found


def __getattr__(name: str) -> Any:
    """OPERATORS (operator name -> spec) and PACKAGES (operator name -> package name), built
    when first asked."""
    if name == "OPERATORS":
        return _operators()[0]
    if name == "PACKAGES":
        return _operators()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get(name: str) -> OperatorSpec:
    """The spec of an operator by its DML_OPERATOR_TYPE name (the DML_OPERATOR_ prefix is
    optional)."""
    key = name.upper().removeprefix("DML_OPERATOR_")
    specs = _operators()[0]
    try:
        return specs[key]
    except KeyError:
        raise KeyError(f"unknown operator {name!r}: {did_you_mean(key, specs)}the operators "
                       f"are {', '.join(specs)}") from None


def did_you_mean(given: str, names: Iterable[str]) -> str:
    """"did you mean 'NAME'? " for the known name closest to a misspelt one, or "" where none is
    close: the hint of an unknown name's error (an operator here, a backend's registered name)."""
    close = difflib.get_close_matches(given, list(names), n=1)
    return f"did you mean {close[0]!r}? " if close else ""
