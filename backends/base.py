"""The backend interface: what an implementation under test declares and does.

A backend sees exactly what a GPU operator sees: the operator desc (OperatorCall) and its bound
resources, one raw byte buffer per tensor (1-D uint8 NumPy arrays, TotalTensorSizeInBytes long,
16-byte aligned as DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT requires). It reads the inputs through
their strides and writes the outputs' bytes in place. Nothing is handed over pre-gathered.

Two steps, as in DirectML: create_operator(call) is IDMLDevice::CreateOperator, where an invalid
desc is refused by raising DescRejected (E_INVALIDARG); execute(call, bindings) is the dispatch.
A backend may also refuse in execute; either way counts as a rejection, except for a desc whose
buffers cannot be bound at all (a Strides count that differs from Sizes, a tensor too large to
allocate): as in DirectML, such a desc must be refused at create_operator.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from conformance import ops
from conformance.flags import ExecutionFlags
from conformance.levels import HIGHEST, FeatureLevel
from conformance.ops import OperatorCall
from conformance.tensors import DataType


class DescRejected(Exception):  # noqa: N818 - named for what DirectML does: it rejects the desc
    """Raised by a backend that refuses an operator desc as invalid (DirectML: E_INVALIDARG)."""


@dataclass(frozen=True)
class Capabilities:
    """What a backend claims. The runner gives NOT_SUPPORTED, with the reason, to every case
    outside these claims, and judges every case inside them.

    operators:        operator name -> the data types the backend runs it with.
    feature_level:    the highest DML_FEATURE_LEVEL it claims.
    strided:          whether it takes descs with stated non-packed strides (padding,
                      broadcasting, NHWC and other dimension orders).
    arbitrary_offsets: whether RESAMPLE1 takes any pixel offsets; when False, only the
                      (InputPixelOffset, OutputPixelOffset) pairs in offset_pairs, per dimension.
    rejects_invalid:  whether it validates descs and raises DescRejected for invalid ones.
    """

    operators: Mapping[str, frozenset[DataType]]
    feature_level: FeatureLevel
    strided: bool = True
    arbitrary_offsets: bool = True
    offset_pairs: frozenset[tuple[float, float]] = frozenset({(0.5, -0.5)})
    rejects_invalid: bool = True
    notes: str = ""

    @classmethod
    def everything(cls, notes: str = "") -> Capabilities:
        """Every operator with every data type of its tables, at the highest feature level,
        strided, any offsets, validating: the claims of a complete implementation."""
        types = {name: frozenset().union(*(t.data_types for t in spec.support))
                 for name, spec in ops.OPERATORS.items()}
        return cls(operators=types, feature_level=HIGHEST, notes=notes)

    def to_json(self) -> dict[str, Any]:
        return {
            "operators": {op: sorted(t.name for t in types)
                          for op, types in sorted(self.operators.items())},
            "feature_level": str(self.feature_level),
            "strided": self.strided,
            "arbitrary_offsets": self.arbitrary_offsets,
            "offset_pairs": sorted([list(p) for p in self.offset_pairs]),
            "rejects_invalid": self.rejects_invalid,
            "notes": self.notes,
        }


class Backend(ABC):
    """Base class of every implementation under test. Subclasses set `name`, implement
    `capabilities` and `execute`, and usually `create_operator`.

    feature_level: the level this instance claims (at most capabilities' highest); backends
    that validate descs validate at this level. The runner passes it from `--level`.
    execution_flags: the DML_EXECUTION_FLAGS the run compiles every operator with
    (`--execution-flags`; conformance.flags). A backend on DirectML passes them to
    CompileOperator; any backend may read them (ALLOW_HALF_PRECISION_COMPUTATION permits float16
    arithmetic in half precision, and the judge then accepts it).
    """

    name: str = "backend"
    #: Whether the backend runs native code (a JIT, a GPU runtime, a C++ library) that can
    #: crash, hang or exhaust memory: `dmlconf run` then isolates it in worker processes by
    #: default (conformance.session.workers).
    native: bool = False

    def __init__(self, feature_level: FeatureLevel | None = None,
                 execution_flags: ExecutionFlags = ExecutionFlags.NONE) -> None:
        highest = self.capabilities.feature_level
        if feature_level is not None and feature_level > highest:
            raise ValueError(f"{self.name} claims feature level {highest} at most, "
                             f"not {feature_level}")
        self.feature_level = feature_level
        self.execution_flags = ExecutionFlags(execution_flags)

    @property
    @abstractmethod
    def capabilities(self) -> Capabilities:
        """The claims of this backend."""

    @property
    def claimed_level(self) -> FeatureLevel:
        return self.feature_level or self.capabilities.feature_level

    def create_operator(self, call: OperatorCall) -> None:  # noqa: B027 - optional hook
        """Validate the desc; raise DescRejected if it is invalid. Default: accept all."""

    def validate(self, call: OperatorCall) -> None:
        """Raise DescRejected with every rule the call breaks at the claimed level (the
        operator spec's rules): a complete create_operator for backends that validate."""
        violations = ops.get(call.operator).validate(call, self.claimed_level)
        if violations:
            raise DescRejected("; ".join(str(v) for v in violations))

    @abstractmethod
    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        """Run one operator call. bindings: tensor member name -> 1-D uint8 buffer of
        TotalTensorSizeInBytes bytes. Write the outputs in place; leave the inputs alone."""

    def unsupported_reason(self, call: OperatorCall) -> str | None:
        """A finer capability limit than Capabilities can say: a reason, or None to run."""
        return None
