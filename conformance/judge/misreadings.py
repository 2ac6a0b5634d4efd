"""The catalogue of misreadings: plausible wrong readings of each operator, written down once and
used twice (issue 11).

- Diagnosis (conformance.judge.diagnose): when a case FAILs, the harness runs each misreading that
  applies to the call on the same input bytes and says which one the output equals ("the output
  equals Strides taken as byte distances instead of element counts").
- Self-check (tests/judge/test_judge_misreadings.py): every misreading, run as a backend that
  claims one single-type slice, must FAIL that slice's cases, with itself named in the diagnosis.

A misreading executes like a backend: `run(call, bindings)` reads the input buffers and writes
the output buffers in place (raw bytes, through the strides it believes in), so misreadings of
the layout (strides taken as bytes, stride 0 unsupported...) are expressed like misreadings of
the arithmetic. The catalogue gathers the MISREADINGS of conformance.judge.layouts (the buffer
tensor readings, every operator) and of each operator package's misreadings module.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from conformance import ops
from conformance.judge import layouts
from conformance.kit.misreading import Misreading
from conformance.ops import OperatorCall


@cache
def catalogue() -> dict[str, Misreading]:
    """Every entry by key, in the order of their sources' names (the buffer tensor readings
    under "layouts", each operator package under its own name); gathered when first asked."""
    sources = [("layouts", layouts.MISREADINGS), *ops.discover("MISREADINGS", "misreadings")]
    found: dict[str, Misreading] = {}
    for _, entries in sorted(sources, key=lambda source: source[0]):
        for entry in entries:
            if entry.key in found:
                raise RuntimeError(f"misreading {entry.key} defined twice")
            found[entry.key] = entry
    return found


def __getattr__(name: str) -> Any:
    """CATALOGUE: catalogue(), built when first asked (not when this module is imported)."""
    if name == "CATALOGUE":
        return catalogue()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def admissible() -> dict[str, Misreading]:
    """The admissible readings of the spec's open regions besides the suite's own (each operator
    package's admissible module's ADMISSIBLE), by key: not misreadings, never diagnosed; the
    self-check asserts that each PASSes every case it covers (tests/judge/
    test_judge_readings.py)."""
    found: dict[str, Misreading] = {}
    for _, entries in sorted(ops.discover("ADMISSIBLE", "admissible"), key=lambda s: s[0]):
        for entry in entries:
            if entry.key in found or entry.key in catalogue():
                raise RuntimeError(f"reading {entry.key} defined twice")
            found[entry.key] = entry
    return found


def for_call(call: OperatorCall) -> list[Misreading]:
    """The misreadings that can differ from the spec for this call, in catalogue order."""
    return [m for m in catalogue().values() if m.covers(call)]
