"""Offset formulas of RESAMPLE1 (and RESAMPLE), following OutputX = (InputX + InputPixelOffset)
* Scale + OutputPixelOffset (RESAMPLE1 page): scales up, down and non-integer; output sizes that
do not equal InputSize * Scale (the output crops, or the coordinates clamp at the edges);
offsets 0, +-0.5 and arbitrary; on every dimension including batch and channel; in both modes
and with 1 to 4 dimensions. Judged against the reference with its tolerance model (nearest: exact
but either neighbour at a tie; linear: the float32 bound; 8-bit linear: either integer neighbour).

Also linear cases on inputs that are affine in the coordinate (iota), where the exact output is
known in closed form, clamped edges included: start + step * sum_d clamp(c_d) * stride_d. Those
expected values are computed here, independently of the reference, and judged with the linear
tolerance model.

And "ties": nearest cases built so that coordinates land exactly on a half, marked open (NOTES
§4): mandatory, either neighbour admissible at every tie (the reference's one-of model).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st

from conformance.kit.build import case, cite, desc, iota_input, seed_of, smooth_input
from conformance.kit.family import SEEDS, Example, Picker, example_id
from conformance.ops.base import float32
from conformance.ops.resample.examples import OFFSETS, SCALES, natural, offsets_attributes
from conformance.ops.resample.pages import RESAMPLE1 as PAGE
from conformance.ops.resample.sampling import coordinates
from conformance.tensors import DataType, packed_strides

FAMILY = "offsets"
DESCRIPTION = "RESAMPLE1 coordinates: scales, offsets, crops and clamps on every dimension"
TYPES = (DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8)
MODES = ("NEAREST_NEIGHBOR", "LINEAR")
SIZE_VARIANTS = ("natural", "crop", "clamp")
AXES = ("batch", "channel", "height", "width")
BASE = [2, 2, 3, 2]  # unscaled dimensions keep these sizes
SCALED = 5  # the size of the scaled dimension
TIES = ("NOTES §4: at an exact tie the spec does not say which neighbour nearest picks; either "
        "is admissible at every tie (floor(c + 0.5), halves up, is the suite's reading)")


def out_size(size: int, scale: float, variant: str) -> int:
    n = natural(size, scale)
    return {"natural": n, "crop": max(1, n - 1), "clamp": n + 2}[variant]


def one_axis(axis: int, scale: float, offsets: tuple[float, float], variant: str,
             size: int = SCALED, base: tuple[int, ...] = tuple(BASE)
             ) -> tuple[list[int], list[int], list[float], list[tuple[float, float]]]:
    """Input sizes, output sizes, Scales and offset pairs of a call that scales one dimension
    to `size` (the others keep `base` with scale 1 and the pixel-centre offsets 0.5 / -0.5)."""
    sizes = list(base)
    sizes[axis] = size
    scales = [1.0] * 4
    scales[axis] = scale
    per_axis = [(0.5, -0.5)] * 4
    per_axis[axis] = offsets
    outs = list(sizes)
    outs[axis] = out_size(size, scale, variant)
    return sizes, outs, scales, per_axis


def _single_axis() -> list[dict]:
    out = []
    i = 0
    for mode in MODES:
        for axis in range(4):
            for scale in SCALES:
                for offsets in OFFSETS:
                    for variant in SIZE_VARIANTS:
                        data_type = TYPES[i % len(TYPES)]
                        i += 1
                        sizes, outs, scales, per_axis = one_axis(axis, scale, offsets, variant)
                        tensors = {"InputTensor": desc(data_type, sizes),
                                   "OutputTensor": desc(data_type, outs)}
                        cid = (f"generated/offsets/{mode.lower()}/{AXES[axis]}/scale-{scale}/"
                               f"offsets-{offsets[0]}_{offsets[1]}/{variant}")
                        out.append(case(
                            cid, "RESAMPLE1", offsets_attributes(mode, scales, per_axis), tensors,
                            family=FAMILY, spec=[cite(PAGE, "Scales"), cite("NOTES", "4")],
                            inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"])},
                            tags=[AXES[axis], variant, data_type.name.lower()]))
    return out


def _all_axes() -> list[dict]:
    """Every dimension scaled at once, settings drawn from a seeded generator."""
    out = []
    for mode in MODES:
        for data_type in TYPES:
            for k in range(20):
                cid = f"generated/offsets/{mode.lower()}/all-axes/{data_type.name.lower()}/{k}"
                rng = np.random.default_rng(seed_of(cid))
                sizes = [int(v) for v in rng.integers(1, 6, 4)]
                scales = [float(SCALES[j]) for j in rng.integers(0, len(SCALES), 4)]
                offsets = [(round(float(a), 3), round(float(b), 3))
                           for a, b in rng.uniform(-1, 1, (4, 2))]
                variants = [SIZE_VARIANTS[j] for j in rng.integers(0, 3, 4)]
                outs = [out_size(s, f, v) for s, f, v in zip(sizes, scales, variants, strict=True)]
                tensors = {"InputTensor": desc(data_type, sizes),
                           "OutputTensor": desc(data_type, outs)}
                out.append(case(
                    cid, "RESAMPLE1", offsets_attributes(mode, scales, offsets), tensors,
                    family=FAMILY,
                    spec=[cite(PAGE, "Scales"), cite(PAGE, "InputPixelOffsets"),
                          cite("NOTES", "4")],
                    inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"])},
                    tags=["all-axes"]))
    return out


def _fewer_dimensions() -> list[dict]:
    """1, 2 and 3 dimensions (feature level 5_1), for both operators."""
    out = []
    for operator in ("RESAMPLE1", "RESAMPLE"):
        for mode in MODES:
            for dims in (1, 2, 3):
                for data_type in TYPES:
                    for k in range(3):
                        cid = (f"generated/offsets/{operator.lower()}/{mode.lower()}/{dims}d/"
                               f"{data_type.name.lower()}/{k}")
                        rng = np.random.default_rng(seed_of(cid))
                        sizes = [int(v) for v in rng.integers(2, 7, dims)]
                        scales = [float(SCALES[j]) for j in rng.integers(0, len(SCALES), dims)]
                        outs = [out_size(s, f, "natural") for s, f in zip(sizes, scales,
                                                                          strict=True)]
                        if operator == "RESAMPLE1":
                            offsets = [OFFSETS[j] for j in rng.integers(0, len(OFFSETS), dims)]
                            attrs = offsets_attributes(mode, scales, offsets)
                        else:
                            attrs = {"InterpolationMode": mode, "Scales": scales}
                        tensors = {"InputTensor": desc(data_type, sizes),
                                   "OutputTensor": desc(data_type, outs)}
                        out.append(case(
                            cid, operator, attrs, tensors, family=FAMILY,
                            spec=[cite(f"DML_{operator}_OPERATOR_DESC", "Tensor support"),
                                  cite("NOTES", "4")],
                            inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"])},
                            tags=[f"{dims}d"]))
    return out


def affine_output(start: float, step: float, in_sizes: list[int], out_sizes: list[int],
                  scales: list[float], offsets: list[tuple[float, float]]) -> np.ndarray:
    """The exact linear resample of iota(start, step) (affine in every coordinate): linear
    interpolation reproduces an affine function, so the output is the function at the clamped
    coordinates."""
    strides = packed_strides(in_sizes)
    total = np.full(out_sizes, float(start))
    f32 = float32(scales)
    for d, (o, i) in enumerate(zip(out_sizes, in_sizes, strict=True)):
        a, b = float32([offsets[d][0], offsets[d][1]])
        c, _ = coordinates(o, i, f32[d], a, b)
        shape = [1] * len(out_sizes)
        shape[d] = o
        total = total + step * strides[d] * c.reshape(shape)
    return total


def _affine() -> list[dict]:
    out = []
    for data_type, start, step in ((DataType.FLOAT32, -3.0, 0.25), (DataType.FLOAT16, 1.5, 0.5),
                                   (DataType.INT8, -60.0, 1.0), (DataType.UINT8, 3.0, 2.0)):
        for axis in range(4):
            for scale in (2.0, 0.75, 1.5, 0.33333334):
                for offsets in OFFSETS[:3]:
                    sizes, outs, scales, per_axis = one_axis(axis, scale, offsets, "clamp")
                    tensors = {"InputTensor": desc(data_type, sizes),
                               "OutputTensor": desc(data_type, outs)}
                    exact = affine_output(start, step, sizes, outs, scales, per_axis)
                    cid = (f"generated/offsets/linear-affine/{data_type.name.lower()}/"
                           f"{AXES[axis]}/scale-{scale}/offsets-{offsets[0]}_{offsets[1]}")
                    out.append(case(
                        cid, "RESAMPLE1", offsets_attributes("LINEAR", scales, per_axis), tensors,
                        family=FAMILY, spec=[cite(PAGE, "InterpolationMode"), cite("NOTES", "4")],
                        inputs={"InputTensor": iota_input(tensors["InputTensor"], start, step)},
                        expected={"OutputTensor": {"values": exact.tolist(),
                                                   "tolerance": "model"}},
                        tags=["affine", AXES[axis]],
                        description="input affine in the coordinate: the exact output is the "
                                    "same affine function of the clamped coordinate"))
    return out


def _ties() -> list[dict]:
    """Coordinates exactly on a half: scale 2 with offsets 0 / 0 (c = o / 2), scale 1.5
    half-pixel (c + 0.5 = (o + 0.5) / 1.5, whole at o = 1, 4), scale 4 with offsets 0 / -2
    (c = (o + 2) / 4) and scale 0.5 with offsets 0.5 / 0 (c = 2o - 0.5). The generator checks
    that each lands on at least one tie."""
    out = []
    configs = ((2.0, (0.0, 0.0)), (1.5, (0.5, -0.5)), (4.0, (0.0, -2.0)), (0.5, (0.5, 0.0)))
    for data_type in TYPES:
        for scale, offsets in configs:
            for axis in (1, 3):
                sizes, outs, scales, per_axis = one_axis(axis, scale, offsets, "natural")
                tensors = {"InputTensor": desc(data_type, sizes),
                           "OutputTensor": desc(data_type, outs)}
                cid = (f"generated/offsets/nearest-ties/{AXES[axis]}/scale-{scale}/"
                       f"offsets-{offsets[0]}_{offsets[1]}/{data_type.name.lower()}")
                a, b = float32(list(offsets))
                c, _ = coordinates(outs[axis], SCALED, float(float32([scale])[0]), a, b)
                if not np.any(c - np.floor(c) == 0.5):
                    raise AssertionError(f"{cid}: no coordinate lands on a tie")
                out.append(case(
                    cid, "RESAMPLE1", offsets_attributes("NEAREST_NEIGHBOR", scales, per_axis),
                    tensors,
                    family=FAMILY, spec=[cite(PAGE, "InterpolationMode"), cite("NOTES", "4")],
                    inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"])},
                    tags=["ties"], open_region=TIES))
    return out


def _scale_not_ratio() -> list[dict]:
    """Scales whose output size is the input size or twice it although the scale is neither 1
    nor 2 (3 at 2.3 -> 6, 3 at 1.25 -> 3, ...): an implementation that derives the coordinate
    from the sizes instead of the given Scale reads the wrong pixels. Offset pairs 0.5 / 0
    (PyTorch's 'nearest'), 0.5 / -0.5 and 0 / 0."""
    out = []
    for mode in MODES:
        for size, scale in ((3, 2.3), (3, 1.25), (4, 1.1), (5, 2.1), (6, 0.9)):
            for offsets in ((0.5, 0.0), (0.5, -0.5), (0.0, 0.0)):
                for axis in (2, 3):
                    sizes, outs, scales, per_axis = one_axis(axis, scale, offsets, "natural",
                                                             size, (1, 2, 3, 3))
                    tensors = {"InputTensor": desc(DataType.FLOAT32, sizes),
                               "OutputTensor": desc(DataType.FLOAT32, outs)}
                    cid = (f"generated/offsets/{mode.lower()}/scale-not-size-ratio/"
                           f"{AXES[axis]}/{size}-at-{scale}/offsets-{offsets[0]}_{offsets[1]}")
                    out.append(case(
                        cid, "RESAMPLE1", offsets_attributes(mode, scales, per_axis), tensors,
                        family=FAMILY, spec=[cite(PAGE, "Scales"), cite("NOTES", "4")],
                        inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"])},
                        tags=["scale-not-size-ratio", AXES[axis]]))
    return out


#: (size, Scale) of a dimension that keeps its size although its Scale is not 1.
KEPT = ((3, 1.25), (4, 1.1), (5, 1.15), (6, 1.1), (3, 1.3), (7, 1.1))


def kept_size(operator: str) -> list[dict]:
    """LINEAR calls, per data type, where one dimension keeps its size under a Scale other
    than 1 (KEPT) and the other spatial one doubles: an implementation that skips the kept
    dimension as an identity (misreading kept-size-unscaled) reads the wrong pixels there.
    RESAMPLE with its implied 0.5 / -0.5; RESAMPLE1 also with 0 / 0 on the kept dimension."""
    out = []
    pairs = ((0.5, -0.5),) if operator == "RESAMPLE" else ((0.5, -0.5), (0.0, 0.0))
    for data_type in TYPES:
        for size, scale in KEPT:
            for axis in (2, 3):
                for offsets in pairs:
                    other = 5 - axis
                    sizes = [1, 2, 3, 3]
                    sizes[axis] = size
                    outs = list(sizes)
                    outs[other] *= 2
                    scales = [1.0, 1.0, 1.0, 1.0]
                    scales[axis], scales[other] = scale, 2.0
                    per_axis = [(0.5, -0.5)] * 4
                    per_axis[axis] = offsets
                    attributes = offsets_attributes("LINEAR", scales, per_axis)
                    if operator == "RESAMPLE":
                        attributes = {k: attributes[k] for k in ("InterpolationMode", "Scales")}
                    tensors = {"InputTensor": desc(data_type, sizes),
                               "OutputTensor": desc(data_type, outs)}
                    cid = (f"generated/offsets/{operator.lower()}/kept-size/{AXES[axis]}/"
                           f"{size}-at-{scale}/offsets-{offsets[0]}_{offsets[1]}/"
                           f"{data_type.name.lower()}")
                    out.append(case(
                        cid, operator, attributes, tensors, family=FAMILY,
                        spec=[cite(PAGE, "Scales"), cite("NOTES", "4")],
                        inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"])},
                        tags=["kept-size", AXES[axis]]))
    return out


def files() -> dict[str, list[dict]]:
    return {"single_axis": _single_axis(), "scale_not_ratio": _scale_not_ratio(),
            "kept_size": kept_size("RESAMPLE"),
            "all_axes": _all_axes(),
            "fewer_dimensions": _fewer_dimensions(), "affine": _affine(), "ties": _ties()}


#: The explorer's draws: the committed scales and offset pairs, or any float32 in a range.
EXPLORED_SCALES = st.one_of(st.sampled_from(SCALES), st.floats(0.25, 3.0, width=32))
EXPLORED_OFFSET = st.floats(-1.5, 1.5, width=32)
EXPLORED_PAIRS = st.one_of(st.sampled_from(OFFSETS), st.tuples(EXPLORED_OFFSET, EXPLORED_OFFSET))


@st.composite
def explore(draw: Callable) -> Example:
    """RESAMPLE1 against the reference: 1 to 4 dimensions, any scales and offsets, output
    sizes that equal, crop or clamp."""
    pick, cid = Picker(draw), example_id(FAMILY)
    mode = pick("mode", MODES)
    dims = pick("dimensions", range(1, 5))
    data_type = pick("data_type", [t.name for t in TYPES])
    sizes = pick("sizes", range(1, 6), count=dims)
    scales = pick("scales", EXPLORED_SCALES, count=dims)
    pairs = [tuple(p) for p in pick("offsets", EXPLORED_PAIRS, count=dims)]
    variants = pick("output_sizes", SIZE_VARIANTS, count=dims)
    seed = pick("seed", SEEDS)
    outs = [out_size(s, f, v) for s, f, v in zip(sizes, scales, variants, strict=True)]
    tensors = {"InputTensor": desc(data_type, sizes), "OutputTensor": desc(data_type, outs)}
    return Example(FAMILY, pick.params, case(
        cid, "RESAMPLE1", offsets_attributes(mode, scales, pairs), tensors, family=FAMILY,
        spec=[cite(PAGE, "Scales"), cite(PAGE, "InputPixelOffsets"), cite("NOTES", "4")],
        inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"], seed)},
        tags=[f"{dims}d"]))
