"""DML_RESAMPLE2_OPERATOR_DESC (DML_FEATURE_LEVEL_5_1; INT8/UINT8 from 6_2).

RESAMPLE1 with a RoundingDirection (docs/spec-notes.md §10 holds the readings):

- Coordinates: the page's relation "OutputTensorX = (InputTensorX + InputPixelOffset) * Scale +
  OutputPixelOffset" (Description), read backwards and clamped exactly as for RESAMPLE1 (notes
  §4): c = (o - OutputPixelOffset) / Scale - InputPixelOffset, clamped to [0, InputSize - 1].
- NEAREST_NEIGHBOR: RoundingDirection "DML_AXIS_DIRECTION_INCREASING. Round fractional coordinates
  toward increasing axis values (ceil)" and "DML_AXIS_DIRECTION_DECREASING ... (floor)": index
  ceil(c) or floor(c). A coordinate within float32 rounding of a whole number accepts either
  neighbour in mandatory cases, by RESAMPLE1's own near-tie machinery (NearestRounding).
- LINEAR: "Since bilinear interpolation interpolates fractional coordinates anyway, this affects
  only DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR", and the Remarks: "This operator is equivalent to
  DML_RESAMPLE1_OPERATOR_DESC when InterpolationMode is set to DML_INTERPOLATION_MODE_LINEAR":
  RESAMPLE1's linear reference, strict bound and legal envelope, unchanged.
- Validation: every RESAMPLE1 rule (DimensionCount, InterpolationMode, Scales, offsets), the
  RoundingDirection a DML_AXIS_DIRECTION value, the "Tensor constraints" (same DataType and
  DimensionCount) and the two "Tensor support" tables.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conformance.levels import FeatureLevel
from conformance.ops.base import Attribute, OperatorCall, float32
from conformance.ops.resample import (
    INTERPOLATION_MODE,
    NearestRounding,
    Resample1,
    support_tables,
)
from conformance.ops.resample2.examples import Resample2Examples
from conformance.ops.resample2.pages import DIRECTION_PAGE, PAGE
from conformance.spec import Citation, Violation

#: DML_AXIS_DIRECTION (DirectML.h at DML_TARGET_VERSION 0x6400: "DML_AXIS_DIRECTION_INCREASING =
#: 0, DML_AXIS_DIRECTION_DECREASING = 1"; the DML_AXIS_DIRECTION page states the same values).
AXIS_DIRECTIONS = {"INCREASING": 0, "DECREASING": 1}

#: RoundingDirection's two readings of a nearest coordinate c, as RESAMPLE1's rounding of a
#: shifted coordinate: floor(c) = floor((c - 0.5) + 0.5), halves up; ceil(c) = ceil((c + 0.5) -
#: 0.5), halves down. Their near-ties are c within float32 rounding of a whole number.
_TIES = ("the coordinate within float32 rounding of a whole number: either neighbour (notes §10; "
         "a float32 coordinate may land on either side of it)")
ROUNDINGS = {
    "DECREASING": NearestRounding(
        shift=-0.5, halves_up=True, words="floor(c) (RoundingDirection DECREASING)",
        strict_why='"DML_AXIS_DIRECTION_DECREASING. Round fractional coordinates toward '
                   'decreasing axis values (floor)"', tie_why=_TIES),
    "INCREASING": NearestRounding(
        shift=0.5, halves_up=False, words="ceil(c) (RoundingDirection INCREASING)",
        strict_why='"DML_AXIS_DIRECTION_INCREASING. Round fractional coordinates toward '
                   'increasing axis values (ceil)"', tie_why=_TIES),
}


def tables(page: str, rows: tuple[tuple[str, str], ...]) -> tuple:
    """The page's "Tensor support" tables, 1 to 4 dimensions each: (level, data types)."""
    return support_tables(page, [(lv, [1, 2, 3, 4], types) for lv, types in rows])


class Resample2(Resample2Examples, Resample1):
    name = "RESAMPLE2"
    type_value = 161  # DML_OPERATOR_RESAMPLE2 (DirectML.h, target 0x5100 and up; notes §1)
    introduced = FeatureLevel.FL_5_1  # Availability: "introduced in DML_FEATURE_LEVEL_5_1"
    page = PAGE
    attributes = (INTERPOLATION_MODE,
                  Attribute("RoundingDirection", "enum", AXIS_DIRECTIONS,
                            prefix="DML_AXIS_DIRECTION_"),
                  Attribute("Scales", "floats"),
                  Attribute("InputPixelOffsets", "floats"),
                  Attribute("OutputPixelOffsets", "floats"))
    derived_attributes = ("DimensionCount",)
    count_name = "DimensionCount"
    support = tables(PAGE, (("5_1", "FLOAT32, FLOAT16"), ("6_2", "FLOAT32, FLOAT16, INT8, UINT8")))

    def check(self, call: OperatorCall, level: FeatureLevel) -> list[Violation]:
        out = super().check(call, level)
        direction = call.attributes["RoundingDirection"]
        if direction not in AXIS_DIRECTIONS:
            out.append(Violation(
                "resample2.rounding_direction",
                f"RoundingDirection {direction!r} is not a DML_AXIS_DIRECTION value (INCREASING "
                "0, DECREASING 1)",
                Citation(DIRECTION_PAGE, "Constants")))
        return out

    def axes(self, call: OperatorCall, in_shape: Sequence[int]
             ) -> list[tuple[np.ndarray, np.ndarray]]:
        """RESAMPLE1's clamped coordinates and allowances; for NEAREST_NEIGHBOR no near-tie
        where the clamp decided the coordinate: a clamped coordinate is 0 or InputSize - 1, a
        whole number that floor and ceil keep, and no float32 error reaches its other side
        (RESAMPLE1's clamped coordinates are whole too, never near its ties at halves). The
        allowance there is -inf: no |frac - 0.5| is within it, not even an exact tie's 0."""
        axes = super().axes(call, in_shape)
        if call.attributes["InterpolationMode"] != "NEAREST_NEIGHBOR":
            return axes
        return [(c, np.where((raw < -err) | (raw > size - 1 + err), -np.inf, err))
                for (c, err), raw, size in zip(axes, self.unclamped(call), in_shape, strict=True)]

    def unclamped(self, call: OperatorCall) -> list[np.ndarray]:
        """Per dimension the page's coordinate of every output index before the clamp that
        coordinates() applies: (o - OutputPixelOffset) / Scale - InputPixelOffset (notes §4)."""
        in_off, out_off = self.offsets(call)
        return [(np.arange(o, dtype=np.float64) - q) / s - p for o, s, p, q
                in zip(call.tensors["OutputTensor"].sizes, float32(call.attributes["Scales"]),
                       in_off, out_off, strict=True)]

    def silent_regions(self, call: OperatorCall) -> list[str]:
        """Why the page leaves some output of this call open, one reason each (a case whose call
        has any is marked ambiguous). None for RESAMPLE2: RoundingDirection decides every
        nearest coordinate, the Remarks make LINEAR RESAMPLE1's, and the rounding of LINEAR
        integer outputs is accepted either way in every case (notes §4). RESAMPLE3 adds its
        own."""
        return []

    def nearest_rounding(self, call: OperatorCall) -> NearestRounding:
        """floor(c) for DECREASING, ceil(c) for INCREASING (the page's RoundingDirection)."""
        return ROUNDINGS[call.attributes["RoundingDirection"]]
