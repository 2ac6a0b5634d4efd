"""The example calls RESAMPLE2 gives the generic case families (the OperatorSpec hooks of
docs/operators.md), as plain data: RESAMPLE1's calls (conformance/ops/resample/examples.py), each
stating its RoundingDirection, which the page adds to RESAMPLE1's desc.

Where a family varies something else (tables, invalid) the call rounds DECREASING (floor(c)),
the direction DirectML's ONNX Runtime provider gives RESAMPLE1's floor(c + 0.5) (notes §10);
where the rounding shows (layouts, large, bitlevel, the explorer) both directions are used.
RoundingDirection "affects only DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR", so linear calls state
one direction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from conformance.ops.examples import Breaking, ExampleCall, Pick, set_attributes
from conformance.ops.resample.examples import LAYOUT_TYPES, LAYOUTS, ResampleExamples
from conformance.ops.resample2.pages import PAGE
from conformance.spec import Citation, notes
from conformance.tensors import DataType

F32, F16, I8, U8 = DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8
#: DML_AXIS_DIRECTION's values (the spec validates them: conformance/ops/resample2/spec.py).
DIRECTIONS = ("INCREASING", "DECREASING")
#: The direction of a call whose family varies something else (module docstring).
DIRECTION = "DECREASING"
HALF_PIXEL = {"InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
#: The large family's calls: (data type, mode, direction, input sizes, scales, output sizes),
#: half-pixel offsets; rows of 129, 67, 257 and 1025 elements (the RESAMPLE1 sizes, whose
#: reasons conformance/generate/large.py gives), each direction in nearest.
LARGE = (
    (F32, "NEAREST_NEIGHBOR", "INCREASING", [1, 3, 65, 129], [1, 1, 2, 2], [1, 3, 130, 258]),
    (F16, "NEAREST_NEIGHBOR", "DECREASING", [2, 4, 33, 67], [1, 1, 1.5, 1.5], [2, 4, 49, 100]),
    (U8, "LINEAR", "DECREASING", [1, 8, 64, 257], [1, 1, 0.5, 0.75], [1, 8, 32, 192]),
    (I8, "NEAREST_NEIGHBOR", "INCREASING", [1, 2, 97, 1025], [1, 1, 0.75, 1.25],
     [1, 2, 72, 1281]),
)


class Resample2Examples(ResampleExamples):
    """RESAMPLE1's hooks with the attributes RESAMPLE2 (and RESAMPLE3, which extends it) adds."""

    def stated(self, attributes: Mapping[str, Any], direction: str = DIRECTION
               ) -> dict[str, Any]:
        """RESAMPLE1's attributes with the RoundingDirection, in the page's order."""
        full = {**attributes, "RoundingDirection": direction}
        return {a.name: full[a.name] for a in self.attributes if a.name in full}

    def _attributes(self, mode: str, scales: Sequence[float], dims: int) -> dict[str, Any]:
        return self.stated(super()._attributes(mode, scales, dims))

    def _rounding(self) -> tuple[Citation, ...]:
        return (Citation(PAGE, "RoundingDirection"), notes("10"))

    def layout_examples(self) -> Sequence[ExampleCall]:
        """RESAMPLE1's layouts call (every dimension scaled, arbitrary offsets) in nearest with
        each direction and in linear."""
        inp, outp, attrs = LAYOUTS["RESAMPLE1"]
        variants = [("NEAREST_NEIGHBOR", d) for d in DIRECTIONS] + [("LINEAR", DIRECTION)]
        return [ExampleCall({"InputTensor": inp, "OutputTensor": outp},
                            self.stated({**attrs, "InterpolationMode": mode}, direction),
                            slug=mode.lower() + (f"/{direction.lower()}" if mode != "LINEAR"
                                                 else ""),
                            inputs="smooth", data_types=LAYOUT_TYPES)
                for mode, direction in variants]

    def breaking_rules(self) -> Sequence[Breaking]:
        """RESAMPLE1's rules, and RoundingDirection a DML_AXIS_DIRECTION value (0 or 1)."""
        return [*super().breaking_rules(),
                Breaking("rounding-direction-2", "resample2.rounding_direction",
                         set_attributes(RoundingDirection=2))]

    def large_examples(self) -> Sequence[ExampleCall]:
        return [ExampleCall({"InputTensor": inp, "OutputTensor": outp},
                            self.stated({"InterpolationMode": mode, "Scales": scales,
                                         **HALF_PIXEL}, direction),
                            slug=mode.lower() + (f"/{direction.lower()}" if mode != "LINEAR"
                                                 else ""),
                            inputs="smooth", operator=self.name, data_types=(data_type,),
                            cites=(Citation(self.page, "Scales"), *self._rounding()))
                for data_type, mode, direction, inp, scales, outp in LARGE]

    def bitlevel_examples(self) -> Sequence[ExampleCall]:
        """RESAMPLE1's nearest at integer scales in each direction."""
        (example,) = super().bitlevel_examples()
        return [replace(example, attributes=self.stated(example.attributes, direction),
                        slug=f"{example.slug}/{direction.lower()}",
                        cites=(*example.cites, *self._rounding()))
                for direction in DIRECTIONS]

    def draw_call(self, pick: Pick, selecting: bool = False) -> ExampleCall:
        """RESAMPLE1's draw with a RoundingDirection drawn too."""
        example = super().draw_call(pick, selecting)
        direction = pick("rounding_direction", DIRECTIONS)
        return replace(example, attributes=self.stated(example.attributes, direction))


__all__ = ["DIRECTION", "DIRECTIONS", "Resample2Examples"]
