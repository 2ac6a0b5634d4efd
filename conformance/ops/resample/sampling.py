"""The sampling the resample family shares: coordinates, nearest and linear interpolation, and
their strict bounds and legal envelope (the spec classes, spec.py, hand these their calls).

Coordinates (spec-notes §4, from OutputX = (InputX + InputPixelOffset) * Scale +
OutputPixelOffset on the RESAMPLE1 page): output index o along one dimension reads input
coordinate

    c = (o - OutputPixelOffset) / Scale - InputPixelOffset, clamped to [0, InputSize - 1]

- NEAREST_NEIGHBOR: index floor(c + 0.5) (halves round up; AMBIGUOUS AT TIES, spec-notes §4:
  either neighbour is accepted where c is at, or within float32 rounding of, a half), or the
  rounding a RoundingDirection names (NearestRounding).
- LINEAR: per dimension i0 = floor(c), i1 = min(i0 + 1, InputSize - 1), t = c - i0, product
  weights over the 2^D taps. The reference computes in float64 and rounds once to the output
  type; the FLOAT attributes are taken as the float32 values the operator receives.

Each output is judged twice (docs/tolerances.md): against the strict reading (one float32
pipeline rounding once) and against the legal envelope, what DirectML on Direct3D 12 may return
under the platform's floating-point rules (D3D_RULES below). Outside the envelope is a FAIL; inside
it but outside the strict reading a QUALITY_WARNING.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from conformance.expected import Expected

#: One dimension's clamped input coordinate of every output index and its float32 allowance.
Coordinates = tuple[np.ndarray, np.ndarray]

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


def coordinates(out_size: int, in_size: int, scale: float, in_offset: float, out_offset: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """The clamped input coordinate of every output index, and the float32 error allowance on
    each (float64 arithmetic on the float32 attribute values)."""
    o = np.arange(out_size, dtype=np.float64)
    c = unclamped(out_size, scale, in_offset, out_offset)
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



def unclamped(out_size: int, scale: float, in_offset: float, out_offset: float) -> np.ndarray:
    """The page's coordinate of every output index before the clamp that coordinates() applies:
    (o - OutputPixelOffset) / Scale - InputPixelOffset (notes §4)."""
    return (np.arange(out_size, dtype=np.float64) - out_offset) / scale - in_offset


def resampled(x: np.ndarray, mode: str, axes: list[Coordinates], legal_axes: list[np.ndarray],
              rounding: NearestRounding = NearestRounding(), strict: bool = False,
              half: bool = False) -> Expected:
    """The expectation of x resampled in `mode` at the given coordinates (per dimension, as
    coordinates() gives them) with the envelope's allowances legal_axes: NEAREST_NEIGHBOR by
    `rounding` (strict: the reading alone, even at ties), LINEAR in float32 math or, half, in
    half precision."""
    if mode == "NEAREST_NEIGHBOR":
        return _nearest(x, axes, strict, rounding)
    return _linear(x, axes, legal_axes, half)


def _take(x: np.ndarray, indices: Sequence[np.ndarray]) -> np.ndarray:
    return x[np.ix_(*indices)]


def _nearest(x: np.ndarray, axes: list[Coordinates], strict: bool = False,
             rounding: NearestRounding = NearestRounding()) -> Expected:
    """The rounding's index (floor(c + 0.5) by default), bits copied; near-ties accept the other
    neighbour too (notes §4), unless strict (the reading alone: ties round as `rounding` says)."""
    primary: list[np.ndarray] = []
    others: list[np.ndarray | None] = []
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
    tied = {d: o for d, o in enumerate(others) if o is not None}  # dimension -> other index
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
                    picked[d] = tied[d]
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


def _linear(x: np.ndarray, axes: list[Coordinates],
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
    coord_err: np.ndarray | float = 0.0
    legal_err: np.ndarray | float = 0.0
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
                 legal_error: np.ndarray, rule: str, nan_ok: np.ndarray | None,
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


def _legal_error(dimensions: int, peak: np.ndarray, spread: np.ndarray,
                 coordinate: np.ndarray | float, half: bool) -> np.ndarray:
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
