"""The layers of docs/architecture.md hold: every import of every harness module (function-level
imports included) points to its own layer or below, the backends import layers 0-2 of the
harness only, and nothing in the harness imports a backend."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support import ROOT

HARNESS = ROOT / "conformance"

#: docs/architecture.md's layers, by dotted module prefix (the longest prefix decides).
LAYERS: dict[str, int] = {
    "conformance": 0,  # the package itself: __version__
    "conformance.tensors": 0, "conformance.levels": 0, "conformance.spec": 0,
    "conformance.flags": 0, "conformance.inputs": 0, "conformance.expected": 0,
    "conformance.ops": 1,
    "conformance.backend": 2, "conformance.casefile": 2, "conformance.suite": 2,
    "conformance.judge": 3,
    "conformance.results": 4,
    "conformance.session": 5,
    "conformance.cli": 6, "conformance.pytest_plugin": 6, "conformance.explore": 6,
    "conformance.report": 6, "conformance.generate": 6, "conformance.export": 6,
    "conformance.certify": 6,
}
#: An operator package's plug-ins sit in the layer they plug into (found by ops.discover).
PLUGINS: dict[str, int] = {"misreadings": 3, "cases": 6}
#: The highest harness layer a backend may import.
BACKENDS_MAY_IMPORT = 2


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[:2] == ["conformance", "ops"] and len(parts) > 3 and parts[3] in PLUGINS:
        return PLUGINS[parts[3]]
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return LAYERS[prefix]
    return None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file; `from a import b` gives a.b when b is a
    module of the harness (else a)."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                candidate = f"{node.module}.{a.name}"
                as_path = ROOT.joinpath(*candidate.split("."))
                is_module = as_path.with_suffix(".py").is_file() or as_path.is_dir()
                out.append((node.lineno, candidate if is_module else node.module))
    return out


def harness_files() -> list[Path]:
    return sorted(HARNESS.rglob("*.py"))


def test_every_harness_module_has_a_layer() -> None:
    missing = [module_name(p) for p in harness_files() if layer_of(module_name(p)) is None]
    assert not missing, f"modules in no layer of docs/architecture.md: {missing}"


def test_no_import_points_up() -> None:
    upward = []
    for path in harness_files():
        own = layer_of(module_name(path))
        assert own is not None
        for line, target in imports(path):
            if target.split(".")[0] == "backends":
                upward.append(f"{path.relative_to(ROOT)}:{line}: imports {target} (a backend)")
                continue
            theirs = layer_of(target) if target.startswith("conformance") else None
            if theirs is not None and theirs > own:
                upward.append(f"{path.relative_to(ROOT)}:{line}: layer {own} imports {target} "
                              f"(layer {theirs})")
    assert not upward, "imports against docs/architecture.md's layers:\n  " + "\n  ".join(upward)


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
    ("conformance.results.io", "conformance.session.runner", False),
    ("conformance.session.run", "conformance.results", True),
    ("conformance.ops.resample.misreadings", "conformance.judge.misreadings", True),
    ("conformance.ops.resample.spec", "conformance.judge.misreadings", False),
])
def test_the_layer_rule_itself(source: str, target: str, allowed: bool) -> None:
    """The check can fail: an upward import is caught, a downward one and a plug-in's import
    of its framework are not."""
    own, theirs = layer_of(source), layer_of(target)
    assert own is not None and theirs is not None
    assert (theirs <= own) is allowed
