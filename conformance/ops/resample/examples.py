"""The example calls RESAMPLE and RESAMPLE1 give the generic case families (the OperatorSpec hooks
of docs/operators.md), as plain data.

RESAMPLE1 states its pixel offsets; RESAMPLE implies 0.5 / -0.5 (the RESAMPLE1 page's Remarks),
so its calls take half-pixel pairs only. Linear calls compute their outputs (finite inputs,
judged with the tolerance model); nearest calls select input elements.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from conformance.ops.base import float32
from conformance.ops.examples import (
    Breaking,
    Call,
    ExampleCall,
    Pick,
    desc,
    set_attributes,
    set_fields,
    set_sizes,
)
from conformance.ops.resample.pages import RESAMPLE, RESAMPLE1
from conformance.spec import Citation, Page, notes
from conformance.tensors import DataType

F32, F16, I8, U8 = DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8
MODES = ("NEAREST_NEIGHBOR", "LINEAR")
HALF_PIXEL = (0.5, -0.5)
Pair = tuple[float, float]
#: The scales and offset pairs the offsets family and the explorer favour: up, down, and
#: non-integer (1.25 and 1/3 as float32); offsets 0, half-pixel and arbitrary.
SCALES = (2.0, 0.5, 1.5, 0.75, 3.0, 0.33333334, 1.25)
OFFSETS: tuple[Pair, ...] = ((0.0, 0.0), (0.5, -0.5), (0.25, 0.1), (-0.3, 0.7))
TABLE_SIZES = (2, 3, 2, 3, 2)  # leading sizes of a 1..5-dimension input of the tables family
LAYOUT_TYPES = (F32, F16, U8)
#: The layouts family's call per operator: (input sizes, output sizes, attributes).
LAYOUTS = {
    "RESAMPLE": ([2, 3, 4, 5], [2, 3, 8, 10],
                 {"InterpolationMode": "LINEAR", "Scales": [1, 1, 2, 2]}),
    "RESAMPLE1": ([2, 3, 4, 5], [3, 3, 7, 8],
                  {"InterpolationMode": "LINEAR", "Scales": [1.5, 1, 1.75, 1.5],
                   "InputPixelOffsets": [0.5, 0.25, 0.5, 0.5],
                   "OutputPixelOffsets": [-0.5, 0, -0.5, -0.3]}),
}
#: The large family's calls: (operator, data type, mode, input sizes, scales, output sizes).
LARGE = (
    ("RESAMPLE1", F32, "LINEAR", [1, 3, 65, 129], [1, 1, 2, 2], [1, 3, 130, 258]),
    ("RESAMPLE1", F16, "NEAREST_NEIGHBOR", [2, 4, 33, 67], [1, 1, 1.5, 1.5], [2, 4, 49, 100]),
    ("RESAMPLE1", U8, "LINEAR", [1, 8, 64, 257], [1, 1, 0.5, 0.75], [1, 8, 32, 192]),
    ("RESAMPLE", F32, "NEAREST_NEIGHBOR", [1, 16, 31, 1025], [1, 1, 2, 1], [1, 16, 62, 1025]),
    ("RESAMPLE", F16, "LINEAR", [2, 2, 97, 97], [1, 1, 1.25, 3], [2, 2, 121, 291]),
)
#: The bitlevel family's types: those nearest sampling takes.
BITLEVEL_TYPES = (F32, F16, I8, U8)
READING_SCALES = "NOTES §4: no page states that scales must be positive or finite (a reading)"


def page(operator: str) -> Page:
    """The spec page of one of this package's operators, by its name."""
    return {str(p): p for p in (RESAMPLE, RESAMPLE1)}[f"DML_{operator}_OPERATOR_DESC"]


def natural(size: int, scale: float) -> int:
    """floor(InputSize * Scale) of the float32 scale (at least 1)."""
    return max(1, math.floor(size * float(float32([scale])[0])))


def offsets_attributes(mode: str, scales: Sequence[float], pairs: Sequence[Pair]
                       ) -> dict[str, Any]:
    """RESAMPLE1's attributes: the mode, the scales and the offset pairs per dimension."""
    return {"InterpolationMode": mode, "Scales": list(scales),
            "InputPixelOffsets": [a for a, _ in pairs],
            "OutputPixelOffsets": [b for _, b in pairs]}


def _five_d(call: Call) -> Call:
    tensors, attrs = call
    five = {k: ([v[0], *v] if isinstance(v, list) else v) for k, v in attrs.items()}
    return ({"InputTensor": {**tensors["InputTensor"], "Sizes": [1, 1, 2, 2, 3]},
             "OutputTensor": {**tensors["OutputTensor"], "Sizes": [1, 1, 2, 4, 6]}}, five)


def _shrink_arrays(call: Call) -> Call:
    tensors, attrs = call
    return tensors, {k: (v[1:] if isinstance(v, list) else v) for k, v in attrs.items()}


def _scale(value: float) -> Any:
    return set_attributes(Scales=[1, 1, value, 2])


class ResampleExamples:
    """The hooks, for both operators (offsets: RESAMPLE1, which states its pixel offsets)."""

    name: str
    page: str
    attributes: tuple[Any, ...]

    @property
    def states_offsets(self) -> bool:
        return any(a.name == "InputPixelOffsets" for a in self.attributes)

    def _attributes(self, mode: str, scales: Sequence[float], dims: int) -> dict[str, Any]:
        """The call's attributes with half-pixel offsets (stated by RESAMPLE1 only)."""
        attrs: dict[str, Any] = {"InterpolationMode": mode, "Scales": scales}
        if self.states_offsets:
            attrs |= {"InputPixelOffsets": [0.5] * dims, "OutputPixelOffsets": [-0.5] * dims}
        return attrs

    def table_examples(self) -> Sequence[ExampleCall]:
        """1 to 5 dimensions in each mode, the last dimension scaled by 2."""
        out = []
        for dims in range(1, 6):
            for mode in MODES:
                sizes = list(TABLE_SIZES[:dims])
                scales = [1.0] * (dims - 1) + [2.0]
                outs = [*sizes[:-1], sizes[-1] * 2]
                out.append(ExampleCall({"InputTensor": sizes, "OutputTensor": outs},
                                       self._attributes(mode, scales, dims),
                                       slug=f"{dims}d/{mode.lower()}",
                                       inputs="smooth" if mode == "LINEAR" else "bits"))
        return out

    def layout_examples(self) -> Sequence[ExampleCall]:
        """Each mode on the types of FLOAT32, FLOAT16 and UINT8 (scaled on every dimension, with
        RESAMPLE1's offsets arbitrary)."""
        inp, outp, attrs = LAYOUTS[self.name]
        return [ExampleCall({"InputTensor": inp, "OutputTensor": outp},
                            {**attrs, "InterpolationMode": mode}, slug=mode.lower(),
                            inputs="smooth", data_types=LAYOUT_TYPES) for mode in MODES]

    def invalid_example(self) -> Call:
        return ({"InputTensor": desc(F32, [1, 2, 2, 3]), "OutputTensor": desc(F32, [1, 2, 4, 6])},
                self._attributes("NEAREST_NEIGHBOR", [1, 1, 2, 2], 4))

    def breaking_sizes(self) -> Sequence[Breaking]:
        return [Breaking("zero-size", "desc.zero_size",
                         set_sizes(InputTensor=[1, 0, 2, 3], OutputTensor=[1, 0, 4, 6])),
                Breaking("five-dimensions", "desc.dimension_count", _five_d)]

    def too_many_elements(self, call: Call) -> Call:
        tensors, attrs = call
        attrs = {**attrs, "Scales": [1, 1, 1, 1]}
        return ({"InputTensor": {**tensors["InputTensor"], "Sizes": [1, 1, 65536, 65536],
                                 "Strides": [0, 0, 0, 0]},
                 "OutputTensor": {**tensors["OutputTensor"], "Sizes": [1, 1, 65536, 65536]}},
                attrs)

    def breaking_rules(self) -> Sequence[Breaking]:
        out = [
            Breaking("int32", "operator.data_type",
                     lambda c: set_fields("OutputTensor", DataType="INT32")(
                         set_fields("InputTensor", DataType="INT32")(c))),
            Breaking("dimension-count-differs", "resample.dimension_count", _shrink_arrays),
            Breaking("mode-2", "resample.mode", set_attributes(InterpolationMode=2)),
        ]
        for slug, value in (("zero", 0.0), ("negative", -2.0), ("nan", math.nan),
                            ("infinite", math.inf), ("float32-underflow", 1e-46)):
            out.append(Breaking(f"scale-{slug}", "resample.scales", _scale(value),
                                READING_SCALES))
        if self.states_offsets:
            for slug, value in (("nan", math.nan), ("infinite", -math.inf)):
                out.append(Breaking(f"input-offset-{slug}", "resample.offsets",
                                    set_attributes(InputPixelOffsets=[0.5, 0.5, value, 0.5]),
                                    READING_SCALES))
                out.append(Breaking(f"output-offset-{slug}", "resample.offsets",
                                    set_attributes(OutputPixelOffsets=[-0.5, -0.5, -0.5, value]),
                                    READING_SCALES))
        return out

    def large_examples(self) -> Sequence[ExampleCall]:
        """One list for both operators (the family writes it once)."""
        out = []
        for operator, data_type, mode, inp, scales, outp in LARGE:
            attrs: dict[str, Any] = {"InterpolationMode": mode, "Scales": scales}
            if operator == "RESAMPLE1":
                attrs |= {"InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
            out.append(ExampleCall({"InputTensor": inp, "OutputTensor": outp}, attrs,
                                   slug=mode.lower(), inputs="smooth", operator=operator,
                                   data_types=(data_type,),
                                   cites=(Citation(page(operator), "Scales"), notes("4"))))
        return out

    def _selects(self) -> tuple[Citation, ...]:
        return (Citation(self.page, "InterpolationMode (nearest chooses an input element)"),
                notes("4"))

    def bitlevel_examples(self) -> Sequence[ExampleCall]:
        """Nearest at integer scales (a selection), on the types nearest takes."""
        return [ExampleCall({"InputTensor": [1, 2, 3, 4], "OutputTensor": [1, 4, 6, 12]},
                            self._attributes("NEAREST_NEIGHBOR", [1, 2, 2, 3], 4),
                            slug="nearest", operator=self.name, data_types=BITLEVEL_TYPES,
                            cites=self._selects())]

    def draw_call(self, pick: Pick, selecting: bool = False) -> ExampleCall:
        """4-D, sizes 1 to 4. Selecting: nearest at integer scales 1 to 3, half-pixel, in the
        bitlevel family's types. Else the layouts family's types, either mode, the favoured
        scales, output sizes floor(InputSize * Scale) and for RESAMPLE1 the favoured offset
        pairs."""
        types = BITLEVEL_TYPES if selecting else LAYOUT_TYPES
        data_type = pick("data_type", [t.name for t in types])
        if selecting:
            sizes = pick("sizes", range(1, 5), count=4)
            scales = pick("scales", range(1, 4), count=4)
            return ExampleCall(
                {"InputTensor": sizes,
                 "OutputTensor": [s * f for s, f in zip(sizes, scales, strict=True)]},
                self._attributes("NEAREST_NEIGHBOR", scales, 4),
                data_types=(DataType.parse(data_type),), cites=self._selects())
        mode = pick("mode", MODES)
        sizes = pick("sizes", range(1, 5), count=4)
        scales = pick("scales", SCALES, count=4)
        attrs: dict[str, Any] = {"InterpolationMode": mode, "Scales": scales}
        if self.states_offsets:
            attrs = offsets_attributes(mode, scales, pick("offsets", OFFSETS, count=4))
        return ExampleCall(
            {"InputTensor": sizes,
             "OutputTensor": [natural(s, f) for s, f in zip(sizes, scales, strict=True)]},
            attrs, inputs="smooth", data_types=(DataType.parse(data_type),))
