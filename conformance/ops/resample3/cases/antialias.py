"""RESAMPLE3's Antialiased per data type (6_4: FLOAT32, FLOAT16, INT8, UINT8), single calls on
seeded random inputs (a ramp would not show the filter: the stretched triangle, normalised,
reproduces an affine input exactly, as LINEAR does):

- stretched: one dimension at a time (W, H, C, N in turn) downsampled by a whole stretch
  f = 1 / Scale of 3, 4, 5 and 8, two dimensions and all four at once, 1 to 3 dimensions, and
  padded, NHWC, reversed and broadcast layouts: "stretching the resampling filter by a factor
  max(1, 1 / scale)". Their filters stay inside the input (examples.inside), where the page
  decides every output: mandatory.
- the threshold "1/Scales > 2": Scales 0.75, 0.6 and 0.51 (1/Scale up to 1.96) are LINEAR although
  Antialiased is TRUE; Scale 0.5 (1/Scale 2, within float32 rounding of the threshold) and 0.49
  and 0.4 (stretches whose weights do not sum to them) are in the page's silent regions.
- the other conditions: Antialiased FALSE and NEAREST_NEIGHBOR (each direction) at the stretched
  scales are RESAMPLE2's; a dimension upscaled beside a stretched one stays LINEAR.
- the everyday ONNX call: half-pixel offsets, whose filters reach beyond the edges at both ends.

Each case is marked open exactly where Resample3.silent_regions() names a silent region, with its
reasons (docs/spec-notes.md §10): mandatory, judged against every admissible reading of the
region (Resample3.open_readings); the generator checks that every case meant to be decided by the
page is. Judged against the reference with the antialiased
filter's bounds (docs/tolerances.md, "Antialiased linear").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from conformance.kit.build import (
    case,
    cite,
    desc,
    nhwc_strides,
    padded_strides,
    reversed_strides,
    smooth_input,
)
from conformance.kit.family import SEEDS, Example, Picker, example_id
from conformance.ops.resample.examples import (
    HALF_PIXEL,
    natural,
    offsets_attributes,
    stretched_call,
)
from conformance.ops.resample.spec import Resample3
from conformance.tensors import DataType, TensorDesc

FAMILY = "antialias"
DESCRIPTION = ("RESAMPLE3's Antialiased per data type: stretched filters, the threshold "
               "1/Scale > 2, the conditions, layouts; the page's silent regions open")
SPEC = Resample3()
TYPES = (DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8)
AXES = ("batch", "channel", "height", "width")
BASE = (2, 2, 2, 2)  # the sizes of unscaled dimensions
#: (stretch, axis): every whole stretch on W and H, and on C and N.
STRETCHED = ((3, 3), (4, 3), (5, 3), (8, 3), (3, 2), (4, 2), (5, 2), (8, 2), (3, 1), (4, 0))
Pair = tuple[float, float]

ANTIALIASED = cite(SPEC.page, "Antialiased")
CONDITIONS = [ANTIALIASED, cite("NOTES", "10")]


def silence(tensors: Mapping[str, Mapping[str, Any]], attributes: Mapping[str, Any]
            ) -> str | None:
    """The reasons Resample3.silent_regions() gives for the call (the case's open), or
    None where the page decides every output."""
    call = SPEC.make_call({n: TensorDesc.from_json(dict(d)) for n, d in tensors.items()},
                          attributes)
    reasons = SPEC.silent_regions(call)
    return "; ".join(reasons) + " (NOTES §10)" if reasons else None


def single(cid: str, data_type: DataType, in_sizes: Sequence[int], out_sizes: Sequence[int],
           scales: Sequence[float], pairs: Sequence[Pair], *, silent: bool, what: str,
           tags: Sequence[str], mode: str = "LINEAR", antialiased: int = 1,
           direction: str = "DECREASING", layout: tuple[dict, dict] = ({}, {}),
           seed: int | None = None) -> dict:
    """One RESAMPLE3 call on a random input, open where silent_regions() says; `silent`
    says which is meant (checked). layout: extra desc fields of the input and the output."""
    attributes = SPEC.stated(offsets_attributes(mode, scales, pairs), direction, antialiased)
    tensors = {"InputTensor": desc(data_type, in_sizes, **layout[0]),
               "OutputTensor": desc(data_type, out_sizes, **layout[1])}
    region = silence(tensors, attributes)
    if (region is not None) != silent:
        raise AssertionError(f"{cid}: meant {'silent' if silent else 'decided'}, "
                             f"silent_regions() says {region!r}")
    offsets = ", ".join(f"{a} / {b}" for a, b in pairs)
    return case(cid, SPEC.name, attributes, tensors, family=FAMILY, spec=CONDITIONS,
                inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"], seed)},
                tags=[data_type.name.lower(), *tags], open_region=region,
                description=(f"{what}: {list(in_sizes)} -> {list(out_sizes)}, Scales "
                             f"{list(scales)}, offsets {offsets}, {mode}, Antialiased "
                             f"{bool(antialiased)}"))


def _one(axis: int, stretch: int, size: int | None = None) -> tuple[list, list, list, list]:
    """One dimension stretched (its input 4 * stretch long: 3 outputs), the others BASE."""
    sizes = list(BASE)
    sizes[axis] = size or 4 * stretch
    stretches = [1] * 4
    stretches[axis] = stretch
    return stretched_call(sizes, stretches)


def _half_pixel(call: tuple[list, list, list, list]) -> tuple[list, list, list, list]:
    """The same scales with half-pixel offsets and natural output sizes (the ONNX call)."""
    sizes, _, scales, _ = call
    outs = [natural(s, f) for s, f in zip(sizes, scales, strict=True)]
    return sizes, outs, scales, [HALF_PIXEL] * len(sizes)


def _stretched(data_type: DataType) -> list[dict]:
    out = []
    for stretch, axis in STRETCHED:
        cid = f"generated/antialias/{data_type.name.lower()}/stretch-{stretch}/{AXES[axis]}"
        out.append(single(cid, data_type, *_one(axis, stretch), silent=False,
                          what=f"{AXES[axis]} stretched by {stretch}, inside the input",
                          tags=["stretched", AXES[axis]]))
    for name, stretches in (("height-width", [1, 1, 3, 4]), ("every-dimension", [3, 3, 3, 3])):
        sizes = [3 * f if f > 1 else 2 for f in stretches]
        cid = f"generated/antialias/{data_type.name.lower()}/stretch-{name}"
        out.append(single(cid, data_type, *stretched_call(sizes, stretches), silent=False,
                          what=f"{name} stretched by {stretches}", tags=["stretched", name]))
    for dims in (1, 2, 3):
        sizes = [*BASE[:dims - 1], 16]
        cid = f"generated/antialias/{data_type.name.lower()}/stretch-4/{dims}d"
        out.append(single(cid, data_type, *stretched_call(sizes, [1] * (dims - 1) + [4]),
                          silent=False, what=f"{dims} dimension(s), the last stretched by 4",
                          tags=["stretched", f"{dims}d"]))
    return out


#: Layouts of a stretched call: slug -> (input desc fields, output desc fields) of its sizes.
LAYOUTS: dict[str, Callable[[list[int], list[int]], tuple[dict, dict]]] = {
    "input-padded": lambda i, o: ({"strides": padded_strides(i)}, {}),
    "input-nhwc": lambda i, o: ({"strides": nhwc_strides(i)}, {}),
    "output-reversed": lambda i, o: ({}, {"strides": reversed_strides(o)}),
    "input-broadcast": lambda i, o: ({"strides": [0, i[3], 0, 1]}, {}),
}


def _layouts(data_type: DataType) -> list[dict]:
    out = []
    call = stretched_call([2, 2, 12, 16], [1, 1, 3, 4])
    for slug, fields in LAYOUTS.items():
        cid = f"generated/antialias/{data_type.name.lower()}/layout-{slug}"
        out.append(single(cid, data_type, *call, silent=False, layout=fields(call[0], call[1]),
                          what=f"height and width stretched by 3 and 4, {slug}",
                          tags=["layouts", slug]))
    return out


#: Scale on the width (1/Scale), whether the page is silent, and why the case is here.
THRESHOLD = ((0.75, False, "1/Scale 1.33 <= 2: LINEAR"),
             (0.6, False, "1/Scale 1.67 <= 2: LINEAR"),
             (0.51, False, "1/Scale 1.96 <= 2: LINEAR"),
             (0.5, True, "1/Scale 2: not above 2, within float32 rounding of it"),
             (0.49, True, "1/Scale 2.04 > 2: stretched by a stretch whose weights do not sum "
                          "to it"),
             (0.4, True, "1/Scale 2.5: stretched, weights summing to 2.4 to 2.6"),
             # ten LINEAR ones in all, so that stretching below the threshold FAILs ten cases of
             # each slice (issue 25's floor)
             *((s, False, f"1/Scale {1 / s:.3g} <= 2: LINEAR")
               for s in (0.9, 0.8, 0.7, 0.65, 0.55, 0.52, 0.505)))


def _threshold(data_type: DataType) -> list[dict]:
    out = []
    for scale, silent, why in THRESHOLD:
        sizes = [2, 2, 2, 20]
        outs = [2, 2, 2, natural(20, scale)]
        pairs = [HALF_PIXEL] * 3 + [(-2.0, 0.0) if scale < 0.5 else HALF_PIXEL]
        cid = f"generated/antialias/{data_type.name.lower()}/threshold/scale-{scale}"
        out.append(single(cid, data_type, sizes, outs, [1.0, 1.0, 1.0, scale], pairs,
                          silent=silent, what=f"width scaled by {scale} ({why})",
                          tags=["threshold"]))
    return out


def _conditions(data_type: DataType) -> list[dict]:
    """Antialiased FALSE, NEAREST_NEIGHBOR, an upscaled or a 1 < 1/Scale <= 2 dimension beside
    a stretched one, and the half-pixel ONNX call."""
    name = data_type.name.lower()
    call = stretched_call([2, 2, 12, 16], [1, 1, 3, 4])
    out = [single(f"generated/antialias/{name}/antialiased-false", data_type, *call,
                  silent=False, antialiased=0, what="Antialiased FALSE: RESAMPLE2's LINEAR",
                  tags=["antialiased-false"])]
    for direction in ("DECREASING", "INCREASING"):
        out.append(single(f"generated/antialias/{name}/nearest/{direction.lower()}", data_type,
                          *_half_pixel(call), silent=False, mode="NEAREST_NEIGHBOR",
                          direction=direction, what="NEAREST_NEIGHBOR is not antialiased",
                          tags=["nearest", direction.lower()]))
    sizes, outs, scales, pairs = _one(3, 4)
    for slug, scale, silent in (("upscaled", 2.0, False), ("below-threshold", 0.6, True)):
        mixed_outs = [*outs[:2], natural(sizes[2], scale), outs[3]]
        mixed_scales = [*scales[:2], scale, scales[3]]
        mixed_pairs = [*pairs[:2], HALF_PIXEL, pairs[3]]
        out.append(single(f"generated/antialias/{name}/beside-stretched/{slug}", data_type,
                          sizes, mixed_outs, mixed_scales, mixed_pairs, silent=silent,
                          what=f"width stretched by 4, height scaled by {scale}",
                          tags=["mixed", slug]))
    for stretch in (3, 4):
        out.append(single(f"generated/antialias/{name}/half-pixel/stretch-{stretch}", data_type,
                          *_half_pixel(_one(3, stretch)), silent=True,
                          what=f"width stretched by {stretch}, half-pixel offsets (ONNX's "
                               "coordinate): the filters at both ends reach beyond the input",
                          tags=["half-pixel"]))
    # more of the edges' open region: ten cases per slice whose filters reach past an edge
    for stretch, axis in EDGES:
        out.append(single(f"generated/antialias/{name}/half-pixel/stretch-{stretch}/"
                          f"{AXES[axis]}", data_type, *_half_pixel(_one(axis, stretch)),
                          silent=True, what=f"{AXES[axis]} stretched by {stretch}, half-pixel "
                                            "offsets: the filters at both ends reach beyond "
                                            "the input", tags=["half-pixel", AXES[axis]]))
    sizes, outs, scales, _ = _one(3, 4)
    out.append(single(f"generated/antialias/{name}/asymmetric/stretch-4", data_type, sizes,
                      outs, scales, [(0.0, 0.0)] * 4, silent=True,
                      what="width stretched by 4, offsets 0: the first filter reaches before "
                           "the input", tags=["asymmetric"]))
    return out


#: (stretch, dimension) of the further half-pixel calls, whose filters reach past both edges.
EDGES = ((5, 3), (8, 3), (6, 3), (3, 2), (4, 2), (5, 2), (4, 1))


def files() -> dict[str, list[dict]]:
    return {f"resample3_{t.name.lower()}": (_stretched(t) + _layouts(t) + _threshold(t)
                                             + _conditions(t)) for t in TYPES}


#: The explorer's scales: whole stretches, the threshold's neighbourhood, upscales.
EXPLORED_SCALES = (0.33333334, 0.25, 0.2, 0.125, 0.4, 0.49, 0.5, 0.51, 0.75, 1.0, 1.5, 2.0)
EXPLORED_OFFSETS = (HALF_PIXEL, (0.0, 0.0), (-2.5, 0.0), (-3.5, 0.0), (0.25, -0.75))


@st.composite
def explore(draw: Callable) -> Example:
    """RESAMPLE3 against the reference: 1 to 4 dimensions, any of the scales and offsets above,
    Antialiased either way, either mode and direction; open where the page is silent."""
    pick, cid = Picker(draw), example_id(FAMILY)
    dims = pick("dimensions", range(1, 5))
    data_type = DataType.parse(pick("data_type", [t.name for t in TYPES]))
    sizes = pick("sizes", range(1, 13), count=dims)
    scales = pick("scales", EXPLORED_SCALES, count=dims)
    pairs = [tuple(p) for p in pick("offsets", EXPLORED_OFFSETS, count=dims)]
    mode = pick("mode", ("LINEAR", "NEAREST_NEIGHBOR"))
    direction = pick("rounding_direction", ("DECREASING", "INCREASING"))
    antialiased = pick("antialiased", (1, 0))
    seed = pick("seed", SEEDS)
    outs = [natural(s, f) for s, f in zip(sizes, scales, strict=True)]
    attributes = SPEC.stated(offsets_attributes(mode, scales, pairs), direction, antialiased)
    tensors = {"InputTensor": desc(data_type, sizes), "OutputTensor": desc(data_type, outs)}
    return Example(FAMILY, pick.params, case(
        cid, SPEC.name, attributes, tensors, family=FAMILY, spec=CONDITIONS,
        inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"], seed)},
        open_region=silence(tensors, attributes), tags=[f"{dims}d"]))
