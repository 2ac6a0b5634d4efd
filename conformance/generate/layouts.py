"""Strided layouts: every operator with its input and output padded, NHWC, with the dimension
order reversed, with broadcast (stride 0) inputs, and with TotalTensorSizeInBytes above the
minimum. The result must equal the packed run: each case runs the strided call and a packed
call on the same logical input (the packed input is read back from the strided one) and asks
for equal outputs. Linear resampling is also judged against the reference, with its tolerance,
instead of bit equality between the two runs (a backend may take another arithmetic path).

Spec: the dml-strides page and DML_BUFFER_TENSOR_DESC (Strides, TotalTensorSizeInBytes).
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.generate.build import (
    chain,
    cite,
    desc,
    nhwc_strides,
    padded_strides,
    reversed_strides,
    smooth_input,
    values_for,
)
from conformance.tensors import DataType, TensorDesc

FAMILY = "layouts"
DESCRIPTION = "padded, NHWC, reversed, broadcast and oversized descs equal the packed run"

DATA_MOVEMENT_TYPES = tuple(DataType)
RESAMPLE_TYPES = (DataType.FLOAT32, DataType.FLOAT16, DataType.UINT8)


def _broadcast(sizes: list[int]) -> list[int]:
    """Stride 0 on the batch and height dimensions, packed elsewhere (CalculateStrides with
    broadcast N and H, dml-helper-functions)."""
    _, c, _, w = sizes
    return [0, w, 0, 1] if c > 1 else [0, 0, 0, 1]


LAYOUTS: dict[str, Callable[[list[int]], list[int]]] = {
    "padded": padded_strides,
    "nhwc": nhwc_strides,
    "reversed": reversed_strides,
}

OPERATORS = {
    # name: (input sizes, output sizes, attributes)
    "DEPTH_TO_SPACE": ([2, 4, 3, 5], [2, 1, 6, 10], {"BlockSize": 2}),
    "DEPTH_TO_SPACE1": ([2, 8, 3, 5], [2, 2, 6, 10],
                        {"BlockSize": 2, "Order": "COLUMN_ROW_DEPTH"}),
    "SPACE_TO_DEPTH": ([2, 1, 6, 9], [2, 9, 2, 3], {"BlockSize": 3}),
    "SPACE_TO_DEPTH1": ([2, 2, 6, 4], [2, 8, 3, 2],
                        {"BlockSize": 2, "Order": "COLUMN_ROW_DEPTH"}),
    "RESAMPLE": ([2, 3, 4, 5], [2, 3, 8, 10],
                 {"InterpolationMode": "LINEAR", "Scales": [1, 1, 2, 2]}),
    "RESAMPLE1": ([2, 3, 4, 5], [3, 3, 7, 8],
                  {"InterpolationMode": "LINEAR", "Scales": [1.5, 1, 1.75, 1.5],
                   "InputPixelOffsets": [0.5, 0.25, 0.5, 0.5],
                   "OutputPixelOffsets": [-0.5, 0, -0.5, -0.3]}),
}


def _variants(sizes_in: list[int], sizes_out: list[int]) -> list[tuple[str, dict, dict]]:
    """(slug, input desc fields, output desc fields) for each strided layout."""
    out = []
    for name, strides in LAYOUTS.items():
        out.append((f"input-{name}", {"Strides": strides(sizes_in)}, {}))
        out.append((f"output-{name}", {}, {"Strides": strides(sizes_out)}))
    out.append(("input-broadcast", {"Strides": _broadcast(sizes_in)}, {}))
    out.append(("both-padded", {"Strides": padded_strides(sizes_in)},
                {"Strides": padded_strides(sizes_out)}))
    out.append(("total-above-minimum", {"extra": 64}, {"extra": 36}))
    return out


def _with(base: dict, fields: dict) -> dict:
    d = {**base, **{k: v for k, v in fields.items() if k != "extra"}}
    if "extra" in fields:
        d["TotalTensorSizeInBytes"] = TensorDesc.from_json(d).minimum_size + fields["extra"]
    return d


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for name, (sizes_in, sizes_out, attrs) in OPERATORS.items():
        resample = name.startswith("RESAMPLE")
        cases = out.setdefault(name.lower(), [])
        for modes in (["NEAREST_NEIGHBOR", "LINEAR"] if resample else [None]):
            call_attrs = {**attrs, "InterpolationMode": modes} if modes else attrs
            for data_type in (RESAMPLE_TYPES if resample else DATA_MOVEMENT_TYPES):
                packed_in, packed_out = desc(data_type, sizes_in), desc(data_type, sizes_out)
                for slug, in_fields, out_fields in _variants(sizes_in, sizes_out):
                    mode = f"{modes.lower()}/" if modes else ""
                    cid = (f"generated/layouts/{name.lower()}/{mode}{slug}/"
                           f"{data_type.name.lower()}")
                    strided = {"InputTensor": _with(packed_in, in_fields),
                               "OutputTensor": _with(packed_out, out_fields)}
                    linear = modes == "LINEAR"
                    source = (smooth_input if resample else values_for)(
                        cid, strided["InputTensor"])
                    cases.append(chain(
                        cid, [
                            {"name": "strided", "operator": name, "attributes": call_attrs,
                             "tensors": strided},
                            {"name": "packed", "operator": name, "attributes": call_attrs,
                             "tensors": {"InputTensor": packed_in, "OutputTensor": packed_out}}],
                        family=FAMILY,
                        spec=[cite("dml-strides", "DirectML buffer tensor descriptions"),
                              cite("DML_BUFFER_TENSOR_DESC", "Strides")],
                        inputs={"strided.InputTensor": source,
                                "packed.InputTensor": {"from": "strided.InputTensor"}},
                        expected=({"strided.OutputTensor": "reference",
                                   "packed.OutputTensor": "reference"} if linear else None),
                        relations=[] if linear else [
                            {"equal": ["strided.OutputTensor", "packed.OutputTensor"],
                             "why": "a layout changes where elements live, not their values"}],
                        tags=[slug.split("-", 1)[1]]))
    return out
