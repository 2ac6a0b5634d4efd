"""The antialiased linear filter of RESAMPLE3, its reference, its bounds and the page's silences.

What the page states (DML_RESAMPLE3_OPERATOR_DESC, Antialiased): "Antialiasing is achieved by
stretching the resampling filter by a factor max(1, 1 / scale), which means that when
downsampling, more input pixels contribute to an output pixel. This occurs when this flag is set
to TRUE, and assuming the following conditions: InterpolationMode is
DML_INTERPOLATION_MODE_LINEAR; 1/Scales > 2".

The resampling filter of LINEAR is the triangle ("the weighted average of the two nearest
neighboring input elements per dimension": weight 1 - |i - c| for the inputs within 1 of the
coordinate c). Stretched by f = 1 / Scale it weighs every input i within f of c by
1 - |i - c| / f. The reading the suite takes where the page is silent (docs/spec-notes.md §10),
from the route that certifies real users' paths: ONNX Runtime's DirectML execution provider
passes ONNX Resize's `antialias` straight to RESAMPLE3's Antialiased and refuses
`exclude_outside != 0` ("DML clamps the input coordinates to the edges and essentially repeats
the last pixel. So rescaling the input kernel total denominator is not supported",
onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorResize.cpp), so it
expects ONNX's antialiased linear with exclude_outside 0 (onnx/reference/ops/op_resize.py,
_linear_coeffs_antialias and _get_neighbor):

- weights normalised by their sum (ONNX: `coeffs / sum(coeffs)`);
- the taps: every input within f of c (ONNX's footprint 2 - 2 * (floor(-f) + 1) covers them);
- beyond the edges a tap reads the edge element (ONNX pads the input by repeating its edge;
  "repeats the last pixel"), the filter centred on the coordinate itself, not clamped;
- 1/Scale > 2 is decided per dimension: a dimension with 1/Scale <= 2 is interpolated as LINEAR.

Separable: the weight of an input is the product of its per-dimension weights (ONNX resizes one
axis at a time). The reference computes in float64 and rounds once to the output type.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from conformance.expected import Expected
from conformance.ops.resample.sampling import (
    FLOAT16_OP_ERROR,
    FLOAT32_MIN_NORMAL,
    FLOAT32_OP_ERROR,
    interpolated,
)

#: Where the page decides whether a dimension is antialiased: "1/Scales > 2".
THRESHOLD = 2.0
#: How close to a whole stretch the weights' sum must stay for the page's silence on the
#: normalisation not to matter (the weights' sum and f itself then agree to 8 float32 ulps),
#: and how close 1/Scale may come to the threshold before a float32 reciprocal may decide either
#: way (docs/spec-notes.md §10).
SILENCE_REL = 2.0**-20
#: Round-to-nearest float32 error of one operation, relative to its result: the strict reading.
ROUND_TO_NEAREST = 2.0**-24
#: A quantity per output element (an array, broadcast over the dimensions not yet reached), or
#: one for all of them before the first dimension sets it.
Numbers = np.ndarray | float


def stretch(scale: float) -> float:
    """f for one dimension: 1 / Scale where 1 / Scale > 2 (the page's condition), else 1."""
    return 1.0 / scale if 1.0 / scale > THRESHOLD else 1.0


@dataclass(frozen=True)
class Axis:
    """One dimension of an antialiased call.

    c: the page's coordinate of every output index, (o - OutputPixelOffset) / Scale -
    InputPixelOffset, not clamped (the filter is centred on it; its taps are clamped).
    err: the strict float32 allowance on c; reach: the legal envelope's allowance on c.
    f: the stretch (1 where the dimension is interpolated as LINEAR). size: InputSize.
    """

    c: np.ndarray
    err: np.ndarray
    reach: np.ndarray
    f: float
    size: int
    #: Where the page is silent (docs/spec-notes.md §10), the reading this axis follows: a tap
    #: beyond the edge reads the edge element ("repeat", the suite's) or is dropped and the
    #: others renormalised ("drop"); the weights divided by their sum ("sum", the suite's) or by
    #: the stretch f ("stretch").
    edges: str = "repeat"
    norm: str = "sum"

    @property
    def stretched(self) -> bool:
        return self.f > 1.0


def _window(c: np.ndarray, radius: np.ndarray | float, closed: bool
            ) -> tuple[np.ndarray, np.ndarray]:
    """The whole numbers i with |i - c| <= radius (closed) or < radius (open), per output, as an
    (outputs, n) array padded by repeating the last one, and their count per output."""
    radius = np.broadcast_to(np.asarray(radius, dtype=np.float64), c.shape)
    if closed:
        lo, hi = np.ceil(c - radius), np.floor(c + radius)
    else:
        lo, hi = np.floor(c - radius) + 1, np.ceil(c + radius) - 1
    count = (hi - lo + 1).astype(np.int64)
    n = max(int(count.max(initial=1)), 1)
    taps = np.minimum(lo[:, None] + np.arange(n)[None, :], hi[:, None])
    return taps.astype(np.int64), count


def filter_weights(axis: Axis) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The taps of every output (clamped to the input), their weights normalised by their sum
    (0 on the padding), the sum itself and the number of taps of positive weight."""
    taps, count = _window(axis.c, axis.f, closed=False)
    k = np.arange(taps.shape[1])[None, :]
    raw = np.where(k < count[:, None], 1.0 - np.abs(taps - axis.c[:, None]) / axis.f, 0.0)
    if axis.edges == "drop":
        raw = np.where((taps < 0) | (taps > axis.size - 1), 0.0, raw)
    total = raw.sum(axis=1)
    divisor = total[:, None] if axis.norm == "sum" or axis.edges == "drop" else axis.f
    with np.errstate(invalid="ignore", divide="ignore"):  # no tap inside: no value (NaN)
        return np.clip(taps, 0, axis.size - 1), raw / divisor, total, count


def normalisation_gap(axis: Axis) -> np.ndarray:
    """|sum of weights - f| / f per output: how far the suite's normalisation (by the sum) is from
    the other plausible one (by the stretch, the area of the stretched triangle). 0 for f = 1 and
    for whole f (the triangle's samples then sum to f exactly)."""
    _, _, total, _ = filter_weights(axis)
    return np.abs(total - axis.f) / axis.f


def reaches_outside(axis: Axis) -> bool:
    """Whether some output's stretched filter gives weight to an input beyond the edges (an
    i <= -1 within f of c: c < f - 1; or an i >= size: c > size - f)."""
    return bool(np.any(axis.c < axis.f - 1) or np.any(axis.c > axis.size - axis.f))


def silences(scales: np.ndarray, axes: list[Axis]) -> list[str]:
    """Why the page leaves some output of an antialiased LINEAR call open (docs/spec-notes.md
    §10), one reason each, from its float32 Scales and its filter's axes (none where no
    dimension is stretched); empty where the page decides every output."""
    reasons = []
    inverse = [1.0 / s for s in scales]
    if any(abs(v - THRESHOLD) <= THRESHOLD * SILENCE_REL for v in inverse):
        reasons.append("a 1/Scale within float32 rounding of 2: whether '1/Scales > 2' holds "
                       "depends on how the reciprocal rounds")
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


@dataclass(frozen=True)
class Reading:
    """One admissible reading of an antialiased call where the page is silent (docs/spec-notes.md
    §10): the stretch of every dimension, what a tap beyond the edge reads, how the weights are
    normalised, and the words that name it."""

    stretches: tuple[float, ...]
    edges: str
    norm: str
    words: str


EDGE_WORDS = {"repeat": "a tap beyond the edge reads the edge element",
              "drop": "taps beyond the edge dropped and the others' weights renormalised "
                      "(ONNX's exclude_outside 1)"}
NORM_WORDS = {"sum": "the weights divided by their sum",
              "stretch": "the weights divided by the stretch f (the stretched triangle's area)"}


def readings(scales: np.ndarray, make_axes: Callable[[tuple[float, ...], str, str],
                                                     list[Axis] | None]) -> list[Reading]:
    """Every admissible reading of an antialiased LINEAR call's silent regions (silences()),
    the suite's own first; just the suite's where the page decides every output.

    - the threshold: a dimension whose 1/Scale is within float32 rounding of 2 stretched by
      1/Scale or left linear (a reciprocal allowed 1 ULP decides "1/Scales > 2");
    - mixed dimensions: with some dimension stretched, "1/Scales > 2" read per dimension (the
      suite) or once for the operator, every dimension then stretched by max(1, 1/scale);
    - the edges, where a stretched filter reaches beyond the input: the edge repeated (the
      suite) or the taps dropped and the others renormalised;
    - the normalisation, where a stretch's weights do not sum to it: by their sum (the suite) or
      by the stretch (with dropped taps the others are renormalised by their own sum, so the
      two meet there).
    Not admissible: taps beyond the edge read as zero (the weights neither renormalised nor the
    edge repeated: "stretching the resampling filter" of LINEAR, which clamps, never reads a
    zero); weights not normalised at all; DirectML 1.15.4's measured weights (no filter
    stretched by any factor: spec-notes §10). make_axes(stretches, edges, norm) gives the
    filter's axes for a reading, None where no dimension is stretched."""
    inverse = [1.0 / float(v) for v in scales]
    suite = tuple(stretch(float(v)) for v in scales)
    near = [abs(v - THRESHOLD) <= THRESHOLD * SILENCE_REL for v in inverse]
    options: list[tuple[tuple[float, ...], str]] = [(suite, "")]
    if any(near):
        flipped = tuple((1.0 if f > 1.0 else v) if n else f
                        for f, v, n in zip(suite, inverse, near, strict=True))
        options.append((flipped, "the threshold '1/Scales > 2' decided the other way for a "
                                 "1/Scale within float32 rounding of 2"))
    for base, why in list(options):
        if any(f > 1.0 for f in base):
            whole = tuple(max(f, v, 1.0) for f, v in zip(base, inverse, strict=True))
            if whole != base:
                options.append((whole, "; ".join(w for w in (why, "'1/Scales > 2' read once "
                                                             "for the operator: every dimension "
                                                             "stretched by max(1, 1/scale)")
                                                 if w)))
    out: list[Reading] = []
    for stretches, why in options:
        axes = make_axes(stretches, "repeat", "sum") or []
        outside = any(a.stretched and reaches_outside(a) for a in axes)
        gap = any(a.stretched and np.any(normalisation_gap(a) > SILENCE_REL) for a in axes)
        for edges, norm in (("repeat", "sum"), ("repeat", "stretch"), ("drop", "sum")):
            if (edges == "drop" and not outside) or (norm == "stretch" and not gap):
                continue
            words = [why] if why else []
            words += [f"{EDGE_WORDS[edges]}, {NORM_WORDS[norm]}"] if (edges, norm) != (
                "repeat", "sum") else []
            out.append(Reading(stretches, edges, norm,
                               "; ".join(words) or "the suite's reading"))
    return out


def _reduce(values: np.ndarray, taps: np.ndarray, d: int, how: Callable[..., np.ndarray]
            ) -> np.ndarray:
    """how (np.nanmax, np.nanmin) over each output's taps along dimension d."""
    with warnings.catch_warnings():  # all-NaN slices: no finite tap there
        warnings.simplefilter("ignore", RuntimeWarning)
        return how([np.take(values, taps[:, k], axis=d) for k in range(taps.shape[1])], axis=0)


def _weighted(values: np.ndarray, taps: np.ndarray, weights: np.ndarray, d: int) -> np.ndarray:
    """sum_k weight_k * values[tap_k] along dimension d; a tap of weight 0 is not part of it."""
    shape = [-1 if k == d else 1 for k in range(values.ndim)]
    out = np.zeros((*values.shape[:d], taps.shape[0], *values.shape[d + 1:]))
    with np.errstate(invalid="ignore"):
        for k in range(taps.shape[1]):
            w = weights[:, k].reshape(shape)
            out = out + np.where(w > 0, w * np.take(values, taps[:, k], axis=d), 0.0)
    return out


def antialiased(x: np.ndarray, axes: list[Axis], half: bool = False) -> Expected:
    """The reference of an antialiased call (at least one dimension stretched), with its strict
    bound and its legal envelope (docs/tolerances.md, "Antialiased linear"). half: FLOAT16 math in
    half precision, allowed by DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION."""
    y = x.astype(np.float64)
    magnitude = np.abs(y)
    finite = np.where(np.isfinite(y), y, np.nan)
    peak, hi, lo = np.abs(finite), finite, finite
    nonfinite = (~np.isfinite(y)).astype(np.float64)
    dims = x.ndim
    # Per output element, built up dimension by dimension (broadcast shapes):
    taps_product: Numbers = 1.0  # T: the number of taps of the whole sum
    passes: Numbers = 0.0  # the separable evaluation's operation count (4 per lerp, N_d a filter)
    weights_err: Numbers = 0.0  # the weights' error, in units of the op error, times M
    strict_weights: Numbers = 0.0  # the same for one float32 pipeline (the flag changes nothing)
    weight_ops: Numbers = 0.0  # the operations computing the weights (for the denormal flushes)
    strict_coord: Numbers = 0.0  # coordinate allowance times the taps' sensitivity
    legal_coord: Numbers = 0.0
    gap: Numbers = 0.0  # the normalisation gap, relative to |y|
    n: Numbers  # the taps of the dimension
    sensitivity: Numbers
    for d, axis in enumerate(axes):
        shape = [-1 if k == d else 1 for k in range(dims)]
        taps, weights, total, count = filter_weights(axis)
        reach = axis.reach
        near, _ = _window(axis.c, axis.f + reach, closed=False)
        near = np.clip(near, 0, axis.size - 1)
        # The footprint an implementation may multiply in with weight 0: every input within
        # ceil(f) of c (ONNX's footprint; for f = 1 the two lerp taps either side of a whole c).
        foot, _ = _window(axis.c, math.ceil(axis.f) + reach, closed=True)
        foot = np.clip(foot, 0, axis.size - 1)
        peak = _reduce(peak, near, d, np.nanmax)
        hi = _reduce(hi, near, d, np.nanmax)
        lo = _reduce(lo, near, d, np.nanmin)
        nonfinite = _reduce(nonfinite, foot, d, np.nanmax)
        y = _weighted(y, taps, weights, d)
        magnitude = _weighted(magnitude, taps, weights, d)
        if axis.stretched:
            _, reached = _window(axis.c, axis.f + reach, closed=False)
            n = reached.astype(np.float64).reshape(shape)
            s = total.reshape(shape)
            passes = passes + n
            weights_err = weights_err + 8.0 * n / s + n + 1.0
            strict_weights = strict_weights + 8.0 * n / s + n + 1.0
            weight_ops = weight_ops + 5.0 * n + 1.0
            sensitivity = math.ceil(axis.f) / (axis.f * s)
            # Both normalisations are legal where they agree to rounding; elsewhere the call is
            # in a silent region (ambiguous cases), judged by the suite's reading alone.
            off = normalisation_gap(axis)
            gap = gap + np.where(off <= SILENCE_REL, off, 0.0).reshape(shape)
        else:
            n = 2.0
            passes = passes + 4.0
            weights_err = weights_err + (2.0 if half else 1.0)
            strict_weights = strict_weights + 1.0
            weight_ops = weight_ops + 1.0
            sensitivity = 1.0
        taps_product = taps_product * n
        strict_coord = strict_coord + axis.err.reshape(shape) * sensitivity
        legal_coord = legal_coord + reach.reshape(shape) * sensitivity
    count = np.maximum(dims + taps_product - 1, passes)  # K: the evaluation, any order
    op = FLOAT16_OP_ERROR if half else FLOAT32_OP_ERROR
    dtype = x.dtype
    nan_ok = None
    if np.issubdtype(dtype, np.floating):
        nan_ok = (nonfinite > 0) & ~np.isnan(y)
        nan_ok = nan_ok if nan_ok.any() else None
    with np.errstate(invalid="ignore", over="ignore"):
        spread = hi - lo
        strict_error = ((count + strict_weights) * ROUND_TO_NEAREST * magnitude
                        + strict_coord * spread + gap * magnitude)
        flush = (0.0 if half else
                 2 * (count + weight_ops) * FLOAT32_MIN_NORMAL * np.maximum(1.0, peak))
        legal_error = ((count + weights_err) * op * peak + legal_coord * spread + gap * peak
                       + flush)
    rule = ("antialiased linear (the triangle stretched by 1 / Scale where 1 / Scale > 2, "
            "weights normalised by their sum, edges repeated; notes §10)")
    return interpolated(y, dtype, strict_error, legal_error, rule, nan_ok, half)
