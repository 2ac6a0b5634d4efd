"""Misreadings of RESAMPLE3's Antialiased, in the Misreading API of conformance.kit.misreading.

The page: "Antialiasing is achieved by stretching the resampling filter by a factor
max(1, 1 / scale), which means that when downsampling, more input pixels contribute to an output
pixel. This occurs when this flag is set to TRUE, and assuming the following conditions:
InterpolationMode is DML_INTERPOLATION_MODE_LINEAR; 1/Scales > 2". Each entry computes the call
through the spec's own pieces (the spec's antialias_axes and stretches with another stretch
rule, antialias.filter_weights, the reference) with one wrong reading, and reads and writes the
buffers through their strides like a backend. The resample3 package lists this catalogue as its
MISREADINGS.

Two entries differ from the suite only where the page is silent (docs/spec-notes.md §10), so no
mandatory case can fail them (mandatory=False: diagnosed, not self-check targets): the weights
divided by the stretch instead of their sum, and the taps beyond the edge dropped instead of
repeating the edge element (ONNX's exclude_outside 1).
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


def _edges_excluded(call: OperatorCall, x: np.ndarray) -> np.ndarray:
    """Taps beyond the edge dropped and the others renormalised, in the stretched dimensions:
    the suite's filter on the input padded with zeros there, divided by the same filter on a
    mask of ones padded alike (the sums of the weights inside)."""
    axes = SPEC.antialias_axes(call)
    if axes is None:
        return right(call, x)
    pad = [int(np.ceil(a.f)) + 1 if a.stretched else 0 for a in axes]
    shifted = [replace(a, c=a.c + p, size=a.size + 2 * p) for a, p in zip(axes, pad, strict=True)]
    with np.errstate(all="ignore"):
        inside = _center(antialiased(np.pad(np.ones(x.shape), [(p, p) for p in pad]), shifted))
        total = _center(antialiased(np.pad(x.astype(np.float64), [(p, p) for p in pad]),
                                    shifted))
    return _to_type(total / inside, x.dtype)


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
           applies: Callable[[OperatorCall], bool], mandatory: bool = True) -> Misreading:
    return Misreading(key=key, reading=reading, operators=V3, contradicts=contradicts,
                      run=runs(compute), applies=applies, mandatory=mandatory)


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
    _entry("antialias-divided-by-stretch",
           "the stretched filter's weights divided by the stretch f instead of their sum",
           STRETCHED, _rescaled(lambda a: filter_weights(a)[2] / a.f), _gap, mandatory=False),
    _entry("antialias-edges-excluded",
           "taps beyond the input's edge dropped and the other weights renormalised (ONNX's "
           "exclude_outside) instead of repeating the edge element",
           STRETCHED, _edges_excluded, _reaches_outside, mandatory=False),
)
