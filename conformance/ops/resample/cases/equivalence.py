"""Equivalences and identities of the resample operators, judged as relations on the backend's
own outputs or against values computed here (the equivalence family's resample part; the
depth/space package has its own):

- RESAMPLE1 with offsets 0.5 / -0.5 == RESAMPLE (the RESAMPLE1 page's Remarks);
- nearest with integer upscales (half-pixel offsets) == repeating each element Scale times
  (expected values computed here by repetition, independently of the reference);
- Scale 1 with offsets that map pixel centres onto themselves (InputPixelOffset a,
  OutputPixelOffset -a) == identity, in both modes (a dyadic, so c is exact in float32).
"""

from __future__ import annotations

import numpy as np

from conformance import inputs as sources
from conformance.kit.build import case, chain, cite, desc, iota_input, smooth_input
from conformance.tensors import DataType, TensorDesc

FAMILY = "equivalence"
DESCRIPTION = ("RESAMPLE1 == RESAMPLE at 0.5/-0.5, nearest repetition at integer scales, "
               "scale-1 identity")
RESAMPLE_TYPES = (DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8)


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
    return {"resample": _resample_pair(), "repetition": _repetition(), "identity": _identity()}
