"""Misreadings of RESAMPLE and RESAMPLE1 (NOTES §4 is the suite's reading).

The pages say, in the RESAMPLE1 page's words:
- the coordinate relation "OutputTensorX = (InputTensorX + InputPixelOffset) * Scale +
  OutputPixelOffset" (the Description), read backwards as c = (o - OutputPixelOffset) / Scale -
  InputPixelOffset;
- Scales: "the scales don't need to be exactly OutputSize / InputSize ... if the input after
  scaling is smaller than the output bound, the output edges are clamped";
- InterpolationMode: nearest "chooses the input element nearest to the corresponding pixel
  center"; linear is "the weighted average of the 2 nearest neighboring input elements per
  dimension ... on a total of 16 input elements";
- Remarks: "When the InputPixelOffsets are set to 0.5, and the OutputPixelOffsets are set to -0.5,
  this operator is equivalent to DML_RESAMPLE_OPERATOR_DESC".

RESAMPLE2 and RESAMPLE3 repeat the coordinate relation (notes §10): every reading below but
nearest's floor and ceil names them too, nearest rounding as the call's RoundingDirection says,
none covering RESAMPLE3's antialiased filter (misreadings_antialias.py has the filter's).

Each entry is a whole implementation with one wrong reading, through the spec's own pieces
(coordinates(), linear_taps(), nearest_index(), the reference) with patched attributes,
coordinates or input, reading and writing through the strides; calls it does not touch are
computed as the spec says; `applies` says from the call alone whether it can differ.

Not listed, being the spec's reading in other words: rounding the nearest coordinate before
clamping it (the same index); clamping the two linear taps instead of the coordinate (both on
the edge element). Nor, the spec leaving it open, how LINEAR rounds to INT8/UINT8 (NOTES §4
accepts either integer neighbour).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from conformance import ops
from conformance.kit.misreading import Misreading
from conformance.ops import OperatorCall
from conformance.ops.base import float32
from conformance.ops.resample.pages import MODE_PAGE
from conformance.ops.resample.pages import RESAMPLE1 as PAGE
from conformance.ops.resample.readings import LINEAR, NEAREST, Compute, right, runs, with_attributes
from conformance.ops.resample.readings import mode as _mode
from conformance.ops.resample.sampling import (
    Coordinates,
    NearestRounding,
    coordinates,
    linear_taps,
    nearest_index,
    resampled,
    unclamped,
)
from conformance.ops.resample.spec import ResampleFamily
from conformance.spec import Citation
from conformance.tensors import DataType

BOTH = frozenset({"RESAMPLE", "RESAMPLE1"})
V1 = frozenset({"RESAMPLE1"})
V0 = frozenset({"RESAMPLE"})
#: The whole family (RESAMPLE2 and RESAMPLE3 repeat RESAMPLE1's coordinate relation, notes §10).
FAMILY = frozenset({"RESAMPLE", "RESAMPLE1", "RESAMPLE2", "RESAMPLE3"})
WITH_OFFSETS = frozenset({"RESAMPLE1", "RESAMPLE2", "RESAMPLE3"})

FORMULA = Citation(PAGE, 'Description ("OutputTensorX = (InputTensorX + InputPixelOffset) * '
                         'Scale + OutputPixelOffset")')
NEAREST_CENTER = Citation(PAGE, 'InterpolationMode ("chooses the input element nearest to the '
                                'corresponding pixel center")')
SIXTEEN_TAPS = Citation(PAGE, 'InterpolationMode ("Since all 4 dimensions can be resampled, the '
                              'weighted average is computed on a total of 16 input elements")')
MULTI_DIMENSIONAL = Citation(PAGE, 'Description ("The operator supports interpolation across '
                                   'multiple dimensions, not just 2D. So you can keep the same '
                                   'spatial size, but interpolate across channels or across '
                                   'batches")')
WEIGHTED = Citation(PAGE, 'InterpolationMode ("the weighted average of the 2 nearest '
                          'neighboring input elements per dimension")')
EDGES_CLAMPED = Citation(PAGE, 'Scales ("if the input after scaling is smaller than the output '
                               'bound, the output edges are clamped")')
NOT_THE_RATIO = Citation(PAGE, 'Scales ("the scales don\'t need to be exactly OutputSize / '
                               'InputSize")')
SCALE_UP = Citation(PAGE, 'Scales ("scales > 1 scale up the image and scales < 1 scale down '
                          'the image for that dimension")')
PER_DIMENSION = Citation(PAGE, 'DimensionCount ("The number of values in the arrays that '
                               'Scales, InputPixelOffsets, and OutputPixelOffsets point to. This '
                               'value must match the dimension count of InputTensor")')
REMARKS = Citation(PAGE, 'Remarks ("When the InputPixelOffsets are set to 0.5, and the '
                         'OutputPixelOffsets are set to -0.5, this operator is equivalent to '
                         'DML_RESAMPLE_OPERATOR_DESC")')

#: One dimension's parameters: output size, input size, Scale, InputPixelOffset,
#: OutputPixelOffset (the FLOAT attributes as the float32 values the operator receives; RESAMPLE's
#: implied offsets 0.5 / -0.5).
Params = tuple[int, int, float, float, float]
#: One dimension's clamped coordinates and their float32 allowance, as coordinates() returns them.
Axis = Coordinates


# -- the spec's pieces ---------------------------------------------------------------------------

def _rounding(call: OperatorCall) -> NearestRounding:
    return cast(ResampleFamily, ops.get(call.operator)).nearest_rounding(call)


def _index(call: OperatorCall, c: np.ndarray) -> np.ndarray:
    """The call's nearest index of c: floor(c + 0.5), or RoundingDirection's floor or ceil."""
    rounding = _rounding(call)
    return nearest_index(c + rounding.shift, rounding.halves_up)


def _interpolate(call: OperatorCall, x: np.ndarray, axes: list[Axis]) -> np.ndarray:
    """The spec's interpolation (call's mode; nearest by the call's rounding) of x at the given
    coordinates; only its values are used, never its bounds (no allowances)."""
    return resampled(x, _mode(call), axes, [np.zeros_like(c) for c, _ in axes],
                     _rounding(call)).values


def _filtered(call: OperatorCall) -> bool:
    """Whether the call is RESAMPLE3's antialiased filter (no reading here computes it)."""
    return cast(ResampleFamily, ops.get(call.operator)).antialias_axes(call) is not None


def _params(call: OperatorCall) -> list[Params]:
    in_off, out_off = cast(ResampleFamily, ops.get(call.operator)).offsets(call)
    return list(zip(call.tensors["OutputTensor"].sizes, call.tensors["InputTensor"].sizes,
                    float32(call.attributes["Scales"]), in_off, out_off, strict=True))


def _axes(call: OperatorCall) -> list[Axis]:
    """The spec's clamped coordinates of every dimension."""
    return [coordinates(*p) for p in _params(call)]


def _unclamped(p: Params) -> np.ndarray:
    """The page's coordinate before the edges are clamped: c = (o - OutputPixelOffset) / Scale -
    InputPixelOffset (NOTES §4), for readings that skip the clamp."""
    out_size, _, scale, in_off, out_off = p
    return unclamped(out_size, scale, in_off, out_off)


def _in_mode(mode: str, compute: Compute) -> Compute:
    """compute for calls in mode; the spec's output for the other mode."""
    return lambda call, x: compute(call, x) if _mode(call) == mode else right(call, x)


def _differs(a: list[Axis], b: list[Axis], call: OperatorCall) -> bool:
    """Whether two sets of coordinates select other elements (nearest, by the call's rounding)
    or weights (linear)."""
    for (ca, _), (cb, _) in zip(a, b, strict=True):
        if _mode(call) == NEAREST:
            if np.any(_index(call, ca) != _index(call, cb)):
                return True
        elif np.any(np.abs(ca - cb) > 1e-6):
            return True
    return False


# -- readings of the coordinate ----------------------------------------------------------------

def _parameters(change: Callable[[list[Params]], list[Params]]) -> Compute:
    """The spec with other per-dimension parameters (sizes, scales, offsets)."""
    return lambda call, x: _interpolate(call, x, [coordinates(*p) for p in change(_params(call))])


def _parameters_differ(change: Callable[[list[Params]], list[Params]]
                       ) -> Callable[[OperatorCall], bool]:
    def applies(call: OperatorCall) -> bool:
        return _differs([coordinates(*p) for p in change(_params(call))], _axes(call), call)
    return applies


def _asymmetric(params: list[Params]) -> list[Params]:
    return [(o, i, s, 0.0, 0.0) for o, i, s, _, _ in params]


def _half_pixel(params: list[Params]) -> list[Params]:
    return [(o, i, s, 0.5, -0.5) for o, i, s, _, _ in params]


def _swapped(params: list[Params]) -> list[Params]:
    return [(o, i, s, b, a) for o, i, s, a, b in params]


def _negated(params: list[Params]) -> list[Params]:
    return [(o, i, s, -a, -b) for o, i, s, a, b in params]


def _unscaled(params: list[Params]) -> list[Params]:
    """c = o / Scale - OutputPixelOffset - InputPixelOffset: (o - 0) / s - (a + b)."""
    return [(o, i, s, a + b, 0.0) for o, i, s, a, b in params]


def _both_scaled(params: list[Params]) -> list[Params]:
    """c = (o - OutputPixelOffset - InputPixelOffset) / Scale."""
    return [(o, i, s, 0.0, a + b) for o, i, s, a, b in params]


def _inverted(params: list[Params]) -> list[Params]:
    """c = (o - OutputPixelOffset) * Scale - InputPixelOffset."""
    return [(o, i, 1.0 / s, a, b) for o, i, s, a, b in params]


def _size_ratio(params: list[Params]) -> list[Params]:
    """Scale = OutputSize / InputSize, computed in float32 as an implementation would."""
    return [(o, i, float(np.float32(o) / np.float32(i)), a, b) for o, i, _, a, b in params]


def _reversed(params: list[Params]) -> list[Params]:
    """Scales and offsets applied in reverse dimension order (the sizes stay)."""
    rest = [(s, a, b) for _, _, s, a, b in reversed(params)]
    return [(o, i, *r) for (o, i, _, _, _), r in zip(params, rest, strict=True)]


def _align_corners_axes(call: OperatorCall) -> list[Axis]:
    """c = o * (InputSize - 1) / (OutputSize - 1): the corners of input and output aligned,
    the scale and offsets unused."""
    out = []
    for o, i, _, _, _ in _params(call):
        c = np.arange(o, dtype=np.float64) * (i - 1) / (o - 1) if o > 1 else np.zeros(o)
        out.append((np.clip(c, 0.0, i - 1.0), np.zeros(o)))
    return out


def _align_corners(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    return _interpolate(call, x, _align_corners_axes(call))


# -- readings of nearest -------------------------------------------------------------------------

def _nearest_by(choose: Callable[[np.ndarray], np.ndarray]) -> tuple[Compute,
                                                                     Callable[[OperatorCall],
                                                                              bool]]:
    """Nearest picking choose(c) (an integer coordinate, which the spec's nearest_index keeps)
    instead of floor(c + 0.5); the compute and its applies."""

    def chosen(call: OperatorCall) -> list[Axis]:
        return [(choose(c), err) for c, err in _axes(call)]

    def compute(call: OperatorCall, x: np.ndarray) -> np.ndarray:
        return _interpolate(call, x, chosen(call))

    def applies(call: OperatorCall) -> bool:
        return _mode(call) == NEAREST and _differs(chosen(call), _axes(call), call)

    return _in_mode(NEAREST, compute), applies


_FLOOR = _nearest_by(np.floor)
_CEIL = _nearest_by(np.ceil)


# -- readings of the edges -----------------------------------------------------------------------

def _outside(call: OperatorCall) -> bool:
    """Whether some output reads beyond the input's edge before clamping: for linear a tap
    outside [0, InputSize - 1] with a nonzero weight, for nearest an index outside it."""
    for p in _params(call):
        c, size = _unclamped(p), p[1]
        if _mode(call) == NEAREST:
            index = _index(call, c)
            if np.any((index < 0) | (index > size - 1)):
                return True
        elif np.any((c < 0) | (c > size - 1)):
            return True
    return False


def _zero_padded(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """Outside the input reads 0 instead of the edge element: the spec on the input padded with
    one zero on each side of every dimension, at the coordinate shifted by that zero (clamping
    then lands on the zeros, and any tap beyond the edge reads 0)."""
    padded = np.pad(x, [(1, 1)] * x.ndim)
    return _interpolate(call, padded, [coordinates(o, i + 2, s, a - 1.0, b)
                                       for o, i, s, a, b in _params(call)])


def _second_tap_unclamped(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """i0 = floor(c) clamped to the input, i1 = i0 + 1 not clamped (beyond the last element it
    reads 0, as robust buffer access does), t = c - floor(c) of the unclamped coordinate: the
    spec's interpolation on the input with one zero appended to every dimension."""
    padded = np.pad(x, [(0, 1)] * x.ndim)
    axes = []
    for p in _params(call):
        c = _unclamped(p)
        base = np.floor(c)
        axes.append((np.clip(base, 0, p[1] - 1) + (c - base), np.zeros(c.size)))
    return _interpolate(call, padded, axes)


def _second_tap_applies(call: OperatorCall) -> bool:
    if _mode(call) != LINEAR:
        return False
    for p in _params(call):
        c = _unclamped(p)
        if np.any(((c < 0) | (c > p[1] - 1)) & (c != np.floor(c))):
            return True
    return False


# -- readings of linear --------------------------------------------------------------------------

def _weights_swapped(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """(1 - t) on the second tap and t on the first: the spec at the mirrored coordinate
    i0 + (1 - t), kept inside the input."""
    axes = []
    for (c, err), size in zip(_axes(call), x.shape, strict=True):
        i0, _, t = linear_taps(c, size)
        axes.append((np.minimum(i0 + (1.0 - t), size - 1.0), err))
    return _interpolate(call, x, axes)


def _weights_swapped_applies(call: OperatorCall) -> bool:
    if _mode(call) != LINEAR:
        return False
    for (c, _), size in zip(_axes(call), call.tensors["InputTensor"].sizes, strict=True):
        i0, i1, t = linear_taps(c, size)
        if np.any((i1 != i0) & (t != 0.5)):
            return True
    return False


def _last_two_only(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """Linear across the last two dimensions only; the others pick their nearest element."""
    axes = _axes(call)
    outer = len(axes) - 2
    return _interpolate(call, x, [(nearest_index(c).astype(np.float64), err) if d < outer
                                  else (c, err) for d, (c, err) in enumerate(axes)])


def _last_two_applies(call: OperatorCall) -> bool:
    axes = _axes(call)
    return _mode(call) == LINEAR and any(np.any(c != np.floor(c)) for c, _ in axes[:-2])


def _outer_unscaled_axes(call: OperatorCall) -> list[Axis]:
    """The spec's coordinates for the last two dimensions; every other one reads the input at
    the output's own index (clamped), its Scale and offsets unused."""
    axes = _axes(call)
    outer = len(axes) - 2
    sizes = call.tensors["InputTensor"].sizes
    return [(np.clip(np.arange(c.size, dtype=np.float64), 0, sizes[d] - 1.0), err)
            if d < outer else (c, err) for d, (c, err) in enumerate(axes)]


def _outer_unscaled(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    return _interpolate(call, x, _outer_unscaled_axes(call))


def _other_mode(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    other = LINEAR if _mode(call) == NEAREST else NEAREST
    return right(with_attributes(call, InterpolationMode=other), x)


def _fractional(call: OperatorCall) -> bool:
    return any(np.any(c != np.floor(c)) for c, _ in _axes(call))


# -- readings of the values ----------------------------------------------------------------------

def _through_float16(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """FLOAT32 values held as float16 on the way in and out."""
    if x.dtype != np.float32:
        return right(call, x)
    return right(call, x.astype(np.float16).astype(np.float32)).astype(np.float16).astype(
        np.float32)


OTHER_SIGNEDNESS = {np.dtype(np.int8): np.dtype(np.uint8), np.dtype(np.uint8): np.dtype(np.int8)}


def _other_signedness(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """INT8 bytes interpolated as UINT8 and the reverse (the result's bytes written back)."""
    if _mode(call) != LINEAR or x.dtype not in OTHER_SIGNEDNESS:
        return right(call, x)
    return right(call, x.view(OTHER_SIGNEDNESS[x.dtype])).view(x.dtype)


# -- the catalogue -------------------------------------------------------------------------------

def _entry(key: str, reading: str, operators: frozenset[str], contradicts: Citation,
           compute: Compute, applies: Callable[[OperatorCall], bool], filtered_too: bool = False,
           **kw: Any) -> Misreading:
    """An entry; on RESAMPLE3's antialiased filter the spec, covering nothing, unless
    filtered_too (a reading through the operator's own reference: data types, modes)."""
    if filtered_too:
        return Misreading(key=key, reading=reading, operators=operators,
                          contradicts=contradicts, run=runs(compute), applies=applies, **kw)

    def run(call: OperatorCall, x: np.ndarray) -> np.ndarray:
        return right(call, x) if _filtered(call) else compute(call, x)

    return Misreading(key=key, reading=reading, operators=operators, contradicts=contradicts,
                      run=runs(run), applies=lambda call: not _filtered(call) and applies(call),
                      **kw)


def _offsets_entry(key: str, reading: str, change: Callable[[list[Params]], list[Params]],
                   operators: frozenset[str] = WITH_OFFSETS, contradicts: Citation = FORMULA
                   ) -> Misreading:
    return _entry(key, reading, operators, contradicts, _parameters(change),
                  _parameters_differ(change))


MISREADINGS = (
    _entry("nearest-floor",
           "nearest taking floor(c), the input element at or before the coordinate, instead of "
           "the nearest one floor(c + 0.5)",
           BOTH, NEAREST_CENTER, _FLOOR[0], _FLOOR[1]),
    _entry("nearest-ceil",
           "nearest taking ceil(c), the input element at or after the coordinate, instead of "
           "the nearest one floor(c + 0.5)",
           BOTH, NEAREST_CENTER, _CEIL[0], _CEIL[1]),
    _offsets_entry("asymmetric",
                   "RESAMPLE1 with InputPixelOffsets and OutputPixelOffsets taken as 0 (the "
                   "'asymmetric' coordinate c = o / Scale)",
                   _asymmetric),
    _offsets_entry("half-pixel-always",
                   "RESAMPLE1 with the given offsets ignored and 0.5 / -0.5 used (the "
                   "half-pixel coordinate c = (o + 0.5) / Scale - 0.5)",
                   _half_pixel),
    _offsets_entry("offsets-unscaled",
                   "the OutputPixelOffset applied in input space, not divided by the scale: "
                   "c = o / Scale - OutputPixelOffset - InputPixelOffset",
                   _unscaled),
    _offsets_entry("offsets-both-scaled",
                   "the InputPixelOffset divided by the scale too: c = (o - OutputPixelOffset - "
                   "InputPixelOffset) / Scale",
                   _both_scaled),
    _offsets_entry("offsets-swapped",
                   "InputPixelOffsets and OutputPixelOffsets exchanged: c = (o - "
                   "InputPixelOffset) / Scale - OutputPixelOffset",
                   _swapped),
    # For RESAMPLE the swapped implied offsets are the negated ones, so only this entry covers it.
    _offsets_entry("offsets-negated",
                   "both offsets with the wrong sign: c = (o + OutputPixelOffset) / Scale + "
                   "InputPixelOffset (for RESAMPLE: c = (o - 0.5) / Scale + 0.5)",
                   _negated, FAMILY),
    _offsets_entry("v0-without-offsets",
                   "RESAMPLE without its implied InputPixelOffsets 0.5 and OutputPixelOffsets "
                   "-0.5: c = o / Scale",
                   _asymmetric, V0, REMARKS),
    _offsets_entry("scale-inverted",
                   "the coordinate multiplied by the Scale instead of divided: c = (o - "
                   "OutputPixelOffset) * Scale - InputPixelOffset",
                   _inverted, FAMILY, SCALE_UP),
    _offsets_entry("scale-from-sizes",
                   "the scale taken from the sizes (OutputSize / InputSize) instead of Scales",
                   _size_ratio, FAMILY, NOT_THE_RATIO),
    _offsets_entry("kept-size-unscaled",
                   "a dimension that keeps its size left unscaled (Scale 1 there, the resize "
                   "skipped as an identity), the given Scales elsewhere",
                   lambda ps: [(o, i, 1.0 if o == i else s, a, b) for o, i, s, a, b in ps],
                   FAMILY, NOT_THE_RATIO),
    _offsets_entry("dimensions-reversed",
                   "Scales and pixel offsets applied in reverse dimension order (the first "
                   "value to the last dimension)",
                   _reversed, FAMILY, PER_DIMENSION),
    _entry("align-corners",
           "align-corners coordinates c = o * (InputSize - 1) / (OutputSize - 1), Scales and "
           "offsets unused",
           FAMILY, FORMULA, _align_corners,
           lambda call: _differs(_align_corners_axes(call), _axes(call), call)),
    _entry("zero-padding",
           "zeros outside the input instead of the clamped edge: linear taps beyond the edge "
           "read 0, and a nearest index beyond it reads 0",
           FAMILY, EDGES_CLAMPED, _zero_padded, _outside),
    _entry("second-tap-unclamped",
           "linear with the coordinate unclamped and only the first tap clamped: i0 = "
           "clamp(floor(c)), i1 = i0 + 1 reading 0 beyond the last element, t = c - floor(c)",
           FAMILY, EDGES_CLAMPED, _in_mode(LINEAR, _second_tap_unclamped), _second_tap_applies),
    _entry("linear-weights-swapped",
           "linear weights exchanged: t on the first tap and 1 - t on the second",
           FAMILY, WEIGHTED, _in_mode(LINEAR, _weights_swapped), _weights_swapped_applies),
    _entry("linear-last-two-dimensions",
           "linear across the last two dimensions only (bilinear), the nearest element along "
           "the others",
           FAMILY, SIXTEEN_TAPS, _in_mode(LINEAR, _last_two_only), _last_two_applies),
    _entry("outer-dimensions-unscaled",
           "a 2-D resampler: only the last two dimensions scaled, every other one read at the "
           "output's own index (its Scale and offsets ignored)",
           FAMILY, MULTI_DIMENSIONAL, _outer_unscaled,
           lambda call: _differs(_outer_unscaled_axes(call), _axes(call), call)),
    _entry("modes-swapped",
           "the other InterpolationMode: NEAREST_NEIGHBOR computed as LINEAR and LINEAR as "
           "NEAREST_NEIGHBOR (the enum values 0 and 1 exchanged)",
           FAMILY, Citation(MODE_PAGE, "Constants"), _other_mode, _fractional,
           filtered_too=True),
    _entry("through-float16",
           "FLOAT32 values moved through float16 (input and output rounded to half precision)",
           FAMILY, Citation("DML_TENSOR_DATA_TYPE",
                          'DML_TENSOR_DATA_TYPE_FLOAT32 ("a 32-bit floating-point data type")'),
           _through_float16, lambda call: True, data_types=frozenset({DataType.FLOAT32}),
           filtered_too=True),
    _entry("other-signedness",
           "INT8 interpolated as UINT8 and UINT8 as INT8 (the bytes read with the other "
           "signedness)",
           FAMILY, Citation("DML_TENSOR_DATA_TYPE",
                          'DML_TENSOR_DATA_TYPE_INT8 ("an 8-bit signed integer data type")'),
           _other_signedness, lambda call: _mode(call) == LINEAR,
           data_types=frozenset({DataType.INT8, DataType.UINT8}), filtered_too=True),
)
