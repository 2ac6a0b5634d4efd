"""Every RESAMPLE and RESAMPLE1 capability slice, readably: for each operator, each data type of
its tables (FLOAT32 and FLOAT16 from 2_0 / 2_1 with 4 dimensions, 1 to 3 dimensions from 5_1;
INT8 and UINT8 from 6_2) and both modes, single-call cases on integer ramps (iota) that the type
holds exactly, so that any misplaced element or wrong weight shows:

- scales: 2, 3, 4, 0.5, 0.4, 1.5, 4/3 (1.3333334) and 0.6 on one dimension at a time, in turn
  W, H, C and N, the others unscaled;
- all four dimensions scaled at once, with cropped and clamped outputs;
- offset formulas (RESAMPLE1): asymmetric 0 / 0 and the pairs 0.25 / -0.75, -0.5 / 0.25 and
  1 / 0.5 (fractional and negative offsets, one beyond a pixel); half-pixel 0.5 / -0.5 is the
  default of the other cases and RESAMPLE's implied pair (RESAMPLE1 page, Remarks);
- scales that are not the size ratio: an output cropped below, clamped beyond, and a scale of
  1.6 with twice the input size;
- layouts: a padded input, an NHWC input, an output in reverse dimension order, a broadcast
  input (stride 0 on N and H), and packed tensors whose TotalTensorSizeInBytes is one element
  per row above the minimum (unused bytes, not a row pitch);
- FLOAT32 on a ramp beyond float16 (2049, 2051, ...: odd integers above 2048, which float16
  cannot hold), so that values moved through half precision show;
- 1, 2 and 3 dimensions (feature level 5_1; 6_2 for the 8-bit types).

Ramps: floats 1, 2, 3, ...; INT8 centred on 0 and UINT8 on 128 with the widest step that stays in
range, so that a linear weight that is off by a quarter moves the output by more than the
'either integer neighbour' rule for 8-bit outputs accepts (NOTES §4), and so that interpolation
crosses the sign boundary of the other signedness.

Nearest cases never put a coordinate on a tie, where the spec is ambiguous (NOTES §4; the
offsets family's open 'ties' cases are the place for those): the generator checks each one
and picks offsets or scales that avoid them. That is why RESAMPLE (whose offsets are always
0.5 / -0.5) has no nearest case at scale 0.5 or 1.5, where every or some coordinate is a half,
and why RESAMPLE1's nearest cases at those scales use other offsets. Judged against the
reference with its tolerance model (docs/tolerances.md). The catalogue of misreadings
(conformance/ops/resample/misreadings.py) fails every slice on these cases.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from conformance.kit.build import (
    case,
    cite,
    desc,
    iota_input,
    nhwc_strides,
    padded_strides,
    reversed_strides,
)
from conformance.ops.base import float32
from conformance.ops.resample.cases.offsets import TIES
from conformance.ops.resample.examples import natural
from conformance.ops.resample.sampling import coordinates
from conformance.tensors import DataType

FAMILY = "sampling"
DESCRIPTION = ("RESAMPLE and RESAMPLE1 per data type and feature level on integer ramps: modes, "
               "scales, offset formulas, crops, clamps and layouts")
OPERATORS = ("RESAMPLE", "RESAMPLE1")
TYPES = (DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8)
MODES = ("NEAREST_NEIGHBOR", "LINEAR")
AXES = ("batch", "channel", "height", "width")
AXIS_TURN = (3, 2, 1, 0)  # the scaled dimension of the k-th single-axis case: W, H, C, N, W...
SCALES = (2.0, 3.0, 4.0, 0.5, 0.4, 1.5, 1.3333334, 0.6)
HALF_PIXEL = (0.5, -0.5)
#: Offset pairs for nearest RESAMPLE1 where half-pixel would land on ties, tried in order.
TIE_FREE = ((0.0, 0.0), (0.25, -0.5))
#: RESAMPLE1 offset formulas, each with a scale at which nearest has no tie.
OFFSET_PAIRS = (((0.0, 0.0), 3.0), ((0.25, -0.75), 2.0), ((-0.5, 0.25), 1.5), ((1.0, 0.5), 2.0))
BASE = (2, 2, 2, 2)  # unscaled dimensions
BEYOND_FLOAT16 = (2049.0, 2.0)  # odd integers above 2048: none is a float16
Pair = tuple[float, float]


def page(operator: str) -> str:
    return f"DML_{operator}_OPERATOR_DESC"


def ramp(data_type: DataType, count: int) -> tuple[float, float]:
    """(start, step) of an integer ramp of count elements that the type holds exactly: floats
    1, 2, 3, ...; INT8 centred on 0 and UINT8 on 128 with the widest step that fits."""
    if data_type.is_float:
        if count > 2048:
            raise ValueError("float16 holds the integers up to 2048 only")
        return 1.0, 1.0
    step = max(1, min(40, 230 // max(count - 1, 1)))
    span = step * (count - 1)
    centre = 0 if data_type == DataType.INT8 else 128
    start = centre - (span // 2 // step) * step - step // 2
    info = np.iinfo(data_type.numpy_dtype)
    if start < info.min or start + span > info.max:
        raise ValueError(f"a ramp of {count} {data_type.name} elements does not fit")
    return float(start), float(step)


def ties(in_sizes: Sequence[int], out_sizes: Sequence[int], scales: Sequence[float],
         pairs: Sequence[Pair]) -> bool:
    """Whether some nearest coordinate is at, or within float32 rounding of, a half (where the
    spec is ambiguous, NOTES §4; the reference accepts either neighbour there)."""
    f = float32(scales)
    for d, (o, i) in enumerate(zip(out_sizes, in_sizes, strict=True)):
        a, b = float32(list(pairs[d]))
        c, err = coordinates(o, i, f[d], a, b)
        if np.any(np.abs(c - np.floor(c) - 0.5) <= err):
            return True
    return False


def _pairs_text(pairs: Sequence[Pair]) -> str:
    if all(p == pairs[0] for p in pairs):
        return f"offsets {pairs[0][0]} / {pairs[0][1]} on every dimension"
    return "offsets " + ", ".join(f"{a} / {b}" for a, b in pairs)


def single(operator: str, mode: str, data_type: DataType, cid: str, in_sizes: Sequence[int],
           out_sizes: Sequence[int], scales: Sequence[float], pairs: Sequence[Pair], *,
           spec: list[dict], tags: Sequence[str], what: str,
           layout: tuple[dict, dict] = ({}, {}),
           start_step: tuple[float, float] | None = None, open_region: str | None = None,
           family: str = FAMILY) -> dict:
    """One case: the call, an iota input, the reference as the expectation. layout: extra desc
    fields (strides, total) of the input and the output. Raises if a nearest case would land on
    a tie (unless it is marked open) or a RESAMPLE case is given other offsets than its
    implied ones."""
    if (mode == "NEAREST_NEIGHBOR" and not open_region
            and ties(in_sizes, out_sizes, scales, pairs)):
        raise AssertionError(f"{cid}: a nearest coordinate lands on a tie")
    attributes: dict = {"InterpolationMode": mode, "Scales": list(scales)}
    if operator == "RESAMPLE1":
        attributes["InputPixelOffsets"] = [a for a, _ in pairs]
        attributes["OutputPixelOffsets"] = [b for _, b in pairs]
    elif any(p != HALF_PIXEL for p in pairs):
        raise AssertionError(f"{cid}: RESAMPLE's offsets are 0.5 / -0.5")
    tensors = {"InputTensor": desc(data_type, in_sizes, **layout[0]),
               "OutputTensor": desc(data_type, out_sizes, **layout[1])}
    start, step = start_step or ramp(data_type, math.prod(in_sizes))
    offsets = f", {_pairs_text(pairs)}" if operator == "RESAMPLE1" else ""
    return case(cid, operator, attributes, tensors, family=family, spec=spec,
                inputs={"InputTensor": iota_input(tensors["InputTensor"], start, step)},
                open_region=open_region,
                tags=[data_type.name.lower(), mode.lower(), *tags],
                description=(f"{what}: {list(in_sizes)} -> {list(out_sizes)}, Scales "
                             f"{list(scales)}{offsets}; input the ramp {start:g}, "
                             f"{start + step:g}, {start + 2 * step:g}, ..."))


def _one_axis(axis: int, size: int, out: int, scale: float, pair: Pair, dims: int = 4
              ) -> tuple[list[int], list[int], list[float], list[Pair]]:
    in_sizes = list(BASE[4 - dims:])
    in_sizes[axis] = size
    out_sizes = list(in_sizes)
    out_sizes[axis] = out
    scales = [1.0] * dims
    scales[axis] = scale
    pairs = [HALF_PIXEL] * dims
    pairs[axis] = pair
    return in_sizes, out_sizes, scales, pairs


def _pair_for(operator: str, mode: str, axis: int, size: int, out: int, scale: float
              ) -> Pair | None:
    """Half-pixel, or for nearest RESAMPLE1 the first tie-free pair; None where none is."""
    candidates = (HALF_PIXEL,) + (TIE_FREE if operator == "RESAMPLE1" else ())
    for pair in candidates:
        in_sizes, out_sizes, scales, pairs = _one_axis(axis, size, out, scale, pair)
        if mode == "LINEAR" or not ties(in_sizes, out_sizes, scales, pairs):
            return pair
    return None


def _scales(operator: str, data_type: DataType) -> list[dict]:
    out = []
    for mode in MODES:
        k = 0
        for scale in SCALES:
            size = 3 if scale >= 1 else 5
            axis = AXIS_TURN[k % 4]
            pair = _pair_for(operator, mode, axis, size, natural(size, scale), scale)
            if pair is None:
                continue  # RESAMPLE nearest at 0.5 or 1.5: ties (module docstring)
            k += 1
            in_sizes, out_sizes, scales, pairs = _one_axis(axis, size, natural(size, scale),
                                                           scale, pair)
            cid = (f"generated/sampling/{operator.lower()}/{data_type.name.lower()}/"
                   f"{mode.lower()}/scale-{scale}/{AXES[axis]}")
            out.append(single(
                operator, mode, data_type, cid, in_sizes, out_sizes, scales, pairs,
                spec=[cite(page(operator), "Scales"), cite(page(operator), "InterpolationMode"),
                      cite("NOTES", "4")],
                tags=["scales", AXES[axis]], what=f"{AXES[axis]} scaled by {scale}"))
    # LINEAR once more with every scale on an outer dimension (channel, batch in turn): a
    # bilinear-only implementation is caught by ten cases of each slice (issue 25's floor)
    for k, scale in enumerate(SCALES):
        size, axis = (3 if scale >= 1 else 5), (1, 0)[k % 2]
        pair = _pair_for(operator, "LINEAR", axis, size, natural(size, scale), scale)
        if pair is None:
            continue
        in_sizes, out_sizes, scales, pairs = _one_axis(axis, size, natural(size, scale), scale,
                                                       pair)
        cid = (f"generated/sampling/{operator.lower()}/{data_type.name.lower()}/linear/outer/"
               f"scale-{scale}/{AXES[axis]}")
        out.append(single(
            operator, "LINEAR", data_type, cid, in_sizes, out_sizes, scales, pairs,
            spec=[cite(page(operator), "Scales"), cite(page(operator), "InterpolationMode"),
                  cite("NOTES", "4")],
            tags=["scales", "outer", AXES[axis]], what=f"{AXES[axis]} scaled by {scale}"))
    return out


#: All four dimensions scaled: (input sizes, output sizes, scales, RESAMPLE1 pairs) per mode; the
#: second of each crops N and clamps W. RESAMPLE takes the half-pixel pairs and, for nearest,
#: the RESAMPLE-safe scales.
ALL_AXES = {
    "NEAREST_NEIGHBOR": (
        ([2, 3, 2, 4], [4, 2, 6, 2], [2.0, 0.6, 3.0, 0.5],
         [HALF_PIXEL, HALF_PIXEL, HALF_PIXEL, (0.25, -0.5)]),
        ([3, 2, 3, 2], [4, 4, 4, 5], [2.0, 2.0, 1.3333334, 2.0],
         [HALF_PIXEL, (0.25, -0.75), HALF_PIXEL, (1.0, 0.5)]),
    ),
    "LINEAR": (
        ([2, 2, 3, 4], [4, 3, 9, 2], [2.0, 1.5, 3.0, 0.5],
         [HALF_PIXEL, (0.0, 0.0), HALF_PIXEL, (-0.5, 0.25)]),
        ([3, 2, 3, 2], [4, 4, 4, 5], [2.0, 2.0, 1.3333334, 2.0],
         [HALF_PIXEL, (0.25, -0.75), HALF_PIXEL, (1.0, 0.5)]),
    ),
}
RESAMPLE_NEAREST_ALL_AXES = ([2, 3, 2, 5], [4, 2, 6, 3], [2.0, 0.6, 3.0, 0.6])


def _all_axes(operator: str, data_type: DataType) -> list[dict]:
    out = []
    for mode in MODES:
        for k, (in_sizes, out_sizes, scales, pairs) in enumerate(ALL_AXES[mode]):
            if operator == "RESAMPLE":
                pairs = [HALF_PIXEL] * 4
                if mode == "NEAREST_NEIGHBOR" and k == 0:
                    in_sizes, out_sizes, scales = RESAMPLE_NEAREST_ALL_AXES
            cid = (f"generated/sampling/{operator.lower()}/{data_type.name.lower()}/"
                   f"{mode.lower()}/all-axes/{k}")
            out.append(single(
                operator, mode, data_type, cid, in_sizes, out_sizes, scales, pairs,
                spec=[cite(page(operator), "InterpolationMode"), cite(page(operator), "Scales"),
                      cite("NOTES", "4")],
                tags=["all-axes"],
                what="every dimension scaled" + (" (N cropped, W clamped)" if k else "")))
    return out


def _offsets(data_type: DataType) -> list[dict]:
    """RESAMPLE1's offset formulas, each on W, then H, C and N in turn."""
    out = []
    for mode in MODES:
        for k, (pair, scale) in enumerate(OFFSET_PAIRS):
            axis = AXIS_TURN[k % 4]
            in_sizes, out_sizes, scales, pairs = _one_axis(axis, 3, natural(3, scale), scale,
                                                           pair)
            cid = (f"generated/sampling/resample1/{data_type.name.lower()}/{mode.lower()}/"
                   f"offsets-{pair[0]}_{pair[1]}/{AXES[axis]}")
            out.append(single(
                "RESAMPLE1", mode, data_type, cid, in_sizes, out_sizes, scales, pairs,
                spec=[cite(page("RESAMPLE1"), "InputPixelOffsets"),
                      cite(page("RESAMPLE1"), "OutputPixelOffsets"), cite("NOTES", "4")],
                tags=["offsets", AXES[axis]],
                what=f"{AXES[axis]} scaled by {scale} with InputPixelOffset {pair[0]} and "
                     f"OutputPixelOffset {pair[1]}"))
    return out


#: (slug, axis, input size, output size, scale, what): outputs that crop or clamp.
NOT_THE_RATIO = (
    ("crop", 3, 3, 4, 2.0, "width scaled by 2 but the output 4 wide: cropped"),
    ("clamp", 2, 3, 9, 2.0, "height scaled by 2 but the output 9 high: the edge clamped"),
    ("scale-1.6-size-x2", 3, 4, 8, 1.6,
     "width 4 -> 8 at Scale 1.6 (the size ratio is 2): cropped coordinates and a clamped edge"),
)


def _not_the_ratio(operator: str, data_type: DataType) -> list[dict]:
    out = []
    for mode in MODES:
        for slug, axis, size, out_size, scale, what in NOT_THE_RATIO:
            in_sizes, out_sizes, scales, pairs = _one_axis(axis, size, out_size, scale,
                                                           HALF_PIXEL)
            cid = (f"generated/sampling/{operator.lower()}/{data_type.name.lower()}/"
                   f"{mode.lower()}/{slug}")
            out.append(single(
                operator, mode, data_type, cid, in_sizes, out_sizes, scales, pairs,
                spec=[cite(page(operator), "Scales"), cite("NOTES", "4")],
                tags=["scale-not-size-ratio", slug], what=what))
    return out


def _broadcast(sizes: Sequence[int]) -> list[int]:
    """Stride 0 on N and H, packed elsewhere (CalculateStrides with broadcast N and H)."""
    _, _, _, w = sizes
    return [0, w, 0, 1]


def _row_padded_total(data_type: DataType, sizes: Sequence[int]) -> int:
    """TotalTensorSizeInBytes one element per row above the packed minimum (a multiple of 4):
    the tensor stays packed (no Strides), the bytes beyond are unused."""
    rows = math.prod(sizes[:-1])
    return -(-rows * (sizes[-1] + 1) * data_type.size // 4) * 4


#: slug -> what the case says about it.
LAYOUTS = {
    "input-padded": "input rows padded (Strides with gaps)",
    "input-nhwc": "input in NHWC layout",
    "output-reversed": "output in reverse dimension order",
    "input-broadcast": "input broadcast along N and H (stride 0: the buffer holds one row per "
                       "channel, read for every N and H; the ramp is written through the "
                       "strides, the last write to a shared element stays)",
    "total-above-minimum": "packed input and output (no Strides) whose TotalTensorSizeInBytes "
                           "is one element per row above the minimum: the extra bytes are "
                           "unused, not row padding",
}


def _layouts(operator: str, data_type: DataType) -> list[dict]:
    in_sizes, out_sizes, scales = [2, 2, 2, 3], [2, 2, 4, 6], [1.0, 1.0, 2.0, 2.0]
    pairs = ([HALF_PIXEL] * 4 if operator == "RESAMPLE" else
             [HALF_PIXEL, HALF_PIXEL, (0.25, -0.75), HALF_PIXEL])
    fields: dict[str, tuple[dict, dict]] = {
        "input-padded": ({"strides": padded_strides(in_sizes)}, {}),
        "input-nhwc": ({"strides": nhwc_strides(in_sizes)}, {}),
        "output-reversed": ({}, {"strides": reversed_strides(out_sizes)}),
        "input-broadcast": ({"strides": _broadcast(in_sizes)}, {}),
        "total-above-minimum": ({"total": _row_padded_total(data_type, in_sizes)},
                                {"total": _row_padded_total(data_type, out_sizes)})}
    out = []
    for mode in MODES:
        for slug, what in LAYOUTS.items():
            cid = (f"generated/sampling/{operator.lower()}/{data_type.name.lower()}/"
                   f"{mode.lower()}/layout-{slug}")
            cites = [cite("dml-strides", "DirectML buffer tensor descriptions"),
                     cite("DML_BUFFER_TENSOR_DESC",
                          "TotalTensorSizeInBytes" if slug.startswith("total") else "Strides"),
                     cite(page(operator), "InterpolationMode")]
            out.append(single(
                operator, mode, data_type, cid, in_sizes, out_sizes, scales, pairs,
                spec=cites, tags=["layouts", slug],
                what=what, layout=fields[slug]))
    return out


def _beyond_float16(operator: str) -> list[dict]:
    """FLOAT32 ramps of odd integers above 2048: a path through float16 changes every one."""
    out = []
    for mode in MODES:
        for axis, scale in ((3, 2.0), (2, 3.0)):
            in_sizes, out_sizes, scales, pairs = _one_axis(axis, 3, natural(3, scale), scale,
                                                           HALF_PIXEL)
            cid = (f"generated/sampling/{operator.lower()}/float32/{mode.lower()}/"
                   f"beyond-float16/scale-{scale}/{AXES[axis]}")
            out.append(single(
                operator, mode, DataType.FLOAT32, cid, in_sizes, out_sizes, scales, pairs,
                spec=[cite("DML_TENSOR_DATA_TYPE", "DML_TENSOR_DATA_TYPE_FLOAT32"),
                      cite(page(operator), "InterpolationMode")],
                tags=["beyond-float16", AXES[axis]],
                what=f"{AXES[axis]} scaled by {scale}, values float16 cannot hold",
                start_step=BEYOND_FLOAT16))
    return out


#: 1, 2 and 3 dimensions: (input sizes, scales, RESAMPLE1 pairs) per mode; output sizes natural.
FEWER = {
    "NEAREST_NEIGHBOR": (
        ([5], [1.5], [(0.0, 0.0)]),
        ([3, 5], [2.0, 0.6], [HALF_PIXEL, HALF_PIXEL]),
        ([2, 3, 3], [3.0, 1.3333334, 2.0], [HALF_PIXEL, (0.25, -0.75), (1.0, 0.5)]),
    ),
    "LINEAR": (
        ([5], [1.5], [(-0.5, 0.25)]),
        ([3, 5], [2.0, 0.5], [HALF_PIXEL, (0.0, 0.0)]),
        ([2, 3, 3], [3.0, 1.3333334, 2.0], [HALF_PIXEL, (0.25, -0.75), (1.0, 0.5)]),
    ),
}


def _fewer_dimensions(operator: str, data_type: DataType) -> list[dict]:
    out = []
    for mode in MODES:
        for in_sizes, scales, pairs in FEWER[mode]:
            if operator == "RESAMPLE":
                pairs = [HALF_PIXEL] * len(in_sizes)
                if mode == "NEAREST_NEIGHBOR" and len(in_sizes) == 1:
                    scales = [1.3333334]  # 1.5 with half-pixel offsets lands on ties
            out_sizes = [natural(s, f) for s, f in zip(in_sizes, scales, strict=True)]
            dims = len(in_sizes)
            cid = (f"generated/sampling/{operator.lower()}/{data_type.name.lower()}/"
                   f"{mode.lower()}/{dims}d")
            out.append(single(
                operator, mode, data_type, cid, in_sizes, out_sizes, scales, pairs,
                spec=[cite(page(operator), "Tensor support"), cite(page(operator), "Scales"),
                      cite("NOTES", "4")],
                tags=[f"{dims}d"], what=f"{dims} dimension{'s' if dims > 1 else ''}"))
    return out


#: The deep tier (conformance/generate/deep.py): dense sweeps of Scales and offsets on H and W.
DEEP_SCALES = (0.25, 0.3, 0.4, 0.5, 0.6, 0.6666667, 0.75, 0.8, 1.0, 1.25, 1.3333334, 1.5, 2.0,
               2.5, 3.0, 3.5, 4.0)
DEEP_OFFSETS = (-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0)
DEEP_INPUT = (1, 2, 4, 5)


def deep_sweep(operator: str, data_type: DataType) -> list[dict]:
    """The deep tier of one slice, both modes, on a ramp of DEEP_INPUT: RESAMPLE1 with every
    scale of DEEP_SCALES on H and W and every (InputPixelOffset, OutputPixelOffset) pair of
    DEEP_OFFSETS on both; RESAMPLE (offsets 0.5 / -0.5) with every pair of DEEP_SCALES on H and
    W. Outputs of the natural size. A nearest case with a coordinate on a tie is kept, marked
    open as the offsets family's 'ties' cases are (NOTES §4: either neighbour admissible at a
    tie); ids deep/sampling/..."""
    out = []
    t = data_type.name.lower()
    for mode in MODES:
        if operator == "RESAMPLE1":
            grid = [((s, s), (a, b)) for s in DEEP_SCALES for a in DEEP_OFFSETS
                    for b in DEEP_OFFSETS]
        else:
            grid = [((h, w), HALF_PIXEL) for h in DEEP_SCALES for w in DEEP_SCALES]
        for (sh, sw), pair in grid:
            n, c, h, w = DEEP_INPUT
            out_sizes = [n, c, natural(h, sh), natural(w, sw)]
            scales = [1.0, 1.0, sh, sw]
            pairs = [HALF_PIXEL, HALF_PIXEL, pair, pair]
            tied = (mode == "NEAREST_NEIGHBOR"
                    and ties(DEEP_INPUT, out_sizes, scales, pairs))
            where = (f"scale-{sh}/offsets-{pair[0]}_{pair[1]}" if operator == "RESAMPLE1"
                     else f"scale-{sh}_{sw}")
            out.append(single(
                operator, mode, data_type, f"deep/sampling/{operator.lower()}/{t}/"
                f"{mode.lower()}/{where}", DEEP_INPUT, out_sizes, scales, pairs,
                spec=[cite(page(operator), "Scales"), cite(page(operator), "InterpolationMode"),
                      *([cite(page(operator), "InputPixelOffsets"),
                         cite(page(operator), "OutputPixelOffsets")]
                        if operator == "RESAMPLE1" else []), cite("NOTES", "4")],
                tags=["sweep"], what=f"height and width scaled by {sh} and {sw}",
                open_region=TIES if tied else None))
    return out


def deep_files() -> dict[str, Callable[[], list[dict]]]:
    """The deep tier's files of this family: stem -> its cases' builder (one per slice)."""
    return {f"{operator.lower()}_{t.name.lower()}": partial(deep_sweep, operator, t)
            for operator in OPERATORS for t in TYPES}


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for operator in OPERATORS:
        for data_type in TYPES:
            cases = (_scales(operator, data_type) + _all_axes(operator, data_type)
                     + (_offsets(data_type) if operator == "RESAMPLE1" else [])
                     + _not_the_ratio(operator, data_type) + _layouts(operator, data_type)
                     + (_beyond_float16(operator) if data_type == DataType.FLOAT32 else [])
                     + _fewer_dimensions(operator, data_type))
            out[f"{operator.lower()}_{data_type.name.lower()}"] = cases
    return out
