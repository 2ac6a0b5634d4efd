"""The import graph of the harness against docs/architecture.md's layers: every import of every
module (function-level imports included), the ones that point up a layer, and the circles.

    python -m tests.support.imports        # prints both lists; exit 1 when either is not empty

tests/architecture/test_architecture_layers.py asserts the same on every test run.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "conformance"

#: docs/architecture.md's layers, by dotted module prefix (the longest prefix decides).
LAYERS: dict[str, int] = {
    "conformance": 0,  # the package itself: __version__
    "conformance.tensors": 0, "conformance.levels": 0, "conformance.spec": 0,
    "conformance.flags": 0, "conformance.inputs": 0, "conformance.expected": 0,
    "conformance.ops": 1, "conformance.kit": 1,
    "conformance.backend": 2, "conformance.casefile": 2, "conformance.suite": 2,
    "conformance.judge": 3,
    "conformance.results": 4,
    "conformance.session": 5,
    "conformance.present": 6,
    "conformance.cli": 7, "conformance.pytest_plugin": 7, "conformance.explore": 7,
    "conformance.report": 7, "conformance.generate": 7, "conformance.export": 7,
    "conformance.certify": 7,
}


def layer_of(module: str) -> int | None:
    """The layer of a harness module, by its longest prefix in LAYERS; None for one in no
    layer (a new module of the package itself must be given one)."""
    parts = module.split(".")
    for n in range(len(parts), 1, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return LAYERS[prefix]
    return LAYERS.get(module)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file; `from a import b` gives a.b when b is a
    module of the repository (else a)."""
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


def upward() -> list[str]:
    """Each import of a harness module that points to a higher layer, or to a backend."""
    found = []
    for path in harness_files():
        own = layer_of(module_name(path))
        for line, target in imports(path):
            where = f"{path.relative_to(ROOT)}:{line}: "
            if target.split(".")[0] == "backends":
                found.append(where + f"imports {target} (a backend)")
                continue
            theirs = layer_of(target) if target.startswith("conformance") else None
            if own is not None and theirs is not None and theirs > own:
                found.append(where + f"layer {own} imports {target} (layer {theirs})")
    return found


def graph() -> dict[str, set[str]]:
    """Harness module -> the harness modules it imports (by name, as written)."""
    modules = {module_name(p): p for p in harness_files()}
    return {name: {t for _, t in imports(path) if t in modules and t != name}
            for name, path in modules.items()}


def circles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import circles: each strongly connected set of two or more modules (Tarjan's
    algorithm, iterative), its members sorted, the sets in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))
    return sorted(found)


def main() -> int:
    up, rings = upward(), circles(graph())
    print(f"{len(up)} upward import(s)")
    for line in up:
        print(f"  {line}")
    print(f"{len(rings)} import circle(s)")
    for ring in rings:
        print(f"  {' <-> '.join(ring)}")
    return 1 if up or rings else 0


if __name__ == "__main__":
    sys.exit(main())
