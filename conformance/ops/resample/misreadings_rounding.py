"""Misreadings of RESAMPLE2's RoundingDirection (RESAMPLE3 has it too), in the Misreading API of
conformance.kit.misreading (key, reading, operators, contradicts, run, applies, mandatory).

The page: "RoundingDirection: The direction to round along each axis when mapping fractional
coordinates back to input pixels ... this affects only DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR.
DML_AXIS_DIRECTION_INCREASING. Round fractional coordinates toward increasing axis values (ceil).
DML_AXIS_DIRECTION_DECREASING. Round fractional coordinates toward decreasing axis values
(floor)." Each entry computes the call through the operators' own references with one attribute
read wrongly, reading and writing the buffers through their strides like a backend.

Not listed, because they are the page's reading in other words: rounding before clamping (floor
and ceil of a coordinate beyond the edge, clamped, select the edge element as clamping first
does); truncation toward zero (the clamped coordinate is never negative, so it is floor).
The coordinate, edge, linear and data-type misreadings of RESAMPLE1 (misreadings.py) name
RESAMPLE2 and RESAMPLE3 too, with the call's own rounding. The resample2 package lists this
catalogue as its MISREADINGS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import cast

import numpy as np

from conformance import ops
from conformance.kit.misreading import Misreading
from conformance.ops import OperatorCall
from conformance.ops.resample.pages import DIRECTION_PAGE
from conformance.ops.resample.pages import RESAMPLE2 as PAGE
from conformance.ops.resample.readings import mode, right, runs
from conformance.ops.resample.sampling import nearest_index
from conformance.ops.resample.spec import ResampleFamily
from conformance.spec import Citation

#: The operators with a RoundingDirection: RESAMPLE2 and RESAMPLE3, which extends it.
WITH_ROUNDING = frozenset({"RESAMPLE2", "RESAMPLE3"})
OTHER = {"INCREASING": "DECREASING", "DECREASING": "INCREASING"}

CEIL_FLOOR = Citation(PAGE, 'RoundingDirection ("DML_AXIS_DIRECTION_INCREASING. Round fractional '
                            'coordinates toward increasing axis values (ceil). '
                            'DML_AXIS_DIRECTION_DECREASING. Round fractional coordinates toward '
                            'decreasing axis values (floor).")')
ENUM = Citation(DIRECTION_PAGE, "Constants")


def _nearest(call: OperatorCall) -> bool:
    return mode(call) == "NEAREST_NEIGHBOR"


def _as_resample1(call: OperatorCall) -> OperatorCall:
    """The same desc as RESAMPLE1 (no RoundingDirection, no Antialiased)."""
    keep = ("InterpolationMode", "Scales", "InputPixelOffsets", "OutputPixelOffsets")
    return replace(call, operator="RESAMPLE1", attributes={k: call.attributes[k] for k in keep})


def _direction(direction: Callable[[str], str]) -> Callable[[OperatorCall], OperatorCall]:
    """The call with RoundingDirection d read as direction(d)."""
    def change(call: OperatorCall) -> OperatorCall:
        a = call.attributes
        return replace(call, attributes={**a, "RoundingDirection":
                                         direction(a["RoundingDirection"])})
    return change


def _selected(call: OperatorCall) -> list[np.ndarray]:
    """Per dimension the input index nearest selects for each output (without near-ties)."""
    spec = cast(ResampleFamily, ops.get(call.operator))
    rounding = spec.nearest_rounding(call)
    return [nearest_index(c + rounding.shift, rounding.halves_up)
            for c, _ in spec.axes(call, call.tensors["InputTensor"].sizes)]


def _entry(key: str, reading: str, contradicts: Citation,
           read_as: Callable[[OperatorCall], OperatorCall]) -> Misreading:
    """A misreading that runs the spec on the call as read_as reads it, for NEAREST_NEIGHBOR
    (LINEAR calls are computed as the page says)."""

    def compute(call: OperatorCall, x: np.ndarray) -> np.ndarray:
        return right(read_as(call) if _nearest(call) else call, x)

    def applies(call: OperatorCall) -> bool:
        if not _nearest(call):
            return False
        return any(np.any(a != b) for a, b in zip(_selected(read_as(call)), _selected(call),
                                                  strict=True))

    return Misreading(key=key, reading=reading, operators=WITH_ROUNDING, contradicts=contradicts,
                      run=runs(compute), applies=applies)


MISREADINGS = (
    _entry("rounding-direction-swapped",
           "RoundingDirection read the other way round: INCREASING rounding down (floor) and "
           "DECREASING up (ceil), the enum values 0 and 1 exchanged",
           ENUM, _direction(OTHER.__getitem__)),
    _entry("rounding-direction-ignored-floor",
           "RoundingDirection ignored, every coordinate rounded down (floor), INCREASING too",
           CEIL_FLOOR, _direction(lambda d: "DECREASING")),
    _entry("rounding-direction-ignored-ceil",
           "RoundingDirection ignored, every coordinate rounded up (ceil), DECREASING too",
           CEIL_FLOOR, _direction(lambda d: "INCREASING")),
    _entry("rounding-to-nearest",
           "RoundingDirection ignored for RESAMPLE1's nearest rounding floor(c + 0.5)",
           CEIL_FLOOR, _as_resample1),
)
