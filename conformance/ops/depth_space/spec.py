"""DEPTH_TO_SPACE, DEPTH_TO_SPACE1, SPACE_TO_DEPTH, SPACE_TO_DEPTH1.

Pure data movement: outputs are bit-exact copies of input elements (spec-notes §3).

Layouts (DML_DEPTH_SPACE_ORDER page), dimensions in parentheses flattened together:
- DEPTH_COLUMN_ROW: depth [N, (BlockHeight, BlockWidth, C), H, W]
- COLUMN_ROW_DEPTH: depth [N, (C, BlockHeight, BlockWidth), H, W]
- both:             space [N, C, (H, BlockHeight), (W, BlockWidth)]
The original operators are the *1 operators with DEPTH_COLUMN_ROW (the *1 pages' Remarks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from conformance.levels import FeatureLevel
from conformance.ops.base import (
    Attribute,
    ExampleKernel,
    OperatorCall,
    OperatorSpec,
    Statement,
    table,
)
from conformance.ops.depth_space.examples import DepthSpaceExamples
from conformance.ops.depth_space.pages import (
    DEPTH_TO_SPACE,
    DEPTH_TO_SPACE1,
    ORDER_PAGE,
    SPACE_TO_DEPTH,
    SPACE_TO_DEPTH1,
)
from conformance.spec import Citation, Violation, notes

ORDERS = {"DEPTH_COLUMN_ROW": 0, "COLUMN_ROW_DEPTH": 1}  # DML_DEPTH_SPACE_ORDER (notes §1)
ORDER = Attribute("Order", "enum", ORDERS, prefix="DML_DEPTH_SPACE_ORDER_",
                  doc="how the channel dimension of the depth tensor holds a block: "
                      "DEPTH_COLUMN_ROW as (BlockHeight, BlockWidth, C), COLUMN_ROW_DEPTH as "
                      "(C, BlockHeight, BlockWidth)")
BLOCK_SIZE = Attribute("BlockSize", "uint",
                       doc="the width and height of the blocks that are moved (at least 1)")

_FLOATS = "FLOAT32, FLOAT16"
_INTS = "FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, UINT16, UINT8"
_ALL = ("FLOAT64, FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8")


def _tables(page: str, first: str) -> tuple:
    """The Tensor support tables of the four pages: FLOAT32/FLOAT16 from 1_0 (original
    operators only), the 8/16/32-bit integers from 2_1, the 64-bit types from 5_0."""
    levels = [("1_0", _FLOATS), ("2_1", _INTS), ("5_0", _ALL)]
    start = [lv for lv, _ in levels].index(first)
    return tuple(table(lv, [4], types, page, f"Tensor support / DML_FEATURE_LEVEL_{lv} and above")
                 for lv, types in levels[start:])


def depth_to_space(x: np.ndarray, block: int, order: str) -> np.ndarray:
    """Reshape/transpose form of DEPTH_TO_SPACE1 on a logical NCHW array (any dtype)."""
    n, c, h, w = x.shape
    cc = c // (block * block)
    if order == "DEPTH_COLUMN_ROW":
        y = x.reshape(n, block, block, cc, h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, cc, block, block, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(n, cc, h * block, w * block)


def space_to_depth(x: np.ndarray, block: int, order: str) -> np.ndarray:
    """Reshape/transpose form of SPACE_TO_DEPTH1: the inverse of depth_to_space."""
    n, c, h, w = x.shape
    hh, ww = h // block, w // block
    y = x.reshape(n, c, hh, block, ww, block)
    if order == "DEPTH_COLUMN_ROW":
        y = y.transpose(0, 3, 5, 1, 2, 4)
    else:
        y = y.transpose(0, 1, 3, 5, 2, 4)
    return y.reshape(n, c * block * block, hh, ww)


def blocks_to_space(x: np.ndarray, sizes: Sequence[int], attributes: Mapping[str, Any]
                    ) -> np.ndarray:
    """The example backend's DEPTH_TO_SPACE(1): the blocks in the call's Order (DEPTH_TO_SPACE
    states none: DEPTH_COLUMN_ROW)."""
    return depth_to_space(x, attributes["BlockSize"],
                          attributes.get("Order", "DEPTH_COLUMN_ROW"))


def blocks_to_depth(x: np.ndarray, sizes: Sequence[int], attributes: Mapping[str, Any]
                    ) -> np.ndarray:
    """The example backend's SPACE_TO_DEPTH(1): the blocks in the call's Order (SPACE_TO_DEPTH
    states none: DEPTH_COLUMN_ROW)."""
    return space_to_depth(x, attributes["BlockSize"],
                          attributes.get("Order", "DEPTH_COLUMN_ROW"))


#: The formula, by direction (notes §3 holds both, checked against the pages' examples).
_FORMULA = {
    True: "For output element (n, c, y, x), with b = BlockSize and C' = InputChannelCount / b^2, "
          "the input element (n, channel, y // b, x // b), where channel = ((y % b) * b + "
          "(x % b)) * C' + c for DEPTH_COLUMN_ROW, and c * b^2 + (y % b) * b + (x % b) for "
          "COLUMN_ROW_DEPTH.",
    False: "The exact inverse of DEPTH_TO_SPACE1 of the same BlockSize b and Order: output "
           "element (n, channel, y, x) holds input element (n, c, y * b + i, x * b + j), where "
           "channel = (i * b + j) * C + c for DEPTH_COLUMN_ROW, and c * b^2 + i * b + j for "
           "COLUMN_ROW_DEPTH (C = InputChannelCount, 0 <= i, j < b).",
}
_SIZES = {True: "{N, C / (BlockSize * BlockSize), H * BlockSize, W * BlockSize}",
          False: "{N, C * BlockSize * BlockSize, H / BlockSize, W / BlockSize}"}


class DepthSpaceFamily(OperatorSpec):
    """What the four operators share: the block movement, one way or the other, in an Order
    (DEPTH_COLUMN_ROW for the original operators, which state none)."""

    to_space: bool  # True for DEPTH_TO_SPACE(1)
    examples_type = DepthSpaceExamples

    def order(self, call: OperatorCall) -> str:
        return call.attributes.get("Order", "DEPTH_COLUMN_ROW")

    def formula(self) -> list[Statement]:
        out = [Statement(_FORMULA[self.to_space], notes("3"))]
        if not any(a is ORDER for a in self.attributes):
            successor = DEPTH_TO_SPACE1 if self.to_space else SPACE_TO_DEPTH1
            out.append(Statement(f"The Order is DEPTH_COLUMN_ROW: the operator is {self.name}1 "
                                 "with that Order (its page's Remarks).",
                                 Citation(successor, "Remarks")))
        sizes = (Citation(self.page, "OutputTensor") if self.to_space else notes("3"))
        out.append(Statement(f"OutputTensor's Sizes are {_SIZES[self.to_space]}.", sizes))
        out.append(Statement("Judged bit for bit: every output element is a copy of an input "
                             "element (NaN payloads, -0.0 and denormals included).", notes("7")))
        return out

    def tensor_doc(self, name: str) -> str:
        if name == "InputTensor":
            return "4 dimensions {N, C, H, W}: batch, channels, height, width"
        return f"4 dimensions {_SIZES[self.to_space]}"

    def infer_output_sizes(self, input_sizes: Sequence[int], attributes: Mapping[str, Any]
                           ) -> tuple[int, ...]:
        n, c, h, w = input_sizes
        b = attributes["BlockSize"]
        if b < 1:
            raise ValueError("BlockSize must be at least 1")
        if self.to_space:
            # DEPTH_TO_SPACE1 page, OutputTensor: {N, C / (B*B), H * B, W * B}
            if c % (b * b):
                raise ValueError(f"InputChannelCount {c} is not divisible by BlockSize^2 {b * b}")
            return (n, c // (b * b), h * b, w * b)
        # SPACE_TO_DEPTH1: {N, C * B*B, H / B, W / B}; the page's member text repeats the
        # depth-to-space formula, its examples give this one (spec-notes §3, doc error).
        if h % b or w % b:
            raise ValueError(f"InputHeight {h} and InputWidth {w} must be divisible by {b}")
        return (n, c * b * b, h // b, w // b)

    def check(self, call: OperatorCall, level: FeatureLevel) -> list[Violation]:
        out = []
        b = call.attributes["BlockSize"]
        inp = call.tensors["InputTensor"].sizes
        if b < 1:
            out.append(Violation("depth_space.block_size",
                                 f"BlockSize {b} must be at least 1 (the width and height of the "
                                 "blocks that are moved)", Citation(self.page, "BlockSize")))
        order = call.attributes.get("Order", "DEPTH_COLUMN_ROW")
        if order not in ORDERS:
            out.append(Violation("depth_space.order",
                                 f"Order {order!r} is not a DML_DEPTH_SPACE_ORDER value",
                                 Citation(ORDER_PAGE, "Constants")))
        if b >= 1 and len(inp) == 4:
            _, c, h, w = inp
            if self.to_space and c % (b * b):
                out.append(Violation(
                    "depth_space.channels_divisible",
                    f"InputChannelCount {c} is not divisible by BlockSize * BlockSize {b * b}; "
                    "OutputChannelCount is InputChannelCount / (BlockSize * BlockSize)",
                    Citation(self.page, "OutputTensor")))
            if not self.to_space and (h % b or w % b):
                out.append(Violation(
                    "depth_space.spatial_divisible",
                    f"InputHeight {h} and InputWidth {w} must be multiples of BlockSize {b}; "
                    "the output is {N, C * B * B, H / B, W / B}",
                    Citation("NOTES", "3")))
            if len(call.tensors["OutputTensor"].sizes) == 4:
                out += self.check_output_sizes(call)
        return out

    def reference(self, call: OperatorCall, inputs: Mapping[str, np.ndarray]
                  ) -> dict[str, np.ndarray]:
        x = inputs["InputTensor"]
        bits = x.view(np.dtype(f"<u{x.dtype.itemsize}"))  # move bits, never values
        move = depth_to_space if self.to_space else space_to_depth
        y = move(bits, call.attributes["BlockSize"], self.order(call))
        return {"OutputTensor": np.ascontiguousarray(y).view(x.dtype)}


class DepthToSpace(DepthSpaceFamily):
    name = "DEPTH_TO_SPACE"
    type_value = 69
    introduced = FeatureLevel.FL_1_0
    page = DEPTH_TO_SPACE
    attributes = (BLOCK_SIZE,)
    support = _tables(page, "1_0")
    to_space = True
    example_kernel = ExampleKernel(blocks_to_space, (depth_to_space,))


class DepthToSpace1(DepthSpaceFamily):
    name = "DEPTH_TO_SPACE1"
    type_value = 113
    introduced = FeatureLevel.FL_2_1
    page = DEPTH_TO_SPACE1
    attributes = (BLOCK_SIZE, ORDER)
    support = _tables(page, "2_1")
    to_space = True
    example_kernel = ExampleKernel(blocks_to_space, (depth_to_space,))


class SpaceToDepth(DepthSpaceFamily):
    name = "SPACE_TO_DEPTH"
    type_value = 68
    introduced = FeatureLevel.FL_1_0
    page = SPACE_TO_DEPTH
    attributes = (BLOCK_SIZE,)
    support = _tables(page, "1_0")
    to_space = False
    example_kernel = ExampleKernel(blocks_to_depth, (space_to_depth,))


class SpaceToDepth1(DepthSpaceFamily):
    name = "SPACE_TO_DEPTH1"
    type_value = 114
    introduced = FeatureLevel.FL_2_1
    page = SPACE_TO_DEPTH1
    attributes = (BLOCK_SIZE, ORDER)
    support = _tables(page, "2_1")
    to_space = False
    example_kernel = ExampleKernel(blocks_to_depth, (space_to_depth,))
