"""What the resample family's catalogues of misreadings (misreadings.py, misreadings_rounding.py,
misreadings_antialias.py) share: each entry is a whole implementation with one wrong reading,
which reads the input through its strides, computes the call through the spec's own public
pieces and writes the output through its strides (conformance.kit.misreading says what an entry
is)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

import numpy as np

from conformance import ops
from conformance.ops import OperatorCall
from conformance.tensors import read_tensor, write_tensor

NEAREST, LINEAR = "NEAREST_NEIGHBOR", "LINEAR"
#: A reading's output of a call for the input x (its logical elements).
Compute = Callable[[OperatorCall, np.ndarray], np.ndarray]


def mode(call: OperatorCall) -> str:
    return call.attributes["InterpolationMode"]


def right(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """The spec's output."""
    return ops.get(call.operator).reference(call, {"InputTensor": x})["OutputTensor"]


def with_attributes(call: OperatorCall, **changes: object) -> OperatorCall:
    return replace(call, attributes={**call.attributes, **changes})


def runs(compute: Compute) -> Callable[[OperatorCall, Mapping[str, np.ndarray]], None]:
    """A misreading's run: read the input through its strides, compute, write the output
    through its strides (only the logical elements, like the reference backend)."""

    def run(call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        x = read_tensor(call.tensors["InputTensor"], bindings["InputTensor"])
        with np.errstate(all="ignore"):  # NaN, Inf and overflow are values here, not errors
            y = compute(call, x)
        write_tensor(call.tensors["OutputTensor"], bindings["OutputTensor"], y)

    return run
