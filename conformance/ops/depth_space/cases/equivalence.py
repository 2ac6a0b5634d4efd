"""Order equivalences of the depth/space operators, judged as relations on the backend's own
outputs (the equivalence family's depth/space part; the resample package has its own):

- DEPTH_TO_SPACE1 with DEPTH_COLUMN_ROW == DEPTH_TO_SPACE, and SPACE_TO_DEPTH1 with
  DEPTH_COLUMN_ROW == SPACE_TO_DEPTH (the *1 pages' Remarks);
- COLUMN_ROW_DEPTH == DEPTH_COLUMN_ROW after the channel permutation that maps one depth layout
  onto the other (DML_DEPTH_SPACE_ORDER: (BlockHeight, BlockWidth, C) against (C, BlockHeight,
  BlockWidth)).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from conformance.kit.build import ALL_TYPES, chain, cite, desc, values_for
from conformance.kit.family import SEEDS, Example, Picker, example_id
from conformance.ops.depth_space.examples import draw_forms
from conformance.ops.depth_space.pages import ORDER_PAGE

FAMILY = "equivalence"
DESCRIPTION = "*1 at DEPTH_COLUMN_ROW == original; both Orders agree up to a channel permutation"
SHAPES = ((1, 1, 2, 3), (2, 3, 3, 1))  # (N, C', H, W) of the depth form


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


def files() -> dict[str, list[dict]]:
    return {"depth_space": _depth_space()}


@st.composite
def explore(draw: Callable) -> Example:
    """*1 with DEPTH_COLUMN_ROW == the original operator; COLUMN_ROW_DEPTH == DEPTH_COLUMN_ROW
    after the channel permutation between the two depth layouts."""
    pick, cid = Picker(draw), example_id(FAMILY)
    kind = pick("kind", ["dcr-is-v0", "crd-is-permuted-dcr"])
    new = pick("operator", ["DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"])
    data_type = pick("data_type", [t.name for t in ALL_TYPES])
    block, depth, space = draw_forms(pick, data_type, 5)
    seed = pick("seed", SEEDS)
    to_space = new == "DEPTH_TO_SPACE1"
    inp, outp = (depth, space) if to_space else (space, depth)
    tensors = {"InputTensor": inp, "OutputTensor": outp}
    if kind == "dcr-is-v0":
        old = new[:-1]
        return Example(FAMILY, pick.params, chain(
            cid, [{"name": "v1", "operator": new,
                   "attributes": {"BlockSize": block, "Order": "DEPTH_COLUMN_ROW"},
                   "tensors": tensors},
                  {"name": "v0", "operator": old, "attributes": {"BlockSize": block},
                   "tensors": tensors}],
            family=FAMILY, spec=[cite(f"DML_{new}_OPERATOR_DESC", "Remarks")],
            inputs={"v1.InputTensor": values_for(cid, inp, seed),
                    "v0.InputTensor": {"from": "v1.InputTensor"}},
            relations=[{"equal": ["v1.OutputTensor", "v0.OutputTensor"],
                        "why": f"{new} with DEPTH_COLUMN_ROW is equivalent to {old}"}]))
    channels = depth["Sizes"][1]
    dcr_source: dict[str, Any] = {"from": "crd.InputTensor"}
    relation: dict[str, Any] = {"equal": ["crd.OutputTensor", "dcr.OutputTensor"],
                                "why": "the depth layouts differ only in the order of the "
                                       "channels"}
    if to_space:
        dcr_source["take"] = {"axis": 1, "indices": _dcr_from_crd(channels, block)}
    else:
        relation["take"] = {"axis": 1, "indices": _crd_from_dcr(channels, block)}
    return Example(FAMILY, pick.params, chain(
        cid, [{"name": "crd", "operator": new,
               "attributes": {"BlockSize": block, "Order": "COLUMN_ROW_DEPTH"},
               "tensors": tensors},
              {"name": "dcr", "operator": new,
               "attributes": {"BlockSize": block, "Order": "DEPTH_COLUMN_ROW"},
               "tensors": tensors}],
        family=FAMILY, spec=[cite(ORDER_PAGE, "Constants")],
        inputs={"crd.InputTensor": values_for(cid, inp, seed), "dcr.InputTensor": dcr_source},
        relations=[relation]))
