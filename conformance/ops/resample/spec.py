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

Each output is judged twice (docs/tolerances.md): against the strict reading (one float32
pipeline rounding once) and against the legal envelope, what DirectML on Direct3D 12 may return
under the platform's floating-point rules (D3D_RULES below). Outside the envelope is a FAIL; inside
it but outside the strict reading a QUALITY_WARNING.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.ops.base import Attribute, OperatorCall, OperatorSpec, float32, table
from conformance.ops.resample.examples import ResampleExamples
from conformance.ops.resample.pages import MODE_PAGE, RESAMPLE, RESAMPLE1
from conformance.spec import Citation, Violation, notes

MODES = {"NEAREST_NEIGHBOR": 0, "LINEAR": 1}  # DML_INTERPOLATION_MODE (notes §1)
INTERPOLATION_MODE = Attribute("InterpolationMode", "enum", MODES,
                               prefix="DML_INTERPOLATION_MODE_")

#: Relative float32 error allowed on a coordinate: 8 units of float32's 2^-23 spacing, i.e. a
#: factor 4 over the ~2 ulp that (o - OutOff) * (1 / Scale) - InOff costs in float32
#: (docs/tolerances.md).
COORDINATE_REL_ERROR = 2.0**-20
#: Float32 arithmetic error on the weighted sum, relative to sum(|w * x|) (docs/tolerances.md).
ACCUMULATION_REL_ERROR = 2.0**-21

# -- the legal envelope (docs/tolerances.md, "The legal envelope") ------------------------------
#: Where the rules below are stated: "Floating-point rules" for Direct3D 11 and up (D3D12 included),
#: learn.microsoft.com/windows/uwp/graphics-concepts/floating-point-rules; the Direct3D 11 page
#: (learn.microsoft.com/windows/win32/direct3d11/floating-point-rules) states the same.
D3D_RULES = "Direct3D floating-point rules (Direct3D 11 and up)"
#: float32 add, subtract, multiply: "within 0.5 unit-last-place (ULP) of the infinitely-precise
#: result ... hardware is allowed to truncate results": an error below one ULP of the result, at
#: most 2^-23 of its magnitude. Reciprocal "1 ULP"; a direct x/y no worse than reciprocal then
#: multiply; fused operations no worse than their worst serial ordering, each step 1 ULP.
FLOAT32_OP_ERROR = 2.0**-23
#: 16-bit: "Unfused operations on 16-bit floating-point numbers produce a result that is the
#: nearest representable value ... 0.5 ULP": at most 2^-11 of the result's magnitude. Used for
#: FLOAT16 under DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION (notes §7).
FLOAT16_OP_ERROR = 2.0**-11
#: Coordinate allowance of the envelope, relative to |o| / Scale + |OutputPixelOffset| / Scale +
#: |InputPixelOffset| + 1: evaluating c in float32 in any usual arrangement ((o - OutOff) / Scale
#: - InOff, or o * (1 / Scale) - (OutOff / Scale + InOff), division as reciprocal then multiply)
#: costs at most 4 float32 op errors of those magnitudes (first order); twice that is allowed.
LEGAL_COORDINATE_REL_ERROR = 8 * FLOAT32_OP_ERROR
#: The smallest normal float32. "Denorms are flushed to sign-preserved zero on input and output of
#: any floating-point mathematical operation": each flush moves a value by less than this.
FLOAT32_MIN_NORMAL = 2.0**-126


def operation_count(dimensions: int) -> int:
    """The float roundings a legal evaluation of one linear output may commit, first order, in
    units of the tap magnitude: the worse of a 2^D-tap product-weighted sum in any order (D - 1
    multiplications per weight, one by the tap, 2^D - 1 additions) and D separable lerps written
    as x0 + t * (x1 - x0) (a subtraction, a multiplication and an addition on operands up to twice
    the taps, per dimension), whichever an implementation chooses."""
    return max(dimensions + 2**dimensions - 1, 4 * dimensions)


def support_tables(page: str, rows: Sequence[tuple[str, Sequence[int], str]]) -> tuple:
    """A resample page's "Tensor support" tables, each (level, dimension counts, data types) as
    the page words them, cited by their heading."""
    return tuple(table(lv, dims, types, page, f"Tensor support / DML_FEATURE_LEVEL_{lv} and above")
                 for lv, dims, types in rows)


def _tables(page: str, first: str) -> tuple:
    return support_tables(page, [(first, [4], "FLOAT32, FLOAT16"),
                                 ("5_1", [1, 2, 3, 4], "FLOAT32, FLOAT16"),
                                 ("6_2", [1, 2, 3, 4], "FLOAT32, FLOAT16, INT8, UINT8")])


def coordinates(out_size: int, in_size: int, scale: float, in_offset: float, out_offset: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """The clamped input coordinate of every output index, and the float32 error allowance on
    each (float64 arithmetic on the float32 attribute values)."""
    o = np.arange(out_size, dtype=np.float64)
    c = (o - out_offset) / scale - in_offset
    err = COORDINATE_REL_ERROR * (np.abs(o - out_offset) / scale + abs(in_offset) + 1.0)
    return np.clip(c, 0.0, in_size - 1.0), err


def legal_coordinate_error(out_size: int, scale: float, in_offset: float, out_offset: float
                           ) -> np.ndarray:
    """The envelope's allowance on each output index's coordinate (LEGAL_COORDINATE_REL_ERROR)."""
    o = np.arange(out_size, dtype=np.float64)
    return LEGAL_COORDINATE_REL_ERROR * ((np.abs(o) + abs(out_offset)) / scale + abs(in_offset)
                                         + 1.0)


def linear_taps(c: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two taps and the weight of the second, per clamped coordinate: i0 = floor(c),
    i1 = min(i0 + 1, size - 1), t = c - i0 (spec-notes §4)."""
    i0 = np.floor(c).astype(np.int64)
    return i0, np.minimum(i0 + 1, size - 1), c - i0


def nearest_index(c: np.ndarray, halves_up: bool = True) -> np.ndarray:
    """floor(c + 0.5): halves round up (spec-notes §4, the reading at ties); halves_up=False:
    ceil(c - 0.5), halves round down."""
    return (np.floor(c + 0.5) if halves_up else np.ceil(c - 0.5)).astype(np.int64)


@dataclass(frozen=True)
class NearestRounding:
    """How NEAREST_NEIGHBOR turns a coordinate c into an input index: the nearest integer to
    c + shift, halves up or down, and the words the judgement uses for it. The default is
    RESAMPLE(1)'s floor(c + 0.5) (notes §4); RESAMPLE2's RoundingDirection is floor(c) as shift
    -0.5 halves up, ceil(c) as shift +0.5 halves down. Either way a coordinate within float32
    rounding of a half of c + shift accepts either neighbour in mandatory cases."""

    shift: float = 0.0
    halves_up: bool = True
    words: str = "floor(c + 0.5)"
    #: Why the strict model (ambiguous cases) holds to `words` even at ties.
    strict_why: str = "the suite's reading of an ambiguous region, notes §4"
    #: Why mandatory cases accept either neighbour at a tie.
    tie_why: str = "notes §4"


class _Resample(ResampleExamples, OperatorSpec):
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

    def desc_fields(self, call: OperatorCall) -> list[tuple[str, Any]]:
        """The Syntax blocks of DML_RESAMPLE_OPERATOR_DESC (InputTensor, OutputTensor,
        InterpolationMode, ScaleCount, Scales), DML_RESAMPLE1_OPERATOR_DESC (..., InterpolationMode,
        DimensionCount, Scales, InputPixelOffsets, OutputPixelOffsets) and their successors
        (RESAMPLE2 adds RoundingDirection before DimensionCount, RESAMPLE3 Antialiased last): the
        count stands right before the first array it counts."""
        fields = super().desc_fields(call)
        first = next(i for i, (name, _) in enumerate(fields) if name == "Scales")
        return [*fields[:first], (self.count_name, len(call.attributes["Scales"])),
                *fields[first:]]

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
                                 Citation(MODE_PAGE, "Constants")))
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

    def selects_elements(self, call: OperatorCall) -> bool:
        """Nearest-neighbour sampling selects input elements; linear computes its outputs."""
        return call.attributes["InterpolationMode"] == "NEAREST_NEIGHBOR"

    def capability_gap(self, call: OperatorCall, capabilities: Any) -> str | None:
        """A backend that takes some pixel offset pairs only (Capabilities.offset_pairs, e.g.
        an adapter whose target API expresses half-pixel and asymmetric sampling alone)."""
        if capabilities.arbitrary_offsets or "InputPixelOffsets" not in call.attributes:
            return None
        pairs = zip(call.attributes["InputPixelOffsets"], call.attributes["OutputPixelOffsets"],
                    strict=True)
        odd = [p for p in pairs if tuple(p) not in capabilities.offset_pairs]
        if odd:
            return (f"the backend takes pixel offset pairs {sorted(capabilities.offset_pairs)} "
                    f"only, not {odd[0]}")
        return None

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

    def legal_axes(self, call: OperatorCall) -> list[np.ndarray]:
        """Per dimension: the envelope's coordinate allowance of every output index."""
        scales = float32(call.attributes["Scales"])
        in_off, out_off = self.offsets(call)
        return [legal_coordinate_error(o, s, a, b) for o, s, a, b
                in zip(call.tensors["OutputTensor"].sizes, scales, in_off, out_off, strict=True)]

    def nearest_rounding(self, call: OperatorCall) -> NearestRounding:
        """How NEAREST_NEIGHBOR rounds this call's coordinates: floor(c + 0.5) (notes §4)."""
        return NearestRounding()

    def reference(self, call: OperatorCall, inputs: Mapping[str, np.ndarray]
                  ) -> dict[str, np.ndarray]:
        return {"OutputTensor": self.expected(call, inputs)["OutputTensor"].values}

    def expected(self, call: OperatorCall, inputs: Mapping[str, np.ndarray],
                 strict: bool = False, flags: ExecutionFlags = ExecutionFlags.NONE
                 ) -> dict[str, Expected]:
        x = inputs["InputTensor"]
        axes = self.axes(call, x.shape)
        if call.attributes["InterpolationMode"] == "NEAREST_NEIGHBOR":
            return {"OutputTensor": _nearest(x, axes, strict, self.nearest_rounding(call))}
        half = (x.dtype == np.float16
                and bool(flags & ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION))
        return {"OutputTensor": _linear(x, axes, self.legal_axes(call), half)}


def _take(x: np.ndarray, indices: Sequence[np.ndarray]) -> np.ndarray:
    return x[np.ix_(*indices)]


def _nearest(x: np.ndarray, axes: list[tuple[np.ndarray, np.ndarray]], strict: bool = False,
             rounding: NearestRounding = NearestRounding()) -> Expected:
    """The rounding's index (floor(c + 0.5) by default), bits copied; near-ties accept the other
    neighbour too (notes §4), unless strict (the reading alone: ties round as `rounding` says)."""
    primary, others = [], []
    for (c, err), size in zip(axes, x.shape, strict=True):
        c = c + rounding.shift
        idx = nearest_index(c, rounding.halves_up)
        frac = c - np.floor(c)
        tie = np.abs(frac - 0.5) <= err
        other = np.where(idx > np.floor(c), idx - 1, idx + 1)
        other = np.where(tie & (other >= 0) & (other < size), other, idx)
        primary.append(idx)
        others.append(other if np.any(other != idx) else None)
    values = _take(x, primary)
    tied = [d for d, o in enumerate(others) if o is not None]
    if strict:
        return _any_nan(Expected(values, rule=f"nearest, {rounding.words} even at ties "
                                              f"({rounding.strict_why})"))
    if not tied:
        return _any_nan(Expected(values, rule=f"nearest, {rounding.words}, bit-exact"))
    alternatives = []
    for choice in itertools.product((False, True), repeat=len(tied)):
        if any(choice):
            picked = list(primary)
            for d, use in zip(tied, choice, strict=True):
                if use:
                    picked[d] = others[d]
            alternatives.append(_take(x, picked))
    return _any_nan(Expected(values, kind="one_of", alternatives=tuple(alternatives),
                             rule=f"nearest, either neighbour at a tie ({rounding.tie_why})"))


def _any_nan(exp: Expected) -> Expected:
    """The envelope of a nearest output: the selected elements' bits, except that where a NaN is
    selected any NaN is legal. Nearest selects an element; the pages never call it a copy, and the
    D3D rules keep a NaN's bit pattern only through "a raw move instruction - which doesn't alter
    data", which an implementation of an interpolating operator need not use (float16 through
    float32 registers quiets signalling NaNs). Every other value, float32 denormals included, must
    keep its bits: selecting is "data movement ... that doesn't manipulate the data", where the
    rules do not allow flushing (docs/tolerances.md)."""
    if not np.issubdtype(exp.values.dtype, np.floating):
        return exp
    return replace(exp, legal=replace(exp, any_nan=True,
                                      rule=exp.rule + "; a NaN may come back as any NaN "
                                                      f"({D3D_RULES})"))


def _linear(x: np.ndarray, axes: list[tuple[np.ndarray, np.ndarray]],
            legal_axes: list[np.ndarray], half: bool = False) -> Expected:
    """Separable float64 interpolation, one rounding; the strict bound (coordinate and sum errors
    of one float32 pipeline) and the legal envelope (the D3D rules; half: FLOAT16 math in half
    precision, allowed by DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION)."""
    y = x.astype(np.float64)
    multiplied = y  # the same sum with zero-weight taps multiplied in (NaN * 0 is NaN)
    magnitude = np.abs(y)
    # The finite taps an evaluation may read: those of the exact coordinate, and those of any
    # coordinate within its legal error (a tap of weight 0 may get a tiny weight).
    finite = np.where(np.isfinite(y), y, np.nan)
    peak, hi, lo = np.abs(finite), finite, finite
    coord_err = legal_err = 0.0
    for d, ((c, err), size) in enumerate(zip(axes, x.shape, strict=True)):
        i0, i1, t = linear_taps(c, size)
        shape = [-1 if k == d else 1 for k in range(x.ndim)]
        reach = legal_axes[d]
        reachable = (i0, i1, np.floor(np.clip(c - reach, 0, size - 1)).astype(np.int64),
                     np.minimum(np.floor(np.clip(c + reach, 0, size - 1)).astype(np.int64) + 1,
                                size - 1))
        with warnings.catch_warnings():  # all-NaN slices: no finite tap, the center decides
            warnings.simplefilter("ignore", RuntimeWarning)
            peak = np.nanmax([np.take(peak, i, axis=d) for i in reachable], axis=0)
            hi = np.nanmax([np.take(hi, i, axis=d) for i in reachable], axis=0)
            lo = np.nanmin([np.take(lo, i, axis=d) for i in reachable], axis=0)
        with np.errstate(invalid="ignore"):
            multiplied = (np.take(multiplied, i0, axis=d) * (1 - t.reshape(shape))
                          + np.take(multiplied, i1, axis=d) * t.reshape(shape))
        # A tap of weight 0 (t == 0: c on a sample) is not part of the value: the exact
        # interpolation there is the sample itself, whatever the other tap holds.
        i1 = np.where(t == 0, i0, i1)
        t = t.reshape(shape)
        with np.errstate(invalid="ignore"):
            first = np.take(y, i0, axis=d)
            y = np.where(t == 0, first, first * (1 - t) + np.take(y, i1, axis=d) * t)
            magnitude = np.take(magnitude, i0, axis=d) * (1 - t) + np.take(magnitude, i1,
                                                                             axis=d) * t
        coord_err = coord_err + err.reshape(shape)
        legal_err = legal_err + legal_axes[d].reshape(shape)
    dtype = x.dtype
    # An implementation that multiplies the zero-weight taps in gets NaN from a NaN or infinite
    # one ("(+/-)INF * 0 = NaN", "NaN (any OP) any-value = NaN"): legal, as is skipping them.
    nan_ok = np.isnan(multiplied) & ~np.isnan(y) if np.issubdtype(dtype, np.floating) else None
    if nan_ok is not None and not nan_ok.any():
        nan_ok = None
    with np.errstate(invalid="ignore", over="ignore"):
        spread = hi - lo
        float_error = ACCUMULATION_REL_ERROR * magnitude + coord_err * spread
        envelope = _legal_error(x.ndim, peak, spread, legal_err, half)
    return interpolated(y, dtype, float_error, envelope, "linear", nan_ok, half)


def interpolated(y: np.ndarray, dtype: np.dtype, strict_error: np.ndarray,
                 legal_error: np.ndarray, rule: str, nan_ok: np.ndarray | bool,
                 half: bool) -> Expected:
    """The expectation of an interpolated output y (float64, exact): within strict_error of y
    strictly and within legal_error legally, besides the last rounding to the output type (its
    spacing; for integers, either neighbour of the exact value, widened by the error of the value
    itself: a float32 2.9999998 for an exact 3 may truncate to 2). rule: what computes y."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        center = np.clip(y, info.min, info.max)
        values = np.rint(center).astype(dtype)
        neighbour = np.nextafter(1.0, 0.0)
        rule = f"{rule}, either integer neighbour of the exact value (notes §4)"
        return Expected(values, kind="within", center=center, bound=neighbour + strict_error,
                        rule=rule,
                        legal=Expected(values, kind="within", center=center,
                                       bound=neighbour + legal_error,
                                       rule=f"{rule}, widened by the float32 error {D3D_RULES} "
                                            "allow"))
    values = y.astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        last = np.spacing(np.abs(values)).astype(np.float64)
    precision = "FLOAT16 math in half precision" if half else "float32 math"
    return Expected(values, kind="within", center=y, bound=last + strict_error, nan_ok=nan_ok,
                    rule=f"{rule}, within the strict float32 error bound (docs/tolerances.md)",
                    legal=Expected(values, kind="within", center=y, bound=last + legal_error,
                                   nan_ok=nan_ok,
                                   rule=f"{rule}, within the legal envelope of {precision} under "
                                        f"the {D3D_RULES} (docs/tolerances.md)"))


def _legal_error(dimensions: int, peak: np.ndarray, spread: np.ndarray, coordinate: np.ndarray,
                 half: bool) -> np.ndarray:
    """What legal arithmetic may add to the exact value of a linear output, besides the last
    rounding to the output type (docs/tolerances.md, "The legal envelope"):

    - the evaluation: operation_count(D) roundings of the op error on values up to the largest
      tap |x| (peak), whatever the order of the sum, with or without fused multiply-add;
    - the weights: a weight 1 - t computed with one rounding (the sum of weights is then 1 only
      to within it) moves the result by that error times a tap: D of those; in half precision t
      itself is rounded to float16 too (twice the half-precision op error per dimension);
    - the coordinates: the coordinate allowance times the largest difference of the taps;
    - float32 math: a denormal flushed to zero at the input or output of each operation moves a
      value by less than FLOAT32_MIN_NORMAL (a weight by that, times a tap).
    """
    count = operation_count(dimensions)
    op = FLOAT16_OP_ERROR if half else FLOAT32_OP_ERROR
    weights = dimensions * (2 * op if half else op) * peak
    flush = 0.0 if half else 2 * count * FLOAT32_MIN_NORMAL * np.maximum(1.0, peak)
    return count * op * peak + weights + coordinate * spread + flush


class Resample1(_Resample):
    name = "RESAMPLE1"
    type_value = 116
    introduced = FeatureLevel.FL_2_1
    page = RESAMPLE1
    attributes = (INTERPOLATION_MODE, Attribute("Scales", "floats"),
                  Attribute("InputPixelOffsets", "floats"),
                  Attribute("OutputPixelOffsets", "floats"))
    derived_attributes = ("DimensionCount",)
    count_name = "DimensionCount"
    support = _tables(page, "2_1")


class Resample(_Resample):
    name = "RESAMPLE"
    type_value = 96
    introduced = FeatureLevel.FL_2_0
    page = RESAMPLE
    attributes = (INTERPOLATION_MODE, Attribute("Scales", "floats"))
    derived_attributes = ("ScaleCount",)
    count_name = "ScaleCount"
    support = _tables(page, "2_0")

    def offsets(self, call: OperatorCall) -> tuple[np.ndarray, np.ndarray]:
        n = len(call.attributes["Scales"])
        return np.full(n, 0.5), np.full(n, -0.5)
