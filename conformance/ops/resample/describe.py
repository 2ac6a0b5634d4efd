"""What the operator reference (`dmlconf describe`, docs/operators/RESAMPLE*.md) says of the
resample family beyond its specs' data: the formula, sentence by sentence with its citations
(each following from what the operator's desc states), what the tensors hold, and the example
backend's kernels, plain NumPy built on the reference's own coordinate and tap functions
(sampling.py), which tests/cli/test_cli_describe.py runs against the operators' cases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from conformance.ops.base import ExampleKernel, Statement
from conformance.ops.resample.pages import DIRECTION_PAGE, RESAMPLE1, RESAMPLE2
from conformance.ops.resample.sampling import linear_taps, unclamped
from conformance.spec import Citation, notes


class Stated(Protocol):
    """What the formula asks of a resample spec: its page and the members its desc states."""

    page: str

    def states(self, attribute: str) -> bool: ...


TENSORS = {
    "InputTensor": "the tensor to resample",
    "OutputTensor": "the resampled tensor: the input's dimension count and any Sizes (the Scales "
                    "need not give them: beyond the scaled input the output crops, below it the "
                    "coordinates clamp)",
}
COUNT = ("the number of Scales (and of each offset array the desc states), which must equal the "
         "dimension count of InputTensor and OutputTensor")


def formula(spec: Stated) -> list[Statement]:
    """The family's formula as the operator's desc states it (offsets stated or implied, nearest
    rounded by a RoundingDirection or floor(c + 0.5), the antialiased filter)."""
    if spec.states("InputPixelOffsets"):
        out = [Statement(
            "Along each dimension, output index o reads the input coordinate c = (o - "
            "OutputPixelOffset) / Scale - InputPixelOffset (the page's OutputX = (InputX + "
            "InputPixelOffset) * Scale + OutputPixelOffset solved for InputX), clamped to "
            "[0, InputSize - 1].", notes("4"))]
    else:
        out = [Statement(
            "Along each dimension, output index o reads the input coordinate c = (o + 0.5) / "
            "Scale - 0.5, clamped to [0, InputSize - 1]: RESAMPLE1's coordinate with the "
            "InputPixelOffsets 0.5 and OutputPixelOffsets -0.5 that RESAMPLE implies.",
            Citation(RESAMPLE1, "Remarks"))]
    out.append(Statement(
        "The FLOAT attributes are the float32 values the operator receives: round a Python "
        "float with numpy.float32 before computing with it.", notes("4")))
    if spec.states("RoundingDirection"):
        out.append(Statement(
            "NEAREST_NEIGHBOR: the input element at floor(c) (RoundingDirection DECREASING) or "
            "ceil(c) (INCREASING), its bits unchanged; where c is within float32 rounding of a "
            "whole number, either neighbour is accepted.", Citation(DIRECTION_PAGE, "Constants")))
        out.append(Statement(
            "LINEAR ignores RoundingDirection: it is RESAMPLE1's LINEAR (RESAMPLE2's Remarks: "
            "equivalent to DML_RESAMPLE1_OPERATOR_DESC when InterpolationMode is LINEAR).",
            Citation(RESAMPLE2, "Remarks")))
    else:
        out.append(Statement(
            "NEAREST_NEIGHBOR: the input element at floor(c + 0.5) (halves round up), its bits "
            "unchanged; where c is at, or within float32 rounding of, a half, either neighbour "
            "is accepted (the pages are ambiguous at ties).", notes("4")))
    out.append(Statement(
        "LINEAR: per dimension i0 = floor(c), i1 = min(i0 + 1, InputSize - 1), t = c - i0; the "
        "output is the sum over the 2^D taps of the input times the product of their weights "
        "(1 - t for i0, t for i1), computed exactly and rounded once to the output type; an "
        "INT8 or UINT8 output may be either integer neighbour of the exact value.", notes("4")))
    if spec.states("Antialiased"):
        out.append(Statement(
            "Antialiased TRUE with LINEAR: in each dimension whose 1 / Scale (as float32) is "
            "above 2 the filter is stretched by f = 1 / Scale: every input i within f of the "
            "unclamped coordinate weighs 1 - |i - c| / f, the weights normalised by their sum, "
            "a tap beyond the edges reading the edge element; the dimensions' weights multiply. "
            "Otherwise (Antialiased FALSE, NEAREST_NEIGHBOR, no 1 / Scale above 2) the output "
            "is RESAMPLE2's.", Citation(spec.page, "Antialiased")))
        out.append(Statement(
            "Where the page leaves an antialiased output open (the normalisation and the edges "
            "it does not state), the case is marked ambiguous: it is reported apart and decides "
            "no verdict.", notes("10")))
    out.append(Statement(
        "Judged: NEAREST_NEIGHBOR bit for bit (a NaN may come back as any NaN); LINEAR against "
        "the strict float32 bound (outside it: QUALITY_WARNING) and the legal envelope of the "
        "Direct3D floating-point rules (outside it: FAIL), docs/tolerances.md.", notes("7")))
    return out


# -- the example backend's kernels ----------------------------------------------------------------
def sample(x: np.ndarray, sizes: Sequence[int], mode: str, scales: Sequence[float],
           in_offsets: Sequence[float], out_offsets: Sequence[float],
           rounding: str = "HALF_UP") -> np.ndarray:
    """x resampled to `sizes`. Per dimension, each output index's input coordinate, clamped;
    NEAREST_NEIGHBOR takes the element at floor(c + 0.5) (HALF_UP), floor(c) (DECREASING) or
    ceil(c) (INCREASING), bits unchanged; LINEAR weighs the two taps around c in float64 and
    rounds once to x's type. The FLOAT attributes are taken as float32, as the operator
    receives them."""
    nearest = mode == "NEAREST_NEIGHBOR"
    y = x if nearest else x.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        for d, size in enumerate(sizes):
            scale, p, q = (float(np.float32(v[d])) for v in (scales, in_offsets, out_offsets))
            c = np.clip(unclamped(size, scale, p, q), 0.0, x.shape[d] - 1.0)
            if nearest:
                index = {"DECREASING": np.floor, "INCREASING": np.ceil}.get(
                    rounding, lambda c: np.floor(c + 0.5))(c)
                y = np.take(y, index.astype(np.int64), axis=d)
            else:
                i0, i1, t = linear_taps(c, x.shape[d])
                t = t.reshape([-1 if k == d else 1 for k in range(x.ndim)])
                y = np.take(y, i0, axis=d) * (1 - t) + np.take(y, i1, axis=d) * t
        if nearest:
            return y
        if np.issubdtype(x.dtype, np.integer):
            return np.rint(y).astype(x.dtype)
        return y.astype(x.dtype)


def resample(x: np.ndarray, sizes: Sequence[int], attributes: Mapping[str, Any]) -> np.ndarray:
    """RESAMPLE: the offsets 0.5 and -0.5 it implies."""
    n = len(attributes["Scales"])
    return sample(x, sizes, attributes["InterpolationMode"], attributes["Scales"],
                  [0.5] * n, [-0.5] * n)


def resample1(x: np.ndarray, sizes: Sequence[int], attributes: Mapping[str, Any]) -> np.ndarray:
    """RESAMPLE1: the offsets the call states."""
    a = attributes
    return sample(x, sizes, a["InterpolationMode"], a["Scales"], a["InputPixelOffsets"],
                  a["OutputPixelOffsets"])


def rounded(x: np.ndarray, sizes: Sequence[int], attributes: Mapping[str, Any]) -> np.ndarray:
    """RESAMPLE2 (and RESAMPLE3 without its antialiased filter): nearest rounded in the call's
    RoundingDirection."""
    a = attributes
    return sample(x, sizes, a["InterpolationMode"], a["Scales"], a["InputPixelOffsets"],
                  a["OutputPixelOffsets"], a["RoundingDirection"])


def antialiasing(attributes: Mapping[str, Any]) -> str | None:
    """Why the example declines a call (its unsupported_reason): the antialiased filter, which
    it does not implement, applies (Antialiased TRUE, LINEAR, some 1 / Scale above 2)."""
    with np.errstate(divide="ignore", over="ignore"):
        stretches = 1.0 / np.float32(attributes["Scales"]).astype(np.float64)
    if (attributes["Antialiased"] and attributes["InterpolationMode"] == "LINEAR"
            and any(stretches > 2.0)):
        return "this example does not implement the antialiased filter"
    return None


KERNELS = {
    "RESAMPLE": ExampleKernel(resample, (unclamped, linear_taps, sample)),
    "RESAMPLE1": ExampleKernel(resample1, (unclamped, linear_taps, sample)),
    "RESAMPLE2": ExampleKernel(rounded, (unclamped, linear_taps, sample)),
    "RESAMPLE3": ExampleKernel(rounded, (unclamped, linear_taps, sample), antialiasing),
}
