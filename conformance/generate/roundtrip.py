"""Round trips: SPACE_TO_DEPTH1(DEPTH_TO_SPACE1(x)) == x and DEPTH_TO_SPACE1(SPACE_TO_DEPTH1(x))
== x, both orders, BlockSize 1 to 8 (1 is the identity), every data type, odd and prime sizes,
batch > 1. Judged on the backend's own outputs (a relation), with random bit patterns as input
so any value change (a NaN quieted, a float routed through another type) breaks the trip.

Spec: the DEPTH_TO_SPACE1 and SPACE_TO_DEPTH1 pages ("This is the inverse transformation of").
"""

from __future__ import annotations

from conformance.generate.build import ALL_TYPES, chain, cite, desc, values_for

FAMILY = "roundtrip"
DESCRIPTION = "SPACE_TO_DEPTH1 inverts DEPTH_TO_SPACE1 and back (a relation on the backend)"
ORDERS = ("DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH")
#: (Batch, OutputChannelCount, InputHeight, InputWidth) of the depth-form tensor, per shape slot.
SHAPES = ((1, 1, 1, 1), (2, 3, 5, 7), (3, 1, 2, 3), (1, 2, 7, 1), (2, 1, 3, 2))
SPEC = [cite("DML_DEPTH_TO_SPACE1_OPERATOR_DESC", "Description (inverse of SPACE_TO_DEPTH1)"),
        cite("DML_SPACE_TO_DEPTH1_OPERATOR_DESC", "Description (inverse of DEPTH_TO_SPACE1)")]


def _shape(block: int, slot: int) -> tuple[int, int, int, int]:
    n, c, h, w = SHAPES[slot % len(SHAPES)]
    if block >= 5:  # keep the channel count (c * block^2) and the tensor small
        h, w = min(h, 2), min(w, 3)
    return n, c, h, w


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {"depth_space": [], "space_depth": []}
    for order in ORDERS:
        for block in range(1, 9):
            for slot, (data_type, variant) in enumerate(
                    (t, v) for t in ALL_TYPES for v in ("a", "b")):
                n, c, h, w = _shape(block, slot + block)
                depth = desc(data_type, [n, c * block * block, h, w])
                space = desc(data_type, [n, c, h * block, w * block])
                attrs = {"BlockSize": block, "Order": order}
                short = order.lower().replace("_", "-")
                tag = f"{data_type.name.lower()}-{variant}"
                cid = f"generated/roundtrip/depth-space/{short}/b{block}/{tag}"
                out["depth_space"].append(chain(
                    cid, [
                        {"name": "to_space", "operator": "DEPTH_TO_SPACE1", "attributes": attrs,
                         "tensors": {"InputTensor": depth, "OutputTensor": space}},
                        {"name": "back", "operator": "SPACE_TO_DEPTH1", "attributes": attrs,
                         "tensors": {"InputTensor": space, "OutputTensor": depth}}],
                    family=FAMILY, spec=SPEC,
                    inputs={"to_space.InputTensor": values_for(cid, depth),
                            "back.InputTensor": {"from": "to_space.OutputTensor"}},
                    relations=[{"equal": ["back.OutputTensor", "to_space.InputTensor"],
                                "why": "SPACE_TO_DEPTH1 is the inverse of DEPTH_TO_SPACE1"}],
                    tags=[order.lower()]))
                cid = f"generated/roundtrip/space-depth/{short}/b{block}/{tag}"
                out["space_depth"].append(chain(
                    cid, [
                        {"name": "to_depth", "operator": "SPACE_TO_DEPTH1", "attributes": attrs,
                         "tensors": {"InputTensor": space, "OutputTensor": depth}},
                        {"name": "back", "operator": "DEPTH_TO_SPACE1", "attributes": attrs,
                         "tensors": {"InputTensor": depth, "OutputTensor": space}}],
                    family=FAMILY, spec=SPEC,
                    inputs={"to_depth.InputTensor": values_for(cid, space),
                            "back.InputTensor": {"from": "to_depth.OutputTensor"}},
                    relations=[{"equal": ["back.OutputTensor", "to_depth.InputTensor"],
                                "why": "DEPTH_TO_SPACE1 is the inverse of SPACE_TO_DEPTH1"}],
                    tags=[order.lower()]))
    return out
