"""The example calls RESAMPLE3 gives the generic case families (the OperatorSpec hooks of
docs/operators.md), as plain data: RESAMPLE2's calls (conformance/ops/resample2/examples.py), each
stating Antialiased, and calls whose filter the page stretches.

Antialiased is TRUE in every call unless a family says otherwise: where the page's conditions do
not hold (NEAREST_NEIGHBOR, or no 1/Scale above 2) it changes nothing, which the calls check too.
A stretched call keeps its filter inside the input (inside()), where the page decides every
output (docs/spec-notes.md §10), so its cases are mandatory. Antialiased is a BOOL: every value
is valid, so no rule of it can be broken (breaking_rules are RESAMPLE2's).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from conformance.ops.examples import ExampleCall, Pick
from conformance.ops.resample.examples import (
    LAYOUT_TYPES,
    TABLE_SIZES,
    offsets_attributes,
)
from conformance.ops.resample2.examples import DIRECTION, Resample2Examples
from conformance.ops.resample3.pages import PAGE
from conformance.spec import Citation, notes
from conformance.tensors import DataType, TensorDesc

F32, F16, I8, U8 = DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8
HALF_PIXEL = (0.5, -0.5)
Pair = tuple[float, float]


def inside(size: int, stretch: int) -> tuple[int, Pair]:
    """(output size, offset pair) of a dimension of `size` downsampled by Scale 1 / stretch
    whose stretched filter stays inside the input: InputPixelOffset 0.5 - stretch, so
    c = stretch * o + stretch - 0.5, and every c within [stretch - 1, size - stretch] with half
    a pixel to spare (no tap beyond the edges, even with float32 coordinate error)."""
    count = math.floor((size - 2 * stretch + 0.5) / stretch) + 1
    if count < 1:
        raise ValueError(f"an input of {size} holds no filter of stretch {stretch}")
    return count, (0.5 - stretch, 0.0)


def stretched_call(in_sizes: Sequence[int], stretches: Sequence[int]
                   ) -> tuple[list[int], list[int], list[float], list[Pair]]:
    """(input sizes, output sizes, Scales, offset pairs) of a call stretched by the given whole
    factor in each dimension (1: unscaled, half-pixel offsets), its filters inside the input."""
    outs, scales, pairs = [], [], []
    for size, f in zip(in_sizes, stretches, strict=True):
        if f == 1:
            outs.append(size)
            scales.append(1.0)
            pairs.append(HALF_PIXEL)
        else:
            count, pair = inside(size, f)
            outs.append(count)
            scales.append(round(1.0 / f, 8))  # 0.33333333: float32(1/3), as written
            pairs.append(pair)
    return list(in_sizes), outs, scales, pairs


#: The large family's calls: (data type, mode, input sizes, stretches (or Scales for nearest and
#: the unstretched linear), output sizes for those). Outputs wider than 64 (crossing a tile).
LARGE = (
    (F32, "LINEAR", [1, 2, 66, 350], [1, 1, 4, 4], None),
    (F16, "NEAREST_NEIGHBOR", [2, 4, 33, 67], [1, 1, 0.25, 1.5], [2, 4, 8, 100]),
    (U8, "LINEAR", [1, 8, 64, 257], [1, 1, 0.75, 0.75], [1, 8, 48, 192]),
    (I8, "LINEAR", [1, 4, 16, 300], [1, 1, 1, 4], None),
)


class Resample3Examples(Resample2Examples):
    """RESAMPLE2's hooks with Antialiased stated, and stretched calls where a family varies the
    operator's behaviour (tables, layouts, large)."""

    def stated(self, attributes: Mapping[str, Any], direction: str = DIRECTION,
               antialiased: int = 1) -> dict[str, Any]:
        """RESAMPLE1's attributes with the RoundingDirection and Antialiased, in page order."""
        return super().stated({**attributes, "Antialiased": antialiased}, direction)

    def _antialias(self) -> tuple[Citation, ...]:
        return (Citation(PAGE, "Antialiased"), notes("10"))

    def _stretched(self, in_sizes: Sequence[int], stretches: Sequence[int], slug: str,
                   **fields: Any) -> ExampleCall:
        sizes, outs, scales, pairs = stretched_call(in_sizes, stretches)
        return ExampleCall({"InputTensor": sizes, "OutputTensor": outs},
                           self.stated(offsets_attributes("LINEAR", scales, pairs)), slug=slug,
                           inputs="smooth", **fields)

    def table_examples(self) -> Sequence[ExampleCall]:
        """RESAMPLE2's, and per dimension count the last dimension stretched by 4 (12 -> 2)."""
        return [*super().table_examples(),
                *(self._stretched([*TABLE_SIZES[:dims - 1], 12], [1] * (dims - 1) + [4],
                                  f"{dims}d/linear-antialiased") for dims in range(1, 6))]

    def layout_examples(self) -> Sequence[ExampleCall]:
        """RESAMPLE2's, and H and W stretched by 4 (12 -> 2 each)."""
        return [*super().layout_examples(),
                self._stretched([1, 2, 12, 12], [1, 1, 4, 4], "linear/antialiased",
                                data_types=LAYOUT_TYPES)]

    def large_examples(self) -> Sequence[ExampleCall]:
        out = []
        for data_type, mode, inp, scales, outp in LARGE:
            fields = {"operator": self.name, "data_types": (data_type,)}
            if outp is None:
                out.append(self._stretched(inp, scales, "linear/antialiased",
                                           cites=(Citation(PAGE, "Scales"), *self._antialias()),
                                           **fields))
                continue
            attrs = offsets_attributes(mode, scales, [HALF_PIXEL] * 4)
            out.append(ExampleCall({"InputTensor": inp, "OutputTensor": outp}, self.stated(attrs),
                                   slug=mode.lower(), inputs="smooth",
                                   cites=(Citation(PAGE, "Scales"), *self._antialias()),
                                   **fields))
        return out

    def draw_call(self, pick: Pick, selecting: bool = False) -> ExampleCall:
        """RESAMPLE2's draw and Antialiased, drawn TRUE only where the page decides every output
        of the call (no silent region: the explorer's generic families mark no case ambiguous)."""
        example = super().draw_call(pick, selecting)
        (data_type,) = example.data_types
        call = self.make_call({n: TensorDesc.from_json(d)
                               for n, d in example.tensors(data_type).items()},
                              self.stated(example.attributes,
                                          example.attributes["RoundingDirection"]))
        choices = [0] if self.silent_regions(call) else [0, 1]
        antialiased = pick("antialiased", choices)
        return replace(example, attributes=self.stated(
            example.attributes, example.attributes["RoundingDirection"], antialiased))
