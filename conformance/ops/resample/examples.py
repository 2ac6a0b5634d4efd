"""The example calls the resample operators give the generic case families (their Examples, the
hooks of docs/operators.md), as plain data, for all four: each call follows from what the
operator's desc states (its attributes), so one set of hooks serves them all.

- RESAMPLE1 states its pixel offsets; RESAMPLE implies 0.5 / -0.5 (the RESAMPLE1 page's
  Remarks), so its calls take half-pixel pairs only. Linear calls compute their outputs (finite
  inputs, judged with the tolerance model); nearest calls select input elements.
- RESAMPLE2 adds a RoundingDirection. Where a family varies something else (tables, invalid) the
  call rounds DECREASING (floor(c)), the direction DirectML's ONNX Runtime provider gives
  RESAMPLE1's floor(c + 0.5) (notes §10); where the rounding shows (layouts, large, bitlevel, the
  explorer) both directions are used. RoundingDirection "affects only
  DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR", so linear calls state one direction.
- RESAMPLE3 adds Antialiased, TRUE in every call unless a family says otherwise: where the page's
  conditions do not hold (NEAREST_NEIGHBOR, or no 1/Scale above 2) it changes nothing, which the
  calls check too. A stretched call keeps its filter inside the input (inside()), where the page
  decides every output (docs/spec-notes.md §10), so its cases are mandatory. Antialiased is a
  BOOL: every value is valid, so no rule of it can be broken.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol, cast

from conformance.ops.base import OperatorCall, float32
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
from conformance.ops.resample.pages import RESAMPLE, RESAMPLE1, RESAMPLE2, RESAMPLE3
from conformance.spec import Citation, Page, notes
from conformance.tensors import DataType, TensorDesc

F32, F16, I8, U8 = DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8
MODES = ("NEAREST_NEIGHBOR", "LINEAR")
HALF_PIXEL = (0.5, -0.5)
Pair = tuple[float, float]
#: DML_AXIS_DIRECTION's values (the spec validates them: spec.py).
DIRECTIONS = ("INCREASING", "DECREASING")
#: The direction of a call whose family varies something else (module docstring).
DIRECTION = "DECREASING"
#: The scales and offset pairs the offsets family and the explorer favour: up, down, and
#: non-integer (1.25 and 1/3 as float32); offsets 0, half-pixel and arbitrary.
SCALES = (2.0, 0.5, 1.5, 0.75, 3.0, 0.33333334, 1.25)
OFFSETS: tuple[Pair, ...] = ((0.0, 0.0), (0.5, -0.5), (0.25, 0.1), (-0.3, 0.7))
TABLE_SIZES = (2, 3, 2, 3, 2)  # leading sizes of a 1..5-dimension input of the tables family
LAYOUT_TYPES = (F32, F16, U8, I8)
#: The layouts family's call of an operator with implied offsets (RESAMPLE) and of those that
#: state them: (input sizes, output sizes, attributes).
LAYOUTS = {
    "RESAMPLE": ([2, 3, 4, 5], [2, 3, 8, 10],
                 {"InterpolationMode": "LINEAR", "Scales": [1, 1, 2, 2]}),
    "RESAMPLE1": ([2, 3, 4, 5], [3, 3, 7, 8],
                  {"InterpolationMode": "LINEAR", "Scales": [1.5, 1, 1.75, 1.5],
                   "InputPixelOffsets": [0.5, 0.25, 0.5, 0.5],
                   "OutputPixelOffsets": [-0.5, 0, -0.5, -0.3]}),
}
#: The large family's calls per operator (RESAMPLE and RESAMPLE1 share one list, written once):
#: (operator, data type, mode, RoundingDirection or None (DECREASING, not in the slug), input
#: sizes, scales (for RESAMPLE3's stretched calls: the stretches), output sizes (None: the
#: stretched call's)). Half-pixel offsets where the operator states them; rows of 129, 67, 257
#: and 1025 elements (the reasons are conformance/generate/large.py's); RESAMPLE3's outputs wider
#: than 64 (crossing a tile).
_LARGE1 = (
    ("RESAMPLE1", F32, "LINEAR", None, [1, 3, 65, 129], [1, 1, 2, 2], [1, 3, 130, 258]),
    ("RESAMPLE1", F16, "NEAREST_NEIGHBOR", None, [2, 4, 33, 67], [1, 1, 1.5, 1.5],
     [2, 4, 49, 100]),
    ("RESAMPLE1", U8, "LINEAR", None, [1, 8, 64, 257], [1, 1, 0.5, 0.75], [1, 8, 32, 192]),
    ("RESAMPLE", F32, "NEAREST_NEIGHBOR", None, [1, 16, 31, 1025], [1, 1, 2, 1],
     [1, 16, 62, 1025]),
    ("RESAMPLE", F16, "LINEAR", None, [2, 2, 97, 97], [1, 1, 1.25, 3], [2, 2, 121, 291]),
)
LARGE = {
    "RESAMPLE": _LARGE1,
    "RESAMPLE1": _LARGE1,
    "RESAMPLE2": (
        ("RESAMPLE2", F32, "NEAREST_NEIGHBOR", "INCREASING", [1, 3, 65, 129], [1, 1, 2, 2],
         [1, 3, 130, 258]),
        ("RESAMPLE2", F16, "NEAREST_NEIGHBOR", "DECREASING", [2, 4, 33, 67], [1, 1, 1.5, 1.5],
         [2, 4, 49, 100]),
        ("RESAMPLE2", U8, "LINEAR", None, [1, 8, 64, 257], [1, 1, 0.5, 0.75], [1, 8, 32, 192]),
        ("RESAMPLE2", I8, "NEAREST_NEIGHBOR", "INCREASING", [1, 2, 97, 1025], [1, 1, 0.75, 1.25],
         [1, 2, 72, 1281]),
    ),
    "RESAMPLE3": (
        ("RESAMPLE3", F32, "LINEAR", None, [1, 2, 66, 350], [1, 1, 4, 4], None),
        ("RESAMPLE3", F16, "NEAREST_NEIGHBOR", None, [2, 4, 33, 67], [1, 1, 0.25, 1.5],
         [2, 4, 8, 100]),
        ("RESAMPLE3", U8, "LINEAR", None, [1, 8, 64, 257], [1, 1, 0.75, 0.75], [1, 8, 48, 192]),
        ("RESAMPLE3", I8, "LINEAR", None, [1, 4, 16, 300], [1, 1, 1, 4], None),
    ),
}
#: The attribute a later page adds, which its large calls cite (with notes §10).
ADDED = {"RESAMPLE2": "RoundingDirection", "RESAMPLE3": "Antialiased"}
#: The bitlevel family's types: those nearest sampling takes.
BITLEVEL_TYPES = (F32, F16, I8, U8)
READING_SCALES = "NOTES §4: no page states that scales must be positive or finite (a reading)"
READING_OFFSETS = ("NOTES §4, extended: no page states that pixel offsets must be finite; a "
                   "non-finite offset leaves the coordinate undefined (a reading)")


def page(operator: str) -> Page:
    """The spec page of one of the family's operators, by its name."""
    return {str(p): p for p in (RESAMPLE, RESAMPLE1, RESAMPLE2, RESAMPLE3)}[
        f"DML_{operator}_OPERATOR_DESC"]


def natural(size: int, scale: float) -> int:
    """floor(InputSize * Scale) of the float32 scale (at least 1)."""
    return max(1, math.floor(size * float(float32([scale])[0])))


def offsets_attributes(mode: str, scales: Sequence[float], pairs: Sequence[Pair]
                       ) -> dict[str, Any]:
    """RESAMPLE1's attributes: the mode, the scales and the offset pairs per dimension."""
    return {"InterpolationMode": mode, "Scales": list(scales),
            "InputPixelOffsets": [a for a, _ in pairs],
            "OutputPixelOffsets": [b for _, b in pairs]}


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


class ResampleOperator(Operator, Protocol):
    """What the hooks ask of a resample spec (spec.py's ResampleFamily answers it)."""

    page: str

    def states(self, attribute: str) -> bool: ...

    @property
    def states_offsets(self) -> bool: ...

    def stated(self, attributes: Mapping[str, Any], direction: str = DIRECTION,
               antialiased: int = 1) -> dict[str, Any]: ...

    def make_call(self, tensors: Mapping[str, TensorDesc], attributes: Mapping[str, Any]
                  ) -> OperatorCall: ...

    def silent_regions(self, call: OperatorCall) -> list[str]: ...


class ResampleExamples(Examples):
    """The hooks of the four operators, each call shaped by the attributes the operator's desc
    states (offsets, RoundingDirection, Antialiased: the spec's states() and stated())."""

    spec: ResampleOperator

    def _attributes(self, mode: str, scales: Sequence[float], dims: int) -> dict[str, Any]:
        """The call's attributes with half-pixel offsets (where stated)."""
        attrs: dict[str, Any] = {"InterpolationMode": mode, "Scales": scales}
        if self.spec.states_offsets:
            attrs |= {"InputPixelOffsets": [0.5] * dims, "OutputPixelOffsets": [-0.5] * dims}
        return self.spec.stated(attrs)

    def _directions(self, mode: str) -> tuple[str | None, ...]:
        """The RoundingDirections a call in `mode` is given where the rounding shows (None: the
        default, unnamed in the slug)."""
        return DIRECTIONS if mode != "LINEAR" and self.spec.states("RoundingDirection") else (None,)

    def _stretched(self, in_sizes: Sequence[int], stretches: Sequence[int], slug: str,
                   **fields: Any) -> ExampleCall:
        sizes, outs, scales, pairs = stretched_call(in_sizes, stretches)
        return ExampleCall({"InputTensor": sizes, "OutputTensor": outs},
                           self.spec.stated(offsets_attributes("LINEAR", scales, pairs)), slug=slug,
                           inputs="smooth", **fields)

    def table_examples(self) -> Sequence[ExampleCall]:
        """1 to 5 dimensions in each mode, the last dimension scaled by 2; with Antialiased, per
        dimension count the last dimension stretched by 4 (12 -> 2) too."""
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
        if self.spec.states("Antialiased"):
            out += [self._stretched([*TABLE_SIZES[:dims - 1], 12], [1] * (dims - 1) + [4],
                                    f"{dims}d/linear-antialiased") for dims in range(1, 6)]
        return out

    def layout_examples(self) -> Sequence[ExampleCall]:
        """Each mode (nearest in each RoundingDirection) on the types of FLOAT32, FLOAT16, UINT8
        and INT8 (scaled on every dimension, stated offsets arbitrary); with Antialiased, H and W
        stretched by 4 (12 -> 2 each) too."""
        inp, outp, attrs = LAYOUTS["RESAMPLE1" if self.spec.states_offsets else "RESAMPLE"]
        out = [ExampleCall({"InputTensor": inp, "OutputTensor": outp},
                           self.spec.stated({**attrs, "InterpolationMode": mode}, d or DIRECTION),
                           slug=mode.lower() + (f"/{d.lower()}" if d else ""), inputs="smooth",
                           data_types=LAYOUT_TYPES)
               for mode in MODES for d in self._directions(mode)]
        if self.spec.states("Antialiased"):
            out.append(self._stretched([1, 2, 12, 12], [1, 1, 4, 4], "linear/antialiased",
                                       data_types=LAYOUT_TYPES))
        return out

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
        if self.spec.states_offsets:
            for slug, value in (("nan", math.nan), ("infinite", -math.inf)):
                out.append(Breaking(f"input-offset-{slug}", "resample.offsets",
                                    set_attributes(InputPixelOffsets=[0.5, 0.5, value, 0.5]),
                                    READING_OFFSETS))
                out.append(Breaking(f"output-offset-{slug}", "resample.offsets",
                                    set_attributes(OutputPixelOffsets=[-0.5, -0.5, -0.5, value]),
                                    READING_OFFSETS))
        if self.spec.states("RoundingDirection"):  # a DML_AXIS_DIRECTION value (0 or 1)
            out.append(Breaking("rounding-direction-2", "resample2.rounding_direction",
                                set_attributes(RoundingDirection=2)))
        return out

    def large_examples(self) -> Sequence[ExampleCall]:
        """The operator's rows of LARGE (RESAMPLE's and RESAMPLE1's one list, written once)."""
        out = []
        for operator, data_type, mode, direction, inp, scales, outp in LARGE[self.spec.name]:
            cites = (Citation(page(operator), "Scales"),
                     *((Citation(page(operator), ADDED[operator]), notes("10"))
                       if operator in ADDED else (notes("4"),)))
            fields: dict[str, Any] = {"operator": operator, "data_types": (data_type,),
                                      "cites": cites}
            if outp is None:
                stretches = cast(list[int], scales)  # a stretched row's are whole factors
                out.append(self._stretched(inp, stretches, "linear/antialiased", **fields))
                continue
            attrs: dict[str, Any] = {"InterpolationMode": mode, "Scales": scales}
            if operator != "RESAMPLE":
                attrs = offsets_attributes(mode, scales, [HALF_PIXEL] * 4)
            if operator == self.spec.name:
                attrs = self.spec.stated(attrs, direction or DIRECTION)
            out.append(ExampleCall({"InputTensor": inp, "OutputTensor": outp}, attrs,
                                   slug=mode.lower() + (f"/{direction.lower()}" if direction
                                                        else ""),
                                   inputs="smooth", **fields))
        return out

    def _selects(self) -> tuple[Citation, ...]:
        return (Citation(self.spec.page, "InterpolationMode (nearest chooses an input element)"),
                notes("4"))

    def bitlevel_examples(self) -> Sequence[ExampleCall]:
        """Nearest at integer scales (a selection), on the types nearest takes, in each
        RoundingDirection (citing RESAMPLE2's page for it)."""
        attrs = self._attributes("NEAREST_NEIGHBOR", [1, 2, 2, 3], 4)
        return [ExampleCall({"InputTensor": [1, 2, 3, 4], "OutputTensor": [1, 4, 6, 12]},
                            self.spec.stated(attrs, d or DIRECTION),
                            slug="nearest" + (f"/{d.lower()}" if d else ""),
                            operator=self.spec.name, data_types=BITLEVEL_TYPES,
                            cites=(*self._selects(),
                                   *((Citation(RESAMPLE2, "RoundingDirection"), notes("10"))
                                     if d else ())))
                for d in self._directions("NEAREST_NEIGHBOR")]

    def draw_call(self, pick: Pick, selecting: bool = False) -> ExampleCall:
        """4-D, sizes 1 to 4. Selecting: nearest at integer scales 1 to 3, half-pixel, in the
        bitlevel family's types. Else the layouts family's types, either mode, the favoured
        scales, output sizes floor(InputSize * Scale) and the favoured offset pairs where
        stated. Then a RoundingDirection where stated, and Antialiased, drawn TRUE only where
        the page decides every output of the call (no silent region: the explorer's generic
        families mark no case ambiguous)."""
        example = self._draw(pick, selecting)
        if not self.spec.states("RoundingDirection"):
            return example
        direction = pick("rounding_direction", DIRECTIONS)
        example = replace(example, attributes=self.spec.stated(example.attributes, direction))
        if not self.spec.states("Antialiased"):
            return example
        (data_type,) = example.data_types
        call = self.spec.make_call({n: TensorDesc.from_json(d)
                                    for n, d in example.tensors(data_type).items()},
                                   self.spec.stated(example.attributes, direction))
        choices = [0] if self.spec.silent_regions(call) else [0, 1]
        antialiased = pick("antialiased", choices)
        return replace(example, attributes=self.spec.stated(example.attributes, direction,
                                                       antialiased))

    def _draw(self, pick: Pick, selecting: bool) -> ExampleCall:
        """RESAMPLE1's draw (RESAMPLE's without offsets)."""
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
        if self.spec.states_offsets:
            attrs = offsets_attributes(mode, scales, pick("offsets", OFFSETS, count=4))
        return ExampleCall(
            {"InputTensor": sizes,
             "OutputTensor": [natural(s, f) for s, f in zip(sizes, scales, strict=True)]},
            attrs, inputs="smooth", data_types=(DataType.parse(data_type),))
