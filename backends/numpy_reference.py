"""The NumPy reference backend: the operator specs' reference implementations on raw buffers.

It validates every desc at its claimed feature level (every rule the operator spec lists),
reads each input through its strides (padding, stride-0 broadcasting, NHWC and any other
dimension order), runs the reference, and writes only the outputs' logical elements.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from conformance import ops
from conformance.backend import Backend, Capabilities
from conformance.ops import OperatorCall
from conformance.tensors import read_tensor, write_tensor


class NumpyReferenceBackend(Backend):
    name = "numpy"

    @property
    def capabilities(self) -> Capabilities:
        # Every operator the suite has a spec for, new ones included, and rightly so: execute
        # is generic, it runs the operator spec's own reference (ops.get(op).reference), so it
        # dispatches on exactly the operators the suite knows. No other backend may claim so.
        return Capabilities.full(ops.OPERATORS,
                                 "the suite's reference: float64 arithmetic, one rounding")

    @property
    def environment(self) -> dict[str, str]:
        """The NumPy the reference computes with (Backend.environment's `version`)."""
        return {"version": f"numpy {np.__version__}"}

    def create_operator(self, call: OperatorCall) -> None:
        self.validate(call)

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        self.create_operator(call)
        spec = ops.get(call.operator)
        inputs = {n: read_tensor(call.tensors[n], bindings[n]) for n in spec.inputs}
        for name, values in spec.reference(call, inputs).items():
            write_tensor(call.tensors[name], bindings[name], values)
