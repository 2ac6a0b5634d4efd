"""Readable blocks: every depth/space operator with every data type of its tables (at the
lowest feature level that takes it), on inputs whose elements are distinct small integers
exactly representable in the type (ramps 1, 2, 3, ... like the pages' examples), so that any
misplaced element is visible in the output and names its source. Each (operator, data type)
slice gets, for each Order of the *1 operators:

- the pages' own example (Sizes {1, 8, 2, 3} <-> {1, 2, 4, 6}, BlockSize 2) in that type, judged
  against the page's values;
- BlockSize 1, 2, 3, 4, 5 and 6 on packed tensors, with a channel count of 2 or 3 in the space
  form (so that the two orders differ) and planes that are not square (so that height and width
  cannot be confused unseen); every tensor of an 8-bit type keeps at most 192 elements, so its
  values stay distinct;
- BlockSize 2 and 3 with each layout: input or output padded, NHWC, in reversed dimension
  order, a broadcast input (stride 0 on N and H), and TotalTensorSizeInBytes two elements per
  row above the minimum;
- for the types float32 cannot hold exactly (INT32, UINT32, INT64, UINT64, FLOAT64), BlockSize
  2 and 3 on ramps of odd numbers from 2^24 + 1 (32-bit), 2^53 + 1 (64-bit integers) and
  2^52 + 1 (FLOAT64: 53-bit significands), which a copy through float32 (or through float64, for
  the 64-bit integers) rounds.

NaN payloads, signalling NaNs, subnormals and integer extremes are the bitlevel family's, which
covers every slice. Judged bit-exact against the reference (the page's values for the examples).

Spec: each page's OutputTensor and BlockSize members and Examples; DML_DEPTH_SPACE_ORDER; NOTES §3
(the index formulas; outputs are bit-exact copies); dml-strides and DML_BUFFER_TENSOR_DESC for the
layouts.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from conformance import ops
from conformance.kit.build import (
    case,
    cite,
    desc,
    iota_input,
    nhwc_strides,
    padded_strides,
    reversed_strides,
)
from conformance.ops.base import OperatorSpec
from conformance.ops.depth_space.examples import ORDERS
from conformance.tensors import DataType, TensorDesc

FAMILY = "blocks"
DESCRIPTION = "distinct small values per type: BlockSize 1-6, both orders, every layout"
OPERATORS = ("DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1")
#: BlockSize -> the depth form (N, C, H, W): C / (BlockSize^2) is 2 or 3 and H != W.
SHAPES = {1: (2, 3, 2, 5), 2: (2, 8, 2, 3), 3: (1, 18, 2, 3), 4: (1, 32, 2, 3),
          5: (1, 50, 1, 3), 6: (1, 72, 1, 2)}
LAYOUT_BLOCKS = (2, 3)
#: The first value of the ramps float32 cannot hold (odd numbers from there on).
BEYOND_FLOAT32 = {DataType.INT32: 2**24 + 1, DataType.UINT32: 2**24 + 1,
                  DataType.INT64: 2**53 + 1, DataType.UINT64: 2**53 + 1,
                  DataType.FLOAT64: 2**52 + 1}

#: The pages' example (DML_DEPTH_TO_SPACE1_OPERATOR_DESC, DML_SPACE_TO_DEPTH1_OPERATOR_DESC):
#: the depth form {1, 8, 2, 3} holds 9c + 3h + w; its space form {1, 2, 4, 6} per Order.
EXAMPLE_DEPTH = [[[[9 * c + 3 * h + w for w in range(3)] for h in range(2)] for c in range(8)]]
EXAMPLE_SPACE = {
    "DEPTH_COLUMN_ROW": [[[[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56],
                           [3, 21, 4, 22, 5, 23], [39, 57, 40, 58, 41, 59]],
                          [[9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65],
                           [12, 30, 13, 31, 14, 32], [48, 66, 49, 67, 50, 68]]]],
    "COLUMN_ROW_DEPTH": [[[[0, 9, 1, 10, 2, 11], [18, 27, 19, 28, 20, 29],
                           [3, 12, 4, 13, 5, 14], [21, 30, 22, 31, 23, 32]],
                          [[36, 45, 37, 46, 38, 47], [54, 63, 55, 64, 56, 65],
                           [39, 48, 40, 49, 41, 50], [57, 66, 58, 67, 59, 68]]]],
}


def _broadcast(sizes: list[int]) -> list[int]:
    """Stride 0 on N and H, packed C and W: every batch and row repeats the first one."""
    _, _, _, w = sizes
    return [0, w, 0, 1]


def _above_minimum(tensor: dict) -> dict:
    """TotalTensorSizeInBytes two elements per row above the minimum (a multiple of 4)."""
    d = TensorDesc.from_json(tensor)
    rows = d.element_count // d.sizes[-1]
    extra = (rows * 2 * d.data_type.size + 3) & ~3
    return {**tensor, "TotalTensorSizeInBytes": d.minimum_size + extra}


def _strided(strides: Callable[[list[int]], list[int]]) -> Callable[[dict], dict]:
    return lambda tensor: {**tensor, "Strides": strides(tensor["Sizes"])}


#: Layout -> (which tensor it changes, how).
LAYOUTS: dict[str, tuple[str, Callable[[dict], dict]]] = {
    "input-padded": ("InputTensor", _strided(padded_strides)),
    "output-padded": ("OutputTensor", _strided(padded_strides)),
    "input-nhwc": ("InputTensor", _strided(nhwc_strides)),
    "output-nhwc": ("OutputTensor", _strided(nhwc_strides)),
    "input-reversed": ("InputTensor", _strided(reversed_strides)),
    "output-reversed": ("OutputTensor", _strided(reversed_strides)),
    "input-broadcast": ("InputTensor", _strided(_broadcast)),
    "input-above-minimum": ("InputTensor", _above_minimum),
    "output-above-minimum": ("OutputTensor", _above_minimum),
}
LAYOUT_CITES = {
    "padded": cite("dml-strides", "Padding with strides"),
    "nhwc": cite("dml-strides", "DirectML buffer tensor descriptions (Packed NHWC)"),
    "reversed": cite("dml-strides", "Higher dimensions (strides express the layout)"),
    "broadcast": cite("dml-strides", "Broadcasting with strides"),
    "above-minimum": cite("DML_BUFFER_TENSOR_DESC", "TotalTensorSizeInBytes"),
}


def ramp_start(data_type: DataType, count: int) -> int:
    """The first value of a ramp of count distinct values: 1, or lower where the type's range
    needs it (INT8 ramps longer than 127 end at 127)."""
    if data_type == DataType.INT8 and count > 127:
        return 128 - count
    return 1


def _tensors(spec: OperatorSpec, data_type: DataType, depth: tuple[int, ...], block: int
             ) -> dict[str, dict]:
    n, c, h, w = depth
    space = [n, c // (block * block), h * block, w * block]
    inp, outp = (list(depth), space) if spec.name.startswith("DEPTH") else (space, list(depth))
    return {"InputTensor": desc(data_type, inp), "OutputTensor": desc(data_type, outp)}


def _spec_cites(spec: OperatorSpec, order: str | None) -> list[dict]:
    out = [cite(spec.page, "OutputTensor"), cite(spec.page, "BlockSize"), cite("NOTES", "3")]
    if order:
        out.insert(1, cite("DML_DEPTH_SPACE_ORDER", "Constants"))
    return out


def _one(spec: OperatorSpec, data_type: DataType, order: str | None, block: int, slug: str,
         tensors: dict[str, dict], start: int, what: str, extra_cites: list[dict],
         prefix: str = "generated/blocks") -> dict:
    attrs: dict = {"BlockSize": block}
    order_slug = ""
    if order:
        attrs["Order"] = order
        order_slug = order.lower().replace("_", "-") + "/"
    t = data_type.name.lower()
    cid = f"{prefix}/{spec.name.lower()}/{order_slug}b{block}/{slug}/{t}"
    count = TensorDesc.from_json(tensors["InputTensor"]).element_count
    return case(
        cid, spec.name, attrs, tensors, family=FAMILY,
        spec=_spec_cites(spec, order) + extra_cites,
        inputs={"InputTensor": iota_input(tensors["InputTensor"], start=start,
                                          step=2 if start > 2**20 else 1)},
        tags=[*slug.split("/"), *([order.lower()] if order else [])],
        description=(f"{data_type.name} {what} {start}, {start + (2 if start > 2**20 else 1)}, "
                     f"... ({count} values) through {spec.name} BlockSize {block}"
                     + (f", {order}" if order else "")
                     + ": each output element is the one input element NOTES §3 names"))


def _example(spec: OperatorSpec, data_type: DataType, order: str | None) -> dict:
    """The page's example in another type: the page's values in, the page's values out."""
    shown = order or "DEPTH_COLUMN_ROW"  # the original operators are DEPTH_COLUMN_ROW
    depth = desc(data_type, [1, 8, 2, 3])
    space = desc(data_type, [1, 2, 4, 6])
    to_space = spec.name.startswith("DEPTH")
    inp, outp = (depth, space) if to_space else (space, depth)
    values_in, values_out = ((EXAMPLE_DEPTH, EXAMPLE_SPACE[shown]) if to_space
                             else (EXAMPLE_SPACE[shown], EXAMPLE_DEPTH))
    attrs: dict = {"BlockSize": 2}
    order_slug = ""
    if order:
        attrs["Order"] = order
        order_slug = order.lower().replace("_", "-") + "/"
    page = f"DML_{'DEPTH_TO_SPACE1' if to_space else 'SPACE_TO_DEPTH1'}_OPERATOR_DESC"
    number = 1 if shown == "DEPTH_COLUMN_ROW" else 2
    return case(
        f"generated/blocks/{spec.name.lower()}/{order_slug}b2/page-example/"
        f"{data_type.name.lower()}",
        spec.name, attrs, {"InputTensor": inp, "OutputTensor": outp}, family=FAMILY,
        spec=[cite(page, f"Examples / Example {number}"), *_spec_cites(spec, order)],
        inputs={"InputTensor": {"values": values_in}},
        expected={"OutputTensor": {"values": values_out}},
        tags=["page-example", *([order.lower()] if order else [])],
        description=f"the page's Example {number} ({shown}, UINT32 on the page) in "
                    f"{data_type.name}: the page's values out"
                    + ("" if order else " (the original operator is DEPTH_COLUMN_ROW: the *1 "
                                        "pages' Remarks)"))


def slice_cases(spec: OperatorSpec, data_type: DataType) -> list[dict]:
    """Every blocks case of one (operator, data type) slice."""
    out = []
    orders = ORDERS if "Order" in {a.name for a in spec.attributes} else (None,)
    for order in orders:
        out.append(_example(spec, data_type, order))
        for block, depth in SHAPES.items():
            tensors = _tensors(spec, data_type, depth, block)
            count = TensorDesc.from_json(tensors["InputTensor"]).element_count
            out.append(_one(spec, data_type, order, block, "packed", tensors,
                            ramp_start(data_type, count), "ramp", []))
        for block in LAYOUT_BLOCKS:
            base = _tensors(spec, data_type, SHAPES[block], block)
            count = TensorDesc.from_json(base["InputTensor"]).element_count
            for slug, (member, change) in LAYOUTS.items():
                tensors = {**base, member: change(base[member])}
                layout = slug.split("-", 1)[1]
                out.append(_one(spec, data_type, order, block, slug, tensors,
                                ramp_start(data_type, count), "ramp",
                                [LAYOUT_CITES[layout], cite("DML_BUFFER_TENSOR_DESC",
                                                            "Strides")]))
        if data_type in BEYOND_FLOAT32:
            for block in LAYOUT_BLOCKS:
                tensors = _tensors(spec, data_type, SHAPES[block], block)
                out.append(_one(spec, data_type, order, block, "beyond-float32", tensors,
                                BEYOND_FLOAT32[data_type], "odd numbers beyond float32's "
                                "24-bit significand:", []))
    return out


#: The deep tier (conformance/generate/deep.py): every BlockSize from 1 to 8.
DEEP_BLOCKS = range(1, 9)
#: The most distinct ramp values a type holds from ramp_start on (1, 2, 3, ...: float16 holds
#: the integers up to 2048 exactly; 8-bit ramps end at 255 or 127).
DISTINCT = {DataType.INT8: 255, DataType.UINT8: 255, DataType.FLOAT16: 2048}


def deep_shapes(block: int, data_type: DataType) -> dict[str, tuple[int, ...]]:
    """The depth forms (N, C, H, W) of the deep tier at one BlockSize: two or three channels in
    the space form (so that the orders differ), one with a batch of 2 and a non-square plane;
    each as large as keeps every ramp value of the type distinct."""
    b2 = block * block
    limit = DISTINCT.get(data_type, 1 << 30)
    wide, batched = (1, 2 * b2, 1, 2), (2, 3 * b2, 2, 1)
    return {"c2": wide if 2 * 2 * b2 <= limit else (1, 2 * b2, 1, 1),
            "c3-n2": batched if 12 * b2 <= limit else (1, 3 * b2, 1, 1)}


def deep_slice(spec: OperatorSpec, data_type: DataType) -> list[dict]:
    """The deep tier of one slice: the full cross product of BlockSize 1-8, each Order, both
    shapes of deep_shapes() and every layout (packed and each of LAYOUTS), on ramps of distinct
    values; ids deep/blocks/..., judged bit-exact against the reference like the family's."""
    out = []
    orders = ORDERS if "Order" in {a.name for a in spec.attributes} else (None,)
    for order in orders:
        for block in DEEP_BLOCKS:
            for shape_slug, depth in deep_shapes(block, data_type).items():
                base = _tensors(spec, data_type, depth, block)
                count = TensorDesc.from_json(base["InputTensor"]).element_count
                start = ramp_start(data_type, count)
                out.append(_one(spec, data_type, order, block, f"{shape_slug}/packed", base,
                                start, "ramp", [], prefix="deep/blocks"))
                for slug, (member, change) in LAYOUTS.items():
                    tensors = {**base, member: change(base[member])}
                    out.append(_one(spec, data_type, order, block, f"{shape_slug}/{slug}",
                                    tensors, start, "ramp",
                                    [LAYOUT_CITES[slug.split("-", 1)[1]],
                                     cite("DML_BUFFER_TENSOR_DESC", "Strides")],
                                    prefix="deep/blocks"))
    return out


def deep_files() -> dict[str, Callable[[], list[dict]]]:
    """The deep tier's files of this family: stem -> its cases' builder (one per slice)."""
    return {f"{name.lower()}_{t.name.lower()}": partial(deep_slice, ops.get(name), t)
            for name in OPERATORS for t in ops.get(name).data_types}


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for name in OPERATORS:
        spec = ops.get(name)
        out[name.lower()] = [c for t in spec.data_types for c in slice_cases(spec, t)]
    return out
