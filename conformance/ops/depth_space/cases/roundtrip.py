"""Round trips: SPACE_TO_DEPTH1(DEPTH_TO_SPACE1(x)) == x and DEPTH_TO_SPACE1(SPACE_TO_DEPTH1(x))
== x, both orders, BlockSize 1 to 8 (1 is the identity), every data type, odd and prime sizes,
batch > 1. Judged on the backend's own outputs (a relation), with random bit patterns as input
so any value change (a NaN quieted, a float routed through another type) breaks the trip.

Spec: the DEPTH_TO_SPACE1 and SPACE_TO_DEPTH1 pages ("This is the inverse transformation of").
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st

from conformance.kit.build import ALL_TYPES, chain, cite, desc, values_for
from conformance.kit.family import SEEDS, Example, Picker, example_id
from conformance.ops.depth_space.examples import ORDERS, draw_forms

FAMILY = "roundtrip"
DESCRIPTION = "SPACE_TO_DEPTH1 inverts DEPTH_TO_SPACE1 and back (a relation on the backend)"
TYPES = tuple(t.name for t in ALL_TYPES)
#: (Batch, OutputChannelCount, InputHeight, InputWidth) of the depth-form tensor, per shape slot.
SHAPES = ((1, 1, 1, 1), (2, 3, 5, 7), (3, 1, 2, 3), (1, 2, 7, 1), (2, 1, 3, 2))
SPEC = [cite("DML_DEPTH_TO_SPACE1_OPERATOR_DESC", "Description (inverse of SPACE_TO_DEPTH1)"),
        cite("DML_SPACE_TO_DEPTH1_OPERATOR_DESC", "Description (inverse of DEPTH_TO_SPACE1)")]


def _shape(block: int, slot: int) -> tuple[int, int, int, int]:
    n, c, h, w = SHAPES[slot % len(SHAPES)]
    if block >= 5:  # keep the channel count (c * block^2) and the tensor small
        h, w = min(h, 2), min(w, 3)
    return n, c, h, w


def trip(cid: str, first: str, second: str, attrs: dict, start: dict, middle: dict,
         order: str) -> dict:
    """first(x) then second(...) back: the result must equal x bit for bit."""
    name = "to_space" if first == "DEPTH_TO_SPACE1" else "to_depth"
    return chain(
        cid, [
            {"name": name, "operator": first, "attributes": attrs,
             "tensors": {"InputTensor": start, "OutputTensor": middle}},
            {"name": "back", "operator": second, "attributes": attrs,
             "tensors": {"InputTensor": middle, "OutputTensor": start}}],
        family=FAMILY, spec=SPEC,
        inputs={f"{name}.InputTensor": values_for(cid, start),
                "back.InputTensor": {"from": f"{name}.OutputTensor"}},
        relations=[{"equal": ["back.OutputTensor", f"{name}.InputTensor"],
                    "why": f"{second} is the inverse of {first}"}],
        tags=[order.lower()])


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
                where = f"{order.lower().replace('_', '-')}/b{block}/" \
                        f"{data_type.name.lower()}-{variant}"
                out["depth_space"].append(trip(
                    f"generated/roundtrip/depth-space/{where}", "DEPTH_TO_SPACE1",
                    "SPACE_TO_DEPTH1", attrs, depth, space, order))
                out["space_depth"].append(trip(
                    f"generated/roundtrip/space-depth/{where}", "SPACE_TO_DEPTH1",
                    "DEPTH_TO_SPACE1", attrs, space, depth, order))
    return out


@st.composite
def explore(draw: Callable) -> Example:
    """SPACE_TO_DEPTH1(DEPTH_TO_SPACE1(x)) == x, and the other way round (a relation)."""
    pick, cid = Picker(draw), example_id(FAMILY)
    to_space_first = pick("direction", ["depth-space", "space-depth"]) == "depth-space"
    order = pick("order", ORDERS)
    data_type = pick("data_type", TYPES)
    block, depth, space = draw_forms(pick, data_type, 8)
    seed = pick("seed", SEEDS)
    attrs = {"BlockSize": block, "Order": order}
    first, back = "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"
    start, middle = depth, space
    if not to_space_first:
        first, back, start, middle = back, first, middle, start
    return Example(FAMILY, pick.params, chain(
        cid, [{"name": "first", "operator": first, "attributes": attrs,
               "tensors": {"InputTensor": start, "OutputTensor": middle}},
              {"name": "back", "operator": back, "attributes": attrs,
               "tensors": {"InputTensor": middle, "OutputTensor": start}}],
        family=FAMILY, spec=SPEC,
        inputs={"first.InputTensor": values_for(cid, start, seed),
                "back.InputTensor": {"from": "first.OutputTensor"}},
        relations=[{"equal": ["back.OutputTensor", "first.InputTensor"],
                    "why": f"{back} is the inverse of {first}"}],
        tags=[order.lower()]))
