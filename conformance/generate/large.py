"""A few larger cases per operator, with sizes that cross the points where implementations
change strategy: rows longer than a vector or a tile (and not a multiple of one: 65, 129, 257,
1025 elements), planes beyond a cache line, channel counts beyond a thread group, batch > 1.
Judged against the reference (bit-exact for data movement, the tolerance models for resample).
"""

from __future__ import annotations

from conformance.generate.build import case, cite, desc, smooth_input, values_for
from conformance.tensors import DataType

FAMILY = "large"
DESCRIPTION = "larger tensors that cross vector, tile and thread-split sizes"
F32, F16, U8, I64 = DataType.FLOAT32, DataType.FLOAT16, DataType.UINT8, DataType.INT64

DEPTH_SPACE = (
    # (operator, data type, depth-form sizes (N, C, H, W), BlockSize, Order)
    ("DEPTH_TO_SPACE1", F32, [2, 64, 33, 65], 2, "DEPTH_COLUMN_ROW"),
    ("DEPTH_TO_SPACE1", U8, [1, 36, 17, 257], 3, "COLUMN_ROW_DEPTH"),
    ("DEPTH_TO_SPACE", F16, [3, 16, 9, 1025], 2, None),
    ("SPACE_TO_DEPTH1", F32, [2, 64, 33, 65], 2, "COLUMN_ROW_DEPTH"),
    ("SPACE_TO_DEPTH1", I64, [1, 64, 5, 129], 4, "DEPTH_COLUMN_ROW"),
    ("SPACE_TO_DEPTH", U8, [2, 36, 17, 85], 3, None),
)
RESAMPLE = (
    # (operator, data type, mode, input sizes, scales, output sizes)
    ("RESAMPLE1", F32, "LINEAR", [1, 3, 65, 129], [1, 1, 2, 2], [1, 3, 130, 258]),
    ("RESAMPLE1", F16, "NEAREST_NEIGHBOR", [2, 4, 33, 67], [1, 1, 1.5, 1.5], [2, 4, 49, 100]),
    ("RESAMPLE1", U8, "LINEAR", [1, 8, 64, 257], [1, 1, 0.5, 0.75], [1, 8, 32, 192]),
    ("RESAMPLE", F32, "NEAREST_NEIGHBOR", [1, 16, 31, 1025], [1, 1, 2, 1], [1, 16, 62, 1025]),
    ("RESAMPLE", F16, "LINEAR", [2, 2, 97, 97], [1, 1, 1.25, 3], [2, 2, 121, 291]),
)


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {"depth_space": [], "resample": []}
    for operator, data_type, depth, block, order in DEPTH_SPACE:
        n, c, h, w = depth
        space = [n, c // (block * block), h * block, w * block]
        inp, outp = (depth, space) if operator.startswith("DEPTH") else (space, depth)
        tensors = {"InputTensor": desc(data_type, inp), "OutputTensor": desc(data_type, outp)}
        attrs: dict = {"BlockSize": block}
        if order:
            attrs["Order"] = order
        cid = (f"generated/large/{operator.lower()}/{data_type.name.lower()}/"
               f"{'x'.join(map(str, inp))}")
        out["depth_space"].append(case(
            cid, operator, attrs, tensors, family=FAMILY,
            spec=[cite(f"DML_{operator}_OPERATOR_DESC", "OutputTensor"), cite("NOTES", "3")],
            inputs={"InputTensor": values_for(cid, tensors["InputTensor"])}))
    for operator, data_type, mode, inp, scales, outp in RESAMPLE:
        tensors = {"InputTensor": desc(data_type, inp), "OutputTensor": desc(data_type, outp)}
        attrs = {"InterpolationMode": mode, "Scales": scales}
        if operator == "RESAMPLE1":
            attrs |= {"InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
        cid = (f"generated/large/{operator.lower()}/{mode.lower()}/{data_type.name.lower()}/"
               f"{'x'.join(map(str, inp))}")
        out["resample"].append(case(
            cid, operator, attrs, tensors, family=FAMILY,
            spec=[cite(f"DML_{operator}_OPERATOR_DESC", "Scales"), cite("NOTES", "4")],
            inputs={"InputTensor": smooth_input(cid, tensors["InputTensor"])}))
    return out
