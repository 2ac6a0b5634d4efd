"""Order equivalences and identities, judged as relations on the backend's own outputs:

- DEPTH_TO_SPACE1 with DEPTH_COLUMN_ROW == DEPTH_TO_SPACE, and SPACE_TO_DEPTH1 with
  DEPTH_COLUMN_ROW == SPACE_TO_DEPTH (the *1 pages' Remarks);
- COLUMN_ROW_DEPTH == DEPTH_COLUMN_ROW after the channel permutation that maps one depth layout
  onto the other (DML_DEPTH_SPACE_ORDER: (BlockHeight, BlockWidth, C) against (C, BlockHeight,
  BlockWidth));
- RESAMPLE1 with offsets 0.5 / -0.5 == RESAMPLE (the RESAMPLE1 page's Remarks);
- nearest with integer upscales (half-pixel offsets) == repeating each element Scale times
  (expected values computed here by repetition, independently of the reference);
- Scale 1 with offsets that map pixel centres onto themselves (InputPixelOffset a,
  OutputPixelOffset -a) == identity, in both modes (a dyadic, so c is exact in float32).
"""

from __future__ import annotations

import numpy as np

from conformance import inputs as sources
from conformance.generate.build import (
    ALL_TYPES,
    case,
    chain,
    cite,
    desc,
    iota_input,
    smooth_input,
    values_for,
)
from conformance.tensors import DataType, TensorDesc

FAMILY = "equivalence"
DESCRIPTION = "order equivalences, RESAMPLE1 == RESAMPLE at 0.5/-0.5, repetition and identity"
RESAMPLE_TYPES = (DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8)
SHAPES = ((1, 1, 2, 3), (2, 3, 3, 1))  # (N, C', H, W) of the depth form
ORDER_PAGE = "DML_DEPTH_SPACE_ORDER"


def _dcr_from_crd(channels: int, block: int) -> list[int]:
    """indices such that x_dcr = take(x_crd, indices, axis=1) gives D2S_DCR(x_dcr) ==
    D2S_CRD(x_crd): DCR channel q*C' + c holds CRD channel c*b^2 + q."""
    cc, bb = channels // (block * block), block * block
    return [(k % cc) * bb + k // cc for k in range(channels)]


def _crd_from_dcr(channels: int, block: int) -> list[int]:
    """indices such that S2D_CRD(y) == take(S2D_DCR(y), indices, axis=1)."""
    cc, bb = channels // (block * block), block * block
    return [(k % bb) * cc + k // bb for k in range(channels)]


def _depth_space() -> list[dict]:
    out = []
    for slot, data_type in enumerate(ALL_TYPES):
        for block in (1, 2, 3):
            n, cc, h, w = SHAPES[(slot + block) % len(SHAPES)]
            depth = desc(data_type, [n, cc * block * block, h, w])
            space = desc(data_type, [n, cc, h * block, w * block])
            t = data_type.name.lower()
            for new, old, inp, outp in (("DEPTH_TO_SPACE1", "DEPTH_TO_SPACE", depth, space),
                                        ("SPACE_TO_DEPTH1", "SPACE_TO_DEPTH", space, depth)):
                cid = f"generated/equivalence/{new.lower()}-dcr-is-{old.lower()}/b{block}/{t}"
                out.append(chain(
                    cid, [
                        {"name": "v1", "operator": new,
                         "attributes": {"BlockSize": block, "Order": "DEPTH_COLUMN_ROW"},
                         "tensors": {"InputTensor": inp, "OutputTensor": outp}},
                        {"name": "v0", "operator": old, "attributes": {"BlockSize": block},
                         "tensors": {"InputTensor": inp, "OutputTensor": outp}}],
                    family=FAMILY, spec=[cite(f"DML_{new}_OPERATOR_DESC", "Remarks")],
                    inputs={"v1.InputTensor": values_for(cid, inp),
                            "v0.InputTensor": {"from": "v1.InputTensor"}},
                    relations=[{"equal": ["v1.OutputTensor", "v0.OutputTensor"],
                                "why": f"{new} with DEPTH_COLUMN_ROW is equivalent to {old}"}]))
            if block == 1:
                continue
            channels = cc * block * block
            cid = f"generated/equivalence/depth_to_space1-crd-is-permuted-dcr/b{block}/{t}"
            attrs = {"BlockSize": block}
            out.append(chain(
                cid, [
                    {"name": "crd", "operator": "DEPTH_TO_SPACE1",
                     "attributes": {**attrs, "Order": "COLUMN_ROW_DEPTH"},
                     "tensors": {"InputTensor": depth, "OutputTensor": space}},
                    {"name": "dcr", "operator": "DEPTH_TO_SPACE1",
                     "attributes": {**attrs, "Order": "DEPTH_COLUMN_ROW"},
                     "tensors": {"InputTensor": depth, "OutputTensor": space}}],
                family=FAMILY, spec=[cite(ORDER_PAGE, "Constants")],
                inputs={"crd.InputTensor": values_for(cid, depth),
                        "dcr.InputTensor": {"from": "crd.InputTensor",
                                            "take": {"axis": 1, "indices":
                                                     _dcr_from_crd(channels, block)}}},
                relations=[{"equal": ["crd.OutputTensor", "dcr.OutputTensor"],
                            "why": "the depth layouts differ only in the order of the channels"}]))
            cid = f"generated/equivalence/space_to_depth1-crd-is-permuted-dcr/b{block}/{t}"
            out.append(chain(
                cid, [
                    {"name": "crd", "operator": "SPACE_TO_DEPTH1",
                     "attributes": {**attrs, "Order": "COLUMN_ROW_DEPTH"},
                     "tensors": {"InputTensor": space, "OutputTensor": depth}},
                    {"name": "dcr", "operator": "SPACE_TO_DEPTH1",
                     "attributes": {**attrs, "Order": "DEPTH_COLUMN_ROW"},
                     "tensors": {"InputTensor": space, "OutputTensor": depth}}],
                family=FAMILY, spec=[cite(ORDER_PAGE, "Constants")],
                inputs={"crd.InputTensor": values_for(cid, space),
                        "dcr.InputTensor": {"from": "crd.InputTensor"}},
                relations=[{"equal": ["crd.OutputTensor", "dcr.OutputTensor"],
                            "take": {"axis": 1, "indices": _crd_from_dcr(channels, block)},
                            "why": "the depth layouts differ only in the order of the channels"}]))
    return out


def _resample_pair() -> list[dict]:
    """RESAMPLE1 (0.5 / -0.5) against RESAMPLE on one input, 1 to 4 dimensions. Integer scales
    and 4/3 put no coordinate at a tie, so nearest must agree bit for bit; linear outputs are
    each judged against the reference within its tolerance."""
    out = []
    scales_of = {1: [3.0], 2: [2.0, 1.3333334], 3: [1.0, 2.0, 3.0], 4: [2.0, 1.0, 1.3333334, 2.0]}
    sizes_of = {1: [5], 2: [3, 4], 3: [2, 3, 2], 4: [2, 2, 3, 3]}
    for dims in (1, 2, 3, 4):
        for mode in ("NEAREST_NEIGHBOR", "LINEAR"):
            for data_type in RESAMPLE_TYPES:
                scales, sizes = scales_of[dims], sizes_of[dims]
                out_sizes = [int(s * f) for s, f in zip(sizes, scales, strict=True)]
                inp, outp = desc(data_type, sizes), desc(data_type, out_sizes)
                cid = (f"generated/equivalence/resample1-half-pixel-is-resample/{dims}d/"
                       f"{mode.lower()}/{data_type.name.lower()}")
                linear = mode == "LINEAR"
                out.append(chain(
                    cid, [
                        {"name": "resample1", "operator": "RESAMPLE1",
                         "attributes": {"InterpolationMode": mode, "Scales": scales,
                                        "InputPixelOffsets": [0.5] * dims,
                                        "OutputPixelOffsets": [-0.5] * dims},
                         "tensors": {"InputTensor": inp, "OutputTensor": outp}},
                        {"name": "resample", "operator": "RESAMPLE",
                         "attributes": {"InterpolationMode": mode, "Scales": scales},
                         "tensors": {"InputTensor": inp, "OutputTensor": outp}}],
                    family=FAMILY, spec=[cite("DML_RESAMPLE1_OPERATOR_DESC", "Remarks")],
                    inputs={"resample1.InputTensor": smooth_input(cid, inp),
                            "resample.InputTensor": {"from": "resample1.InputTensor"}},
                    expected=({"resample1.OutputTensor": "reference",
                               "resample.OutputTensor": "reference"} if linear else None),
                    relations=[] if linear else [
                        {"equal": ["resample1.OutputTensor", "resample.OutputTensor"],
                         "why": "RESAMPLE1 with offsets 0.5 / -0.5 is equivalent to RESAMPLE"}]))
    return out


def _repetition() -> list[dict]:
    out = []
    for operator in ("RESAMPLE1", "RESAMPLE"):
        for scales in ([1, 1, 2, 2], [1, 3, 1, 2], [2, 1, 4, 1]):
            for data_type in RESAMPLE_TYPES:
                sizes = [1, 2, 3, 2]
                inp = desc(data_type, sizes)
                outp = desc(data_type, [s * f for s, f in zip(sizes, scales, strict=True)])
                source = iota_input(inp, start=-5 if data_type != DataType.UINT8 else 0)
                x = sources.generate("iota", source["iota"], TensorDesc.from_json(inp))
                for axis, k in enumerate(scales):
                    x = np.repeat(x, k, axis=axis)
                attrs: dict = {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": scales}
                if operator == "RESAMPLE1":
                    attrs |= {"InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
                values = x.astype(np.float64 if data_type.is_float else np.int64).tolist()
                out.append(case(
                    f"generated/equivalence/nearest-integer-upscale-repeats/{operator.lower()}/"
                    f"{'x'.join(map(str, scales))}/{data_type.name.lower()}",
                    operator, attrs, {"InputTensor": inp, "OutputTensor": outp}, family=FAMILY,
                    spec=[cite(f"DML_{operator}_OPERATOR_DESC", "InterpolationMode"),
                          cite("NOTES", "4")],
                    inputs={"InputTensor": source},
                    expected={"OutputTensor": {"values": values}},
                    description="half-pixel nearest at integer scale k reads floor((o + 0.5) / k)"
                                " = floor(o / k): each element repeated k times"))
    return out


def _identity() -> list[dict]:
    out = []
    for mode in ("NEAREST_NEIGHBOR", "LINEAR"):
        offsets = [0.0, 0.5, 0.25, -1.5] + ([0.3] if mode == "NEAREST_NEIGHBOR" else [])
        for a in offsets:
            for data_type in RESAMPLE_TYPES:
                for sizes in ([2, 3, 4, 5], [7, 1, 1, 3]):
                    inp = desc(data_type, sizes)
                    cid = (f"generated/equivalence/scale-1-identity/{mode.lower()}/offset-{a}/"
                           f"{'x'.join(map(str, sizes))}/{data_type.name.lower()}")
                    out.append(case(
                        cid, "RESAMPLE1",
                        {"InterpolationMode": mode, "Scales": [1, 1, 1, 1],
                         "InputPixelOffsets": [a] * 4, "OutputPixelOffsets": [-a] * 4},
                        {"InputTensor": inp, "OutputTensor": inp}, family=FAMILY,
                        spec=[cite("DML_RESAMPLE1_OPERATOR_DESC", "InputPixelOffsets"),
                              cite("NOTES", "4")],
                        inputs={"InputTensor": smooth_input(cid, inp)}, expected=None,
                        relations=[{"equal": ["OutputTensor", "InputTensor"],
                                    "why": "scale 1 with offsets a / -a maps every pixel centre "
                                           "onto itself"}]))
    return out


def files() -> dict[str, list[dict]]:
    return {"depth_space": _depth_space(), "resample": _resample_pair(),
            "repetition": _repetition(), "identity": _identity()}
