"""The misreading type of the catalogue (conformance.judge.misreadings gathers the entries): one
plausible wrong reading of an operator, run like a backend on a call's buffers. The same type
holds an admissible reading of an open region of the spec (an operator package's ADMISSIBLE,
conformance.judge.misreadings.admissible()): run like a backend too, it must PASS."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from conformance.ops.base import OperatorCall
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
    """

    key: str
    reading: str
    operators: frozenset[str]
    contradicts: Citation
    run: Run
    data_types: frozenset[DataType] | None = None
    applies: Callable[[OperatorCall], bool] = _always

    def covers(self, call: OperatorCall) -> bool:
        """Whether this reading is one of call's operator and data type and can differ there."""
        if call.operator not in self.operators:
            return False
        if self.data_types is not None and not any(
                d.data_type in self.data_types for d in call.tensors.values()):
            return False
        return self.applies(call)
