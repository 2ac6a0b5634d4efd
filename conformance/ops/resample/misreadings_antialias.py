"""Misreadings of RESAMPLE3's Antialiased, in the Misreading API of conformance.kit.misreading.

The page: "Antialiasing is achieved by stretching the resampling filter by a factor
max(1, 1 / scale), which means that when downsampling, more input pixels contribute to an output
pixel. This occurs when this flag is set to TRUE, and assuming the following conditions:
InterpolationMode is DML_INTERPOLATION_MODE_LINEAR; 1/Scales > 2". Each entry computes the call
through the spec's own pieces (the spec's antialias_axes and stretches with another stretch
rule, antialias.filter_weights, the reference) with one wrong reading, and reads and writes the
buffers through their strides like a backend. The resample3 package lists this catalogue as its
MISREADINGS.

ADMISSIBLE holds the other readings of the page's silent regions (docs/spec-notes.md §10), as
independent implementations run like backends: the weights divided by the stretch instead of
their sum, the taps beyond the edge dropped and the others renormalised (ONNX's exclude_outside
1), "1/Scales > 2" read once for the operator, and the threshold decided by a float32 reciprocal
compared with >=. The spec's expectation enumerates the same readings (antialias.readings); the
self-check asserts that each of these PASSes every case it covers, and that every catalogued
misreading, zeros beyond the edge included, still FAILs the open cases
(tests/judge/test_judge_readings.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from conformance.expected import Expected
from conformance.kit.misreading import Misreading
from conformance.ops import OperatorCall
from conformance.ops.resample.antialias import (
    Axis,
    antialiased,
    filter_weights,
    normalisation_gap,
    reaches_outside,
)
from conformance.ops.resample.pages import RESAMPLE3 as PAGE
from conformance.ops.resample.readings import Compute, right, runs
from conformance.ops.resample.spec import Resample3
from conformance.spec import Citation

V3 = frozenset({"RESAMPLE3"})

STRETCHED = Citation(PAGE, 'Antialiased ("Antialiasing is achieved by stretching the resampling '
                           'filter by a factor max(1, 1 / scale), which means that when '
                           'downsampling, more input pixels contribute to an output pixel")')
CONDITIONS = Citation(PAGE, 'Antialiased ("This occurs when this flag is set to TRUE, and '
                            'assuming the following conditions: InterpolationMode is '
                            'DML_INTERPOLATION_MODE_LINEAR; 1/Scales > 2")')

SPEC = Resample3()


def _any_downscale(scale: float) -> float:
    """Stretched by max(1, 1 / Scale) wherever Scale < 1, the condition 1/Scales > 2 unread."""
    return max(1.0, 1.0 / scale)


def _below_threshold(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """The spec's output with the filter stretched by _any_downscale: RESAMPLE2's where no
    dimension is stretched even so."""
    axes = SPEC.antialias_axes(call, _any_downscale)
    return right(call, x) if axes is None else antialiased(x, axes).values


def _to_type(y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A float64 result in the output type (integers rounded and clamped, as the reference)."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.rint(np.clip(y, info.min, info.max)).astype(dtype)
    return y.astype(dtype)


def _center(expected: Expected) -> np.ndarray:
    """The exact value of an antialiased expectation (a 'within' one, which has its center)."""
    if expected.center is None:
        raise ValueError(f"a '{expected.kind}' expectation has no center")
    return expected.center


def _rescaled(factor: Callable[[Axis], np.ndarray]) -> Compute:
    """The suite's antialiased output times the product over dimensions of factor(axis) per
    output index: another normalisation of the same weights."""

    def compute(call: OperatorCall, x: np.ndarray) -> np.ndarray:
        axes = SPEC.antialias_axes(call)
        if axes is None:
            return right(call, x)
        y = _center(SPEC.expected(call, {"InputTensor": x})["OutputTensor"])
        for d, axis in enumerate(axes):
            shape = [-1 if k == d else 1 for k in range(x.ndim)]
            y = y * factor(axis).reshape(shape)
        return _to_type(y, x.dtype)

    return compute


def _zero_padded(axes: list[Axis], values: np.ndarray) -> np.ndarray:
    """The suite's filter (weights divided by the whole window's sum) on values padded with
    zeros in the stretched dimensions: every tap beyond an edge reads 0."""
    pad = [int(np.ceil(a.f)) + 1 if a.stretched else 0 for a in axes]
    shifted = [replace(a, c=a.c + p, size=a.size + 2 * p) for a, p in zip(axes, pad, strict=True)]
    with np.errstate(all="ignore"):
        return _center(antialiased(np.pad(values.astype(np.float64), [(p, p) for p in pad]),
                                   shifted))


def _edges_excluded(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """Taps beyond the edge dropped and the others renormalised, in the stretched dimensions:
    the zero-padded filter on the input divided by the same filter on ones (the sums of the
    weights inside)."""
    axes = SPEC.antialias_axes(call)
    if axes is None:
        return right(call, x)
    with np.errstate(all="ignore"):
        return _to_type(_zero_padded(axes, x) / _zero_padded(axes, np.ones(x.shape)), x.dtype)


def _zero_edges(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """Taps beyond the edge read as zero, the weights still divided by the sum over the whole
    window."""
    axes = SPEC.antialias_axes(call)
    return right(call, x) if axes is None else _to_type(_zero_padded(axes, x), x.dtype)


def _per_operator(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """'1/Scales > 2' read once for the operator: where some dimension's 1/Scale is above 2,
    every dimension stretched by max(1, 1 / scale)."""
    if SPEC.antialias_axes(call) is None:
        return right(call, x)
    return _below_threshold(call, x)


def _mixed(call: OperatorCall) -> bool:
    return _antialiased(call) and _below_threshold_differs(call)


def _inclusive(scale: float) -> float:
    """The threshold as a float32 reciprocal compared with >=: a 1/Scale of 2 stretched."""
    inverse = float(np.float32(1.0) / np.float32(scale))
    return inverse if inverse >= 2.0 else 1.0


def _threshold_inclusive(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    axes = SPEC.antialias_axes(call, _inclusive)
    return right(call, x) if axes is None else antialiased(x, axes).values


def _at_threshold(call: OperatorCall) -> bool:
    a = call.attributes
    return (bool(a["Antialiased"]) and a["InterpolationMode"] == "LINEAR"
            and SPEC.stretches(call, _inclusive) != SPEC.stretches(call))


def _antialiased(call: OperatorCall) -> bool:
    return SPEC.antialias_axes(call) is not None


def _below_threshold_differs(call: OperatorCall) -> bool:
    a = call.attributes
    return (bool(a["Antialiased"]) and a["InterpolationMode"] == "LINEAR"
            and SPEC.stretches(call, _any_downscale) != SPEC.stretches(call))


def _gap(call: OperatorCall) -> bool:
    return any(a.stretched and np.any(normalisation_gap(a) > 0)
               for a in SPEC.antialias_axes(call) or [])


def _reaches_outside(call: OperatorCall) -> bool:
    return any(a.stretched and reaches_outside(a) for a in SPEC.antialias_axes(call) or [])


def _entry(key: str, reading: str, contradicts: Citation, compute: Compute,
           applies: Callable[[OperatorCall], bool]) -> Misreading:
    return Misreading(key=key, reading=reading, operators=V3, contradicts=contradicts,
                      run=runs(compute), applies=applies)


MISREADINGS = (
    _entry("antialias-ignored",
           "Antialiased ignored: LINEAR interpolating the two nearest inputs per dimension "
           "where 1/Scale > 2 asks for the stretched filter",
           STRETCHED,
           lambda call, x: right(replace(call, attributes={**call.attributes,
                                                            "Antialiased": False}), x),
           _antialiased),
    _entry("antialias-below-threshold",
           "the filter stretched by 1/Scale for every Scale below 1, also where 1/Scale <= 2",
           CONDITIONS,
           _below_threshold,
           _below_threshold_differs),
    _entry("antialias-unnormalised",
           "the stretched filter's weights 1 - |i - c| / f summed without dividing by their sum "
           "(about f times the value)",
           STRETCHED, _rescaled(lambda a: filter_weights(a)[2]), _antialiased),
    _entry("antialias-zero-edges",
           "taps beyond the input's edge read as zero, the weights still divided by the whole "
           "window's sum (neither the edge repeated nor the taps dropped and renormalised)",
           STRETCHED, _zero_edges, _reaches_outside),
)

#: The admissible readings of the page's silent regions besides the suite's (notes §10), each
#: where it can differ from the suite's; `contradicts` cites the region it reads.
SILENT = Citation("NOTES", "10")
ADMISSIBLE = (
    _entry("antialias-divided-by-stretch",
           "the stretched filter's weights divided by the stretch f instead of their sum",
           SILENT, _rescaled(lambda a: filter_weights(a)[2] / a.f), _gap),
    _entry("antialias-edges-excluded",
           "taps beyond the input's edge dropped and the other weights renormalised (ONNX's "
           "exclude_outside) instead of repeating the edge element",
           SILENT, _edges_excluded, _reaches_outside),
    _entry("antialias-stretch-per-operator",
           "'1/Scales > 2' read once for the operator: with some dimension's 1/Scale above 2, "
           "every dimension stretched by max(1, 1 / scale)",
           SILENT, _per_operator, _mixed),
    _entry("antialias-threshold-inclusive",
           "the threshold decided by a float32 reciprocal compared with >=: a 1/Scale of 2 "
           "stretched",
           SILENT, _threshold_inclusive, _at_threshold),
)
