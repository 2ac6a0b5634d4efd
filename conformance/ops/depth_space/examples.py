"""The example calls the depth/space operators give the generic case families (their Examples,
the hooks of docs/operators.md), as plain data.

Every call is pure data movement (NOTES §3): its inputs are random bit patterns, and every
operator takes every data type from DML_FEATURE_LEVEL_5_0. Shapes come in pairs: the depth form
{N, C * B * B, H, W} and the space form {N, C, H * B, W * B}; DEPTH_TO_SPACE(1) reads the first
and writes the second, SPACE_TO_DEPTH(1) the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from conformance.ops.base import Attribute
from conformance.ops.depth_space.pages import (
    DEPTH_TO_SPACE,
    DEPTH_TO_SPACE1,
    SPACE_TO_DEPTH,
    SPACE_TO_DEPTH1,
)
from conformance.ops.examples import (
    Breaking,
    Call,
    ExampleCall,
    Examples,
    Operator,
    Pick,
    desc,
    set_attributes,
    set_fields,
    set_sizes,
)
from conformance.spec import Citation, Page, notes
from conformance.tensors import DataType

ALL_TYPES = tuple(DataType)
ORDERS = ("DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH")
F32, F16, U8, I64 = DataType.FLOAT32, DataType.FLOAT16, DataType.UINT8, DataType.INT64

#: The bitlevel family's calls: (BlockSize, the depth side's sizes [N, C, H, W]); every one has
#: at least as many elements as there are special values of a type, so each case holds them all.
BITLEVEL: tuple[tuple[int, list[int]], ...] = (
    (2, [2, 4, 3, 2]), (1, [1, 3, 4, 5]), (2, [1, 8, 2, 3]), (3, [1, 9, 2, 2]),
    (4, [1, 16, 2, 1]), (2, [3, 4, 2, 2]), (3, [2, 18, 1, 2]), (2, [1, 12, 3, 1]),
    (5, [1, 25, 1, 1]), (2, [1, 4, 5, 3]))

#: The layouts family's call per operator: (input sizes, output sizes, attributes).
LAYOUTS: dict[str, tuple[list[int], list[int], dict[str, Any]]] = {
    "DEPTH_TO_SPACE": ([2, 4, 3, 5], [2, 1, 6, 10], {"BlockSize": 2}),
    "DEPTH_TO_SPACE1": ([2, 8, 3, 5], [2, 2, 6, 10],
                        {"BlockSize": 2, "Order": "COLUMN_ROW_DEPTH"}),
    "SPACE_TO_DEPTH": ([2, 1, 6, 9], [2, 9, 2, 3], {"BlockSize": 3}),
    "SPACE_TO_DEPTH1": ([2, 2, 6, 4], [2, 8, 3, 2],
                        {"BlockSize": 2, "Order": "COLUMN_ROW_DEPTH"}),
}

#: The large family's calls: (operator, data type, depth form (N, C, H, W), BlockSize, Order).
LARGE = (
    ("DEPTH_TO_SPACE1", F32, [2, 64, 33, 65], 2, "DEPTH_COLUMN_ROW"),
    ("DEPTH_TO_SPACE1", U8, [1, 36, 17, 257], 3, "COLUMN_ROW_DEPTH"),
    ("DEPTH_TO_SPACE", F16, [3, 16, 9, 1025], 2, None),
    ("SPACE_TO_DEPTH1", F32, [2, 64, 33, 65], 2, "COLUMN_ROW_DEPTH"),
    ("SPACE_TO_DEPTH1", I64, [1, 64, 5, 129], 4, "DEPTH_COLUMN_ROW"),
    ("SPACE_TO_DEPTH", U8, [2, 36, 17, 85], 3, None),
)


def page(operator: str) -> Page:
    """The spec page of one of this package's operators, by its name."""
    pages = (DEPTH_TO_SPACE, DEPTH_TO_SPACE1, SPACE_TO_DEPTH, SPACE_TO_DEPTH1)
    return {str(p): p for p in pages}[f"DML_{operator}_OPERATOR_DESC"]


def draw_forms(pick: Pick, data_type: str, max_block: int
               ) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """(BlockSize, depth-form desc, space-form desc), drawn: batch > 1, odd and prime sizes."""
    block = pick("block", range(1, max_block + 1))
    n, c = pick("batch", range(1, 4)), pick("space_channels", range(1, 4))
    h, w = pick("height", range(1, 8)), pick("width", range(1, 8))
    return (block, desc(data_type, [n, c * block * block, h, w]),
            desc(data_type, [n, c, h * block, w * block]))


class DepthSpaceOperator(Operator, Protocol):
    """What the hooks ask of a depth/space spec (spec.py's DepthSpaceFamily answers it)."""

    page: str
    attributes: tuple[Attribute, ...]
    to_space: bool  # DEPTH_TO_SPACE(1): the depth form in, the space form out


class DepthSpaceExamples(Examples):
    """The hooks, for the four operators (the spec's to_space: DEPTH_TO_SPACE(1); ordered: the
    *1 operators, which take an Order)."""

    spec: DepthSpaceOperator

    @property
    def ordered(self) -> bool:
        return any(a.name == "Order" for a in self.spec.attributes)

    def _forms(self, depth: list[int], space: list[int]) -> dict[str, list[int]]:
        inp, out = (depth, space) if self.spec.to_space else (space, depth)
        return {"InputTensor": inp, "OutputTensor": out}

    def _block_attributes(self, block: int, order: str | None = "DEPTH_COLUMN_ROW"
                          ) -> dict[str, Any]:
        attrs: dict[str, Any] = {"BlockSize": block}
        if self.ordered and order:
            attrs["Order"] = order
        return attrs

    def table_examples(self) -> Sequence[ExampleCall]:
        """BlockSize 2 on 3, 4 and 5 dimensions: a leading dimension dropped or added (the
        tables take 4 only)."""
        out = []
        for dims in (3, 4, 5):
            depth, space = [1, 4, 2, 3], [1, 1, 4, 6]
            if dims != 4:
                depth = depth[1:] if dims == 3 else [1, *depth]
                space = space[1:] if dims == 3 else [1, *space]
            out.append(ExampleCall(self._forms(depth, space), self._block_attributes(2),
                                   slug=f"{dims}d"))
        return out

    def layout_examples(self) -> Sequence[ExampleCall]:
        inp, out, attrs = LAYOUTS[self.spec.name]
        return [ExampleCall({"InputTensor": inp, "OutputTensor": out}, attrs,
                            data_types=ALL_TYPES)]

    def invalid_example(self) -> Call:
        forms = self._forms([1, 4, 2, 3], [1, 1, 4, 6])
        return {m: desc(F32, s) for m, s in forms.items()}, self._block_attributes(2)

    def breaking_sizes(self) -> Sequence[Breaking]:
        return [Breaking("zero-size", "desc.zero_size",
                         set_sizes(**self._forms([1, 4, 0, 3], [1, 1, 0, 6]))),
                Breaking("three-dimensions", "desc.dimension_count",
                         set_sizes(**self._forms([4, 2, 3], [1, 4, 6])))]

    def too_many_elements(self, call: Call) -> Call:
        tensors, attrs = call
        forms = self._forms([1, 4, 32768, 65536], [1, 1, 65536, 131072])
        return ({"InputTensor": {**tensors["InputTensor"], "Sizes": forms["InputTensor"],
                                 "Strides": [0, 0, 0, 0]},
                 "OutputTensor": {**tensors["OutputTensor"], "Sizes": forms["OutputTensor"]}},
                attrs)

    def breaking_rules(self) -> Sequence[Breaking]:
        wrong = [1, 1, 4, 7] if self.spec.to_space else [1, 4, 2, 4]
        transposed = [1, 1, 6, 4] if self.spec.to_space else [1, 4, 3, 2]
        out = [Breaking("block-size-0", "depth_space.block_size", set_attributes(BlockSize=0)),
               Breaking("output-sizes", "operator.output_sizes",
                        set_fields("OutputTensor", Sizes=wrong)),
               Breaking("output-sizes-transposed", "operator.output_sizes",
                        set_fields("OutputTensor", Sizes=transposed))]
        if self.spec.to_space:
            out.append(Breaking("channels-not-divisible", "depth_space.channels_divisible",
                                set_sizes(InputTensor=[1, 6, 2, 3], OutputTensor=[1, 1, 4, 6])))
        else:
            out.append(Breaking("height-not-divisible", "depth_space.spatial_divisible",
                                set_sizes(InputTensor=[1, 1, 5, 6], OutputTensor=[1, 4, 2, 3])))
        if self.ordered:
            out.append(Breaking("order-2", "depth_space.order", set_attributes(Order=2)))
        return out

    def large_examples(self) -> Sequence[ExampleCall]:
        """One list for the four operators (the family writes it once)."""
        out = []
        for operator, data_type, depth, block, order in LARGE:
            n, c, h, w = depth
            space = [n, c // (block * block), h * block, w * block]
            inp, outp = (depth, space) if operator.startswith("DEPTH") else (space, depth)
            attrs: dict[str, Any] = {"BlockSize": block}
            if order:
                attrs["Order"] = order
            out.append(ExampleCall({"InputTensor": inp, "OutputTensor": outp}, attrs,
                                   operator=operator, data_types=(data_type,),
                                   cites=(Citation(page(operator), "OutputTensor"), notes("3"))))
        return out

    def _copies(self) -> tuple[Citation, ...]:
        return (Citation(self.spec.page, "Description (copies the input)"), notes("3"))

    def bitlevel_examples(self) -> Sequence[ExampleCall]:
        """Every data type, in each Order, ten block sizes and shapes (BITLEVEL): a reading
        that changes a special value is caught by ten cases of each slice (issue 25's floor),
        not one."""
        out = []
        for order in (ORDERS if self.ordered else (None,)):
            base = order.lower().replace("_", "-") if order else ""
            for k, (block, depth) in enumerate(BITLEVEL):
                n, c, h, w = depth
                forms = self._forms(depth, [n, c // (block * block), h * block, w * block])
                shape = f"b{block}-{n}x{c}x{h}x{w}"
                slug = base if k == 0 else "/".join(p for p in (base, shape) if p)
                out.append(ExampleCall(forms, self._block_attributes(block, order), slug=slug,
                                       operator=self.spec.name, data_types=ALL_TYPES,
                                       cites=self._copies()))
        return out

    def draw_call(self, pick: Pick, selecting: bool = False) -> ExampleCall:
        """Any data type, BlockSize 1 to 4, batch, channels, height and width (every call
        moves elements: selecting changes nothing)."""
        data_type = pick("data_type", [t.name for t in ALL_TYPES])
        block, depth, space = draw_forms(pick, data_type, 4)
        attrs: dict[str, Any] = {"BlockSize": block}
        if self.ordered:
            attrs["Order"] = pick("order", ORDERS)
        forms = self._forms(depth["Sizes"], space["Sizes"])
        return ExampleCall(forms, attrs, data_types=(DataType.parse(data_type),),
                           cites=self._copies())
