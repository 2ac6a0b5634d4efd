"""RESAMPLE and RESAMPLE1.

Coordinates (spec-notes §4, from OutputX = (InputX + InputPixelOffset) * Scale +
OutputPixelOffset on the RESAMPLE1 page): output index o along one dimension reads input
coordinate

    c = (o - OutputPixelOffset) / Scale - InputPixelOffset, clamped to [0, InputSize - 1]

- NEAREST_NEIGHBOR: index floor(c + 0.5) (halves round up; AMBIGUOUS AT TIES, spec-notes §4:
  either neighbour is accepted where c is at, or within float32 rounding of, a half).
- LINEAR: per dimension i0 = floor(c), i1 = min(i0 + 1, InputSize - 1), t = c - i0, product
  weights over the 2^D taps. The reference computes in float64 and rounds once to the output
  type; the FLOAT attributes are taken as the float32 values the operator receives.
- RESAMPLE is RESAMPLE1 with InputPixelOffsets 0.5 and OutputPixelOffsets -0.5 (RESAMPLE1 page,
  Remarks).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from conformance.compare import Expected
from conformance.levels import FeatureLevel
from conformance.ops.base import Attribute, OperatorCall, OperatorSpec, float32, table
from conformance.spec import Citation, Violation, notes

MODES = {"NEAREST_NEIGHBOR": 0, "LINEAR": 1}  # DML_INTERPOLATION_MODE (notes §1)

#: Relative float32 error allowed on a coordinate: 8 units of float32's 2^-23 spacing, i.e. a
#: factor 4 over the ~2 ulp that (o - OutOff) * (1 / Scale) - InOff costs in float32
#: (docs/tolerances.md).
COORDINATE_REL_ERROR = 2.0**-20
#: Float32 arithmetic error on the weighted sum, relative to sum(|w * x|) (docs/tolerances.md).
ACCUMULATION_REL_ERROR = 2.0**-21


def _tables(page: str, first: str) -> tuple:
    rows = [(first, [4], "FLOAT32, FLOAT16"),
            ("5_1", [1, 2, 3, 4], "FLOAT32, FLOAT16"),
            ("6_2", [1, 2, 3, 4], "FLOAT32, FLOAT16, INT8, UINT8")]
    return tuple(table(lv, dims, types, page, f"Tensor support / DML_FEATURE_LEVEL_{lv} and above")
                 for lv, dims, types in rows)


def coordinates(out_size: int, in_size: int, scale: float, in_offset: float, out_offset: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """The clamped input coordinate of every output index, and the float32 error allowance on
    each (float64 arithmetic on the float32 attribute values)."""
    o = np.arange(out_size, dtype=np.float64)
    c = (o - out_offset) / scale - in_offset
    err = COORDINATE_REL_ERROR * (np.abs(o - out_offset) / scale + abs(in_offset) + 1.0)
    return np.clip(c, 0.0, in_size - 1.0), err


def linear_taps(c: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two taps and the weight of the second, per clamped coordinate: i0 = floor(c),
    i1 = min(i0 + 1, size - 1), t = c - i0 (spec-notes §4)."""
    i0 = np.floor(c).astype(np.int64)
    return i0, np.minimum(i0 + 1, size - 1), c - i0


def nearest_index(c: np.ndarray) -> np.ndarray:
    """floor(c + 0.5): halves round up (spec-notes §4, the reading at ties)."""
    return np.floor(c + 0.5).astype(np.int64)


class _Resample(OperatorSpec):
    count_name: str  # "DimensionCount" or "ScaleCount"

    def offsets(self, call: OperatorCall) -> tuple[np.ndarray, np.ndarray]:
        a = call.attributes
        return float32(a["InputPixelOffsets"]), float32(a["OutputPixelOffsets"])

    def check_structure(self, parsed: dict[str, Any], given: Mapping[str, Any]) -> None:
        arrays = {k: v for k, v in parsed.items() if isinstance(v, tuple)}
        lengths = {len(v) for v in arrays.values()}
        if len(lengths) > 1:
            listed = ", ".join(f"{k} has {len(v)}" for k, v in arrays.items())
            raise ValueError(f"the arrays are all {self.count_name} long; {listed}")
        if self.count_name in given and given[self.count_name] != len(parsed["Scales"]):
            raise ValueError(f"{self.count_name} {given[self.count_name]} differs from the "
                             f"{len(parsed['Scales'])} Scales given")

    def infer_output_sizes(self, input_sizes: Sequence[int], attributes: Mapping[str, Any]
                           ) -> tuple[int, ...]:
        """floor(InputSize * Scale): the size the scales imply. A reading used to build cases;
        the spec does not require it ("the scales don't need to be exactly OutputSize /
        InputSize")."""
        scales = float32(attributes["Scales"])
        return tuple(max(1, math.floor(s * f)) for s, f in zip(input_sizes, scales, strict=True))

    def check(self, call: OperatorCall, level: FeatureLevel) -> list[Violation]:
        out = []
        a = call.attributes
        count = len(a["Scales"])
        for name in ("InputTensor", "OutputTensor"):
            dims = call.tensors[name].dimension_count
            if dims != count:
                out.append(Violation(
                    "resample.dimension_count",
                    f"{self.count_name} {count} differs from {name}'s dimension count {dims}; "
                    "it must match the dimension count of InputTensor and OutputTensor",
                    Citation(self.page, self.count_name)))
        if a["InterpolationMode"] not in MODES:
            out.append(Violation("resample.mode",
                                 f"InterpolationMode {a['InterpolationMode']!r} is not a "
                                 "DML_INTERPOLATION_MODE value",
                                 Citation("DML_INTERPOLATION_MODE", "Constants")))
        scales = float32(a["Scales"])
        if not all(math.isfinite(s) and s > 0 for s in scales):
            out.append(Violation(
                "resample.scales",
                f"Scales {list(a['Scales'])} must be positive and finite (as float32); a zero or "
                "non-finite scale leaves the coordinate formula undefined (reading, notes §4)",
                notes("4")))
        if "InputPixelOffsets" in a:
            for name in ("InputPixelOffsets", "OutputPixelOffsets"):
                if not all(math.isfinite(v) for v in float32(a[name])):
                    out.append(Violation(
                        "resample.offsets",
                        f"{name} {list(a[name])} must be finite (as float32); reading, notes §4",
                        notes("4")))
        return out

    # -- reference ------------------------------------------------------------------------------
    def axes(self, call: OperatorCall, in_shape: Sequence[int]
             ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per dimension: the clamped input coordinate of every output index, and its float32
        error allowance (see coordinates)."""
        out_shape = call.tensors["OutputTensor"].sizes
        scales = float32(call.attributes["Scales"])
        in_off, out_off = self.offsets(call)
        return [coordinates(o, i, s, a, b) for o, i, s, a, b
                in zip(out_shape, in_shape, scales, in_off, out_off, strict=True)]

    def reference(self, call: OperatorCall, inputs: Mapping[str, np.ndarray]
                  ) -> dict[str, np.ndarray]:
        return {"OutputTensor": self.expected(call, inputs)["OutputTensor"].values}

    def expected(self, call: OperatorCall, inputs: Mapping[str, np.ndarray],
                 strict: bool = False) -> dict[str, Expected]:
        x = inputs["InputTensor"]
        axes = self.axes(call, x.shape)
        if call.attributes["InterpolationMode"] == "NEAREST_NEIGHBOR":
            return {"OutputTensor": _nearest(x, axes, strict)}
        return {"OutputTensor": _linear(x, axes)}


def _take(x: np.ndarray, indices: Sequence[np.ndarray]) -> np.ndarray:
    return x[np.ix_(*indices)]


def _nearest(x: np.ndarray, axes: list[tuple[np.ndarray, np.ndarray]], strict: bool = False
             ) -> Expected:
    """floor(c + 0.5), bits copied; near-ties accept the other neighbour too (notes §4), unless
    strict (the reading alone: halves round up)."""
    primary, others = [], []
    for (c, err), size in zip(axes, x.shape, strict=True):
        idx = nearest_index(c)
        frac = c - np.floor(c)
        tie = np.abs(frac - 0.5) <= err
        other = np.where(idx > np.floor(c), idx - 1, idx + 1)
        other = np.where(tie & (other >= 0) & (other < size), other, idx)
        primary.append(idx)
        others.append(other if np.any(other != idx) else None)
    values = _take(x, primary)
    tied = [d for d, o in enumerate(others) if o is not None]
    if strict:
        return Expected(values, rule="nearest, floor(c + 0.5) even at ties (the suite's "
                                     "reading of an ambiguous region, notes §4)")
    if not tied:
        return Expected(values, rule="nearest, floor(c + 0.5), bit-exact")
    alternatives = []
    for choice in itertools.product((False, True), repeat=len(tied)):
        if any(choice):
            picked = list(primary)
            for d, use in zip(tied, choice, strict=True):
                if use:
                    picked[d] = others[d]
            alternatives.append(_take(x, picked))
    return Expected(values, kind="one_of", alternatives=tuple(alternatives),
                    rule="nearest, either neighbour at a tie (notes §4)")


def _linear(x: np.ndarray, axes: list[tuple[np.ndarray, np.ndarray]]) -> Expected:
    """Separable float64 interpolation, one rounding; bound from coordinate and sum errors."""
    y = x.astype(np.float64)
    magnitude = np.abs(y)
    hi = lo = y
    coord_err = 0.0
    for d, ((c, err), size) in enumerate(zip(axes, x.shape, strict=True)):
        i0, i1, t = linear_taps(c, size)
        t = t.reshape([-1 if k == d else 1 for k in range(x.ndim)])
        with np.errstate(invalid="ignore"):
            y = np.take(y, i0, axis=d) * (1 - t) + np.take(y, i1, axis=d) * t
            magnitude = np.take(magnitude, i0, axis=d) * (1 - t) + np.take(magnitude, i1,
                                                                             axis=d) * t
        hi = np.maximum(np.take(hi, i0, axis=d), np.take(hi, i1, axis=d))
        lo = np.minimum(np.take(lo, i0, axis=d), np.take(lo, i1, axis=d))
        coord_err = coord_err + err.reshape(t.shape)
    dtype = x.dtype
    with np.errstate(invalid="ignore", over="ignore"):
        float_error = ACCUMULATION_REL_ERROR * magnitude + coord_err * (hi - lo)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        center = np.clip(y, info.min, info.max)
        values = np.rint(center).astype(dtype)
        # Either integer neighbour of the exact value, widened by the float32 error of the value
        # itself (a float32 2.9999998 for an exact 3 may truncate to 2).
        return Expected(values, kind="within", center=center,
                        bound=np.nextafter(1.0, 0.0) + float_error,
                        rule="linear, either integer neighbour of the exact value (notes §4)")
    values = y.astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        bound = np.spacing(np.abs(values)).astype(np.float64) + float_error
    return Expected(values, kind="within", center=y, bound=bound,
                    rule="linear, within the float32 error bound (docs/tolerances.md)")


class Resample1(_Resample):
    name = "RESAMPLE1"
    type_value = 116
    introduced = FeatureLevel.FL_2_1
    page = "DML_RESAMPLE1_OPERATOR_DESC"
    attributes = (Attribute("InterpolationMode", "enum", MODES), Attribute("Scales", "floats"),
                  Attribute("InputPixelOffsets", "floats"),
                  Attribute("OutputPixelOffsets", "floats"))
    derived_attributes = ("DimensionCount",)
    count_name = "DimensionCount"
    support = _tables(page, "2_1")


class Resample(_Resample):
    name = "RESAMPLE"
    type_value = 96
    introduced = FeatureLevel.FL_2_0
    page = "DML_RESAMPLE_OPERATOR_DESC"
    attributes = (Attribute("InterpolationMode", "enum", MODES), Attribute("Scales", "floats"))
    derived_attributes = ("ScaleCount",)
    count_name = "ScaleCount"
    support = _tables(page, "2_0")

    def offsets(self, call: OperatorCall) -> tuple[np.ndarray, np.ndarray]:
        n = len(call.attributes["Scales"])
        return np.full(n, 0.5), np.full(n, -0.5)


OPERATORS = (Resample(), Resample1())
