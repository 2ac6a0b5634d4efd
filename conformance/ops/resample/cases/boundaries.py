"""Nearest coordinates just beside every rounding boundary (issue 25): RESAMPLE, RESAMPLE1,
RESAMPLE2 and RESAMPLE3 with NEAREST_NEIGHBOR, per operator, RoundingDirection and data type.

A nearest index changes where the coordinate crosses a boundary of its rounding: a half for
RESAMPLE and RESAMPLE1 (floor(c + 0.5), NOTES §4), a whole number for RESAMPLE2 and RESAMPLE3
(floor(c) DECREASING, ceil(c) INCREASING, notes §10). An implementation that rounds with a
margin (trunc(c + 0.999) for ceil, floor(c + 0.4999) for halves up) or in too little precision
agrees with the spec everywhere but within its margin of a boundary, where no other family puts
a coordinate: a float32 coordinate within rounding of a boundary accepts either neighbour, and
the other families keep their coordinates far from them. Each case here puts every coordinate of
the width a distance d in {1e-4, 1e-3, 1e-2} above or below a whole number or a half (eight
cases per slice and d's sign, both boundaries), so that floor, ceil and halves up each pick the
neighbour the spec names: d is hundreds of times the float32 allowance at these coordinates
(below 8, where 1 ULP is 2^-21), and the generator checks each case is decided (no either-
neighbour allowance at any element) and lands on the side it names.

RESAMPLE1, RESAMPLE2 and RESAMPLE3 take Scale 1 and InputPixelOffset -(k + d) on the width, so
every output o reads c = o + k + d (k = 0 near a whole number, 0.5 near a half). RESAMPLE's
offsets are implied (0.5 / -0.5), so its width takes the Scale s = (O + 0.5) / (O + k + d + 0.5)
that puts output O = 5 at c = O + k + d; the others drift with o towards whole numbers (c = o +
(o + 0.5) (k + d) / (O + 0.5)), and the case is kept where every coordinate is decided. The
inputs are integer ramps, so a neighbour taken wrongly shows in the value.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from conformance import ops
from conformance.kit.build import case, cite, desc, iota_input
from conformance.ops.base import float32
from conformance.ops.resample.cases.derive import decided
from conformance.ops.resample.cases.sampling import ramp
from conformance.ops.resample.examples import offsets_attributes
from conformance.ops.resample.sampling import coordinates
from conformance.ops.resample.spec import ResampleFamily
from conformance.tensors import DataType

FAMILY = "boundaries"
DESCRIPTION = ("nearest coordinates 1e-4 to 1e-2 beside every rounding boundary (whole numbers "
               "and halves), per operator, RoundingDirection and data type")
OPERATORS = ("RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3")
DIRECTIONS = ("DECREASING", "INCREASING")
#: How far each coordinate sits from its boundary.
DISTANCES = (1e-4, 1e-3, 1e-2)
#: (name, k): the boundary a whole number (k = 0) or a half (k = 0.5) away from o.
BOUNDARIES = (("whole", 0.0), ("half", 0.5))
WIDTH = 8
#: RESAMPLE's output whose coordinate is placed exactly (the others drift towards o).
PLACED = 5


def _types(operator: str) -> list[DataType]:
    spec = ops.get(operator)
    return sorted(frozenset().union(*(t.data_types for t in spec.support)))


def _pairs(operator: str, offset: float) -> tuple[list[float], list[tuple[float, float]]]:
    """Scales and offset pairs of a [1, 1, 1, WIDTH] call whose width coordinates are o + offset
    (RESAMPLE: output PLACED exactly there)."""
    if operator == "RESAMPLE":
        scale = float(float32([(PLACED + 0.5) / (PLACED + offset + 0.5)])[0])
        return [1.0, 1.0, 1.0, scale], [(0.5, -0.5)] * 4
    return [1.0] * 4, [(0.0, 0.0)] * 3 + [(float(float32([-offset])[0]), 0.0)]


def _variants(operator: str) -> Iterator[tuple[str, str | None]]:
    """(id part, RoundingDirection or None) of each call shape of the operator."""
    spec = ops.get(operator)
    if isinstance(spec, ResampleFamily) and spec.states("RoundingDirection"):
        for direction in DIRECTIONS:
            yield f"{direction.lower()}/", direction
    else:
        yield "", None


def _side(operator: str, scales: list[float], pairs: list[tuple[float, float]], k: float,
          sign: float) -> bool:
    """Whether the width's coordinates that sit near the boundary all lie on the named side."""
    (a, b), scale = pairs[3], scales[3]
    c, _ = coordinates(WIDTH, WIDTH, float(float32([scale])[0]), a, b)
    fraction = c - np.floor(c)
    near = np.abs(fraction - k) < 0.05 if k else np.minimum(fraction, 1 - fraction) < 0.05
    near &= (c > 0) & (c < WIDTH - 1)  # the clamp decides the ends
    if not near.any():
        return False
    distance = (fraction - k) if k else np.where(fraction < 0.5, fraction, fraction - 1)
    return bool(np.all(np.sign(distance[near]) == sign))


def cases_of(operator: str) -> list[dict]:
    spec = ops.get(operator)
    page = str(spec.page)
    out = []
    for data_type in _types(operator):
        sizes = [1, 1, 1, WIDTH]
        tensors = {"InputTensor": desc(data_type, sizes), "OutputTensor": desc(data_type, sizes)}
        start, step = ramp(data_type, WIDTH)
        for part, direction in _variants(operator):
            for name, k in BOUNDARIES:
                for d in DISTANCES:
                    for sign, word in ((1.0, "above"), (-1.0, "below")):
                        offset = k + sign * d
                        scales, pairs = _pairs(operator, offset)
                        attributes: dict = offsets_attributes("NEAREST_NEIGHBOR", scales, pairs)
                        if isinstance(spec, ResampleFamily):
                            attributes = spec.stated(attributes, direction or "DECREASING", 0)
                        cid = (f"generated/{FAMILY}/{operator.lower()}/{part}"
                               f"{data_type.name.lower()}/{name}-{word}-{d:g}")
                        if not decided(operator, tensors, attributes):
                            raise AssertionError(f"{cid}: a coordinate is within float32 "
                                                 "rounding of a boundary")
                        if not _side(operator, scales, pairs, k, sign):
                            raise AssertionError(f"{cid}: the coordinates are not {word} the "
                                                 f"{name} boundary")
                        out.append(case(
                            cid, operator, attributes, tensors, family=FAMILY,
                            spec=[cite(page, "InterpolationMode"),
                                  *([cite(page, "RoundingDirection")] if direction else []),
                                  cite("NOTES", "10" if direction else "4")],
                            inputs={"InputTensor": iota_input(tensors["InputTensor"], start,
                                                              step)},
                            tags=[data_type.name.lower(), "nearest", name],
                            description=(f"width coordinates {d:g} {word} "
                                         f"{'a whole number' if not k else 'a half'} "
                                         f"(Scales {scales}, offsets {pairs[3]}); "
                                         f"{direction or 'floor(c + 0.5)'}")))
    return out


def files() -> dict[str, list[dict]]:
    return {operator.lower(): cases_of(operator) for operator in OPERATORS}
