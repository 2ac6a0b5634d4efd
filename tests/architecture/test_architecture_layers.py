"""The layers of docs/architecture.md hold: every import of every harness module (function-level
imports included) points to its own layer or below, with no exception for plug-ins; no import
circle exists; the backends import layers 0-2 of the harness only, and nothing in the harness
imports a backend. The analysis is tests/support/imports.py (`python -m tests.support.imports`
prints it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.imports import (
    circles,
    graph,
    harness_files,
    imports,
    layer_of,
    module_name,
    upward,
)

#: The highest harness layer a backend may import.
BACKENDS_MAY_IMPORT = 2


def test_every_harness_module_has_a_layer() -> None:
    missing = [module_name(p) for p in harness_files() if layer_of(module_name(p)) is None]
    assert not missing, f"modules in no layer of docs/architecture.md: {missing}"


def test_no_import_points_up() -> None:
    found = upward()
    assert not found, "imports against docs/architecture.md's layers:\n  " + "\n  ".join(found)


def test_no_import_circle() -> None:
    found = circles(graph())
    assert not found, "import circles:\n  " + "\n  ".join(" <-> ".join(c) for c in found)


def test_the_circle_finder_finds_circles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}, "f": {"g"},
             "g": {"f"}}
    assert circles(edges) == [["a", "b", "c"], ["f", "g"]]
    assert circles({"x": {"y"}, "y": set()}) == []


def test_backends_import_only_the_harness_interfaces() -> None:
    found = []
    for path in sorted((ROOT / "backends").rglob("*.py")):
        for line, target in imports(path):
            theirs = layer_of(target) if target.startswith("conformance") else None
            if theirs is not None and theirs > BACKENDS_MAY_IMPORT and not _is_tool(path):
                found.append(f"{path.relative_to(ROOT)}:{line}: imports {target} "
                             f"(layer {theirs}; backends import layers 0-{BACKENDS_MAY_IMPORT})")
    assert not found, "\n".join(found)


def _is_tool(path: Path) -> bool:
    """A script shipped beside a backend that works on results files (the DirectML baseline
    maker reads results documents; the GPU record reads them with the baseline they name), not
    part of the backend a run loads."""
    relative = path.relative_to(ROOT / "backends").as_posix()
    return relative in ("directml/baseline.py", "directml/gpu/record.py")


@pytest.mark.parametrize("source, target, allowed", [
    ("conformance.ops.base", "conformance.judge.compare", False),
    ("conformance.results.io", "conformance.session.case_run", False),
    ("conformance.session.run", "conformance.results", True),
    ("conformance.ops.resample.misreadings", "conformance.kit.misreading", True),
    ("conformance.ops.resample.misreadings", "conformance.judge.misreadings", False),
    ("conformance.ops.depth_space.cases.blocks", "conformance.generate.family", False),
])
def test_the_layer_rule_itself(source: str, target: str, allowed: bool) -> None:
    """The check can fail: an upward import is caught (a plug-in's too), a downward one and a
    plug-in's import of the kit are not."""
    own, theirs = layer_of(source), layer_of(target)
    assert own is not None and theirs is not None
    assert (theirs <= own) is allowed


def test_no_module_is_over_500_lines() -> None:
    """Small modules named in the spec's words (issue 23): none of the harness or of the
    backends runs over 500 lines."""
    modules = [*harness_files(), *(ROOT / "backends").rglob("*.py")]
    long = [f"{p.relative_to(ROOT)}: {n}" for p in modules
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500]
    assert not long, long
