"""DML_RESAMPLE3_OPERATOR_DESC (DML_FEATURE_LEVEL_6_4): RESAMPLE2 with Antialiased.

- Remarks: "When Antialiased is false, this operator is equivalent to
  DML_RESAMPLE2_OPERATOR_DESC": RESAMPLE2's reference, rounding and bounds.
- Antialiased TRUE: "stretching the resampling filter by a factor max(1, 1 / scale) ... when this
  flag is set to TRUE, and assuming the following conditions: InterpolationMode is
  DML_INTERPOLATION_MODE_LINEAR; 1/Scales > 2". NEAREST_NEIGHBOR is unaffected, and so is a LINEAR
  call whose every 1/Scale is at most 2. Otherwise the filter of antialias.py (its docstring gives
  the reading and its sources, docs/spec-notes.md §10 the ambiguities).
- Validation: RESAMPLE2's rules; Antialiased is a BOOL (any value of it is valid); one "Tensor
  support" table, 1 to 4 dimensions of FLOAT32, FLOAT16, INT8, UINT8.

silent_regions() names where the page leaves the output open; cases there are marked ambiguous.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.ops.base import Attribute, OperatorCall, float32
from conformance.ops.resample import coordinates, legal_coordinate_error
from conformance.ops.resample2 import Resample2, tables
from conformance.ops.resample3.antialias import (
    SILENCE_REL,
    THRESHOLD,
    Axis,
    antialiased,
    normalisation_gap,
    reaches_outside,
    stretch,
)
from conformance.ops.resample3.examples import Resample3Examples
from conformance.ops.resample3.pages import PAGE


class Resample3(Resample3Examples, Resample2):
    name = "RESAMPLE3"
    type_value = 175  # DML_OPERATOR_RESAMPLE3 (DirectML.h, target 0x6400; notes §1)
    introduced = FeatureLevel.FL_6_4  # Availability: "introduced in DML_FEATURE_LEVEL_6_4"
    page = PAGE
    attributes = (*Resample2.attributes, Attribute("Antialiased", "bool"))
    support = tables(PAGE, (("6_4", "FLOAT32, FLOAT16, INT8, UINT8"),))

    def antialias_axes(self, call: OperatorCall) -> list[Axis] | None:
        """Per dimension the antialiased filter's parameters, or None where the call is
        RESAMPLE2's (Antialiased FALSE, NEAREST_NEIGHBOR, or no 1/Scale above 2)."""
        a = call.attributes
        if not a["Antialiased"] or a["InterpolationMode"] != "LINEAR":
            return None
        scales = float32(a["Scales"])
        stretches = self.stretches(call)
        if all(f == 1.0 for f in stretches):
            return None
        in_off, out_off = self.offsets(call)
        # The filter is centred on the coordinate before coordinates()' clamp; its taps are
        # clamped (antialias.py).
        return [Axis(c=c, err=coordinates(o, i, s, p, q)[1],
                     reach=legal_coordinate_error(o, s, p, q), f=f, size=i)
                for c, o, i, s, p, q, f in zip(self.unclamped(call),
                                               call.tensors["OutputTensor"].sizes,
                                               call.tensors["InputTensor"].sizes, scales, in_off,
                                               out_off, stretches, strict=True)]

    def stretches(self, call: OperatorCall) -> list[float]:
        """Per dimension the factor the filter is stretched by: 1 / Scale where 1 / Scale > 2,
        else 1 (antialias.stretch)."""
        return [stretch(s) for s in float32(call.attributes["Scales"])]

    def silent_regions(self, call: OperatorCall) -> list[str]:
        """Why the page leaves some output of this call open (docs/spec-notes.md §10), one
        reason each; empty where the page decides every output. A case whose call has any is
        marked ambiguous (docs/case-format.md)."""
        a = call.attributes
        if not a["Antialiased"] or a["InterpolationMode"] != "LINEAR":
            return []
        reasons = []
        inverse = [1.0 / s for s in float32(a["Scales"])]
        if any(abs(v - THRESHOLD) <= THRESHOLD * SILENCE_REL for v in inverse):
            reasons.append("a 1/Scale within float32 rounding of 2: whether '1/Scales > 2' holds "
                           "depends on how the reciprocal rounds")
        axes = self.antialias_axes(call) or []
        stretched = any(axis.stretched for axis in axes)
        if stretched and any(1.0 < v < THRESHOLD for v in inverse):
            reasons.append("a dimension with 1 < 1/Scale <= 2 beside a stretched one: the page's "
                           "'1/Scales > 2' read per dimension (the suite) leaves it linear, read "
                           "for the whole operator it is stretched by max(1, 1/scale) too")
        if any(axis.stretched and reaches_outside(axis) for axis in axes):
            reasons.append("the stretched filter reaches beyond the input's edge: the page does "
                           "not say what it reads there (the suite repeats the edge element)")
        if any(axis.stretched and np.any(normalisation_gap(axis) > SILENCE_REL) for axis in axes):
            reasons.append("a stretch 1/Scale whose weights do not sum to it: the page does not "
                           "say how the stretched weights are normalised (the suite divides by "
                           "their sum)")
        return reasons

    def expected(self, call: OperatorCall, inputs: Mapping[str, np.ndarray],
                 strict: bool = False, flags: ExecutionFlags = ExecutionFlags.NONE
                 ) -> dict[str, Expected]:
        axes = self.antialias_axes(call)
        if axes is None:
            return super().expected(call, inputs, strict, flags)
        x = inputs["InputTensor"]
        half = (x.dtype == np.float16
                and bool(flags & ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION))
        return {"OutputTensor": antialiased(x, axes, half)}
