"""The catalogue of misreadings: plausible wrong readings of each operator, written down once and
used twice (issue 11).

- Diagnosis (conformance.judge.diagnose): when a case FAILs, the harness runs each misreading that
  applies to the call on the same input bytes and says which one the output equals ("the output
  equals Strides taken as byte distances instead of element counts").
- Self-check (tests/test_judge_misreadings.py): every misreading, run as a backend that claims one
  single-type slice, must FAIL that slice's cases, with itself named in the diagnosis.

A misreading executes like a backend: `run(call, bindings)` reads the input buffers and writes
the output buffers in place (raw bytes, through the strides it believes in), so misreadings of
the layout (strides taken as bytes, stride 0 unsupported...) are expressed like misreadings of
the arithmetic. The catalogue gathers the MISREADINGS of conformance.judge.layouts (the buffer
tensor readings, every operator) and of each operator package's misreadings module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from conformance import ops
from conformance.ops import OperatorCall
from conformance.spec import Citation
from conformance.tensors import DataType

Run = Callable[[OperatorCall, Mapping[str, np.ndarray]], None]


def _always(call: OperatorCall) -> bool:
    return True


@dataclass(frozen=True)
class Misreading:
    """One wrong reading of the spec.

    key:         a short stable name ("strides-in-bytes"), used in results and tests.
    reading:     what it does, in words that complete "the output equals ..." ("Strides
                 taken as byte distances instead of element counts").
    operators:   the operators it is a reading of.
    contradicts: the spec sentence (or NOTES section) it breaks.
    run:         executes a call under this reading, like Backend.execute.
    data_types:  the data types where it can differ from the spec (None: every type the
                 operator takes); e.g. values moved through float32 differ only for types
                 float32 cannot hold exactly.
    applies:     whether it can differ for this call at all (e.g. only strided descs).
    mandatory:   False for a reading that differs from the suite's only where the spec is
                 ambiguous (judged by ambiguous cases alone, so no mandatory case can fail it);
                 such entries are diagnosed but are not self-check targets.
    """

    key: str
    reading: str
    operators: frozenset[str]
    contradicts: Citation
    run: Run
    data_types: frozenset[DataType] | None = None
    applies: Callable[[OperatorCall], bool] = _always
    mandatory: bool = True

    def covers(self, call: OperatorCall) -> bool:
        """Whether this reading is one of call's operator and data type and can differ there."""
        if call.operator not in self.operators:
            return False
        if self.data_types is not None and not any(
                d.data_type in self.data_types for d in call.tensors.values()):
            return False
        return self.applies(call)


def _catalogue() -> dict[str, Misreading]:
    """Every entry by key, in the order of their sources' names (the buffer tensor readings
    under "layouts", each operator package under its own name)."""
    from conformance.judge import layouts  # it builds on Misreading, defined above

    sources = [("layouts", layouts.MISREADINGS), *ops.discover("MISREADINGS", "misreadings")]
    found: dict[str, Misreading] = {}
    for _, entries in sorted(sources, key=lambda source: source[0]):
        for entry in entries:
            if entry.key in found:
                raise RuntimeError(f"misreading {entry.key} defined twice")
            found[entry.key] = entry
    return found


CATALOGUE: dict[str, Misreading] = _catalogue()


def for_call(call: OperatorCall) -> list[Misreading]:
    """The misreadings that can differ from the spec for this call, in catalogue order."""
    return [m for m in CATALOGUE.values() if m.covers(call)]
