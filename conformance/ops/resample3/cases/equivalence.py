"""RESAMPLE3 against RESAMPLE2 on one input (the equivalence family's RESAMPLE3 part): the
Remarks, "When Antialiased is false, this operator is equivalent to DML_RESAMPLE2_OPERATOR_DESC",
and the conditions of Antialiased ("InterpolationMode is DML_INTERPOLATION_MODE_LINEAR; 1/Scales
> 2"), outside which Antialiased TRUE changes nothing. Per data type, the width stretched by 4
and the height by 3 (the filters inside the input):

- NEAREST_NEIGHBOR, Antialiased FALSE and TRUE, each direction: equal bits asked of the two
  operators (nearest selects; no coordinate near a whole number, checked);
- LINEAR, Antialiased FALSE at those scales, and TRUE at Scales 0.75 (1/Scale <= 2): both calls
  against the reference, which is RESAMPLE2's linear for both (two legal evaluations may round
  differently, so no bit equality is asked, as for RESAMPLE1 against RESAMPLE).
"""

from __future__ import annotations

from conformance.kit.build import chain, cite, desc, smooth_input
from conformance.ops.resample.cases.derive import decided
from conformance.ops.resample.examples import HALF_PIXEL, offsets_attributes, stretched_call
from conformance.ops.resample.spec import Resample3
from conformance.ops.resample3.cases.antialias import TYPES, silence

FAMILY = "equivalence"
DESCRIPTION = "RESAMPLE3 == RESAMPLE2 where Antialiased is FALSE or its conditions do not hold"
SPEC = Resample3()
SIZES, OUTS, SCALES, PAIRS = stretched_call([2, 2, 12, 16], [1, 1, 3, 4])
#: For nearest, the unscaled dimensions read c = o - 0.25 (half-pixel would put every coordinate
#: on a whole number, where either neighbour is accepted: notes §10).
NEAREST_PAIRS = [(0.25, 0.0) if p == HALF_PIXEL else p for p in PAIRS]
#: (slug, mode, direction, Antialiased, Scales, output sizes, offset pairs)
CALLS = (
    ("nearest/antialiased-false/decreasing", "NEAREST_NEIGHBOR", "DECREASING", 0, SCALES, OUTS,
     NEAREST_PAIRS),
    ("nearest/antialiased-true/increasing", "NEAREST_NEIGHBOR", "INCREASING", 1, SCALES, OUTS,
     NEAREST_PAIRS),
    ("linear/antialiased-false", "LINEAR", "DECREASING", 0, SCALES, OUTS, PAIRS),
    ("linear/antialiased-true/scale-0.75", "LINEAR", "INCREASING", 1, [1, 1, 0.75, 0.75],
     [2, 2, 9, 12], [HALF_PIXEL] * 4),
)
SPEC_CITES = [cite(SPEC.page, "Remarks"), cite(SPEC.page, "Antialiased"), cite("NOTES", "10")]


def files() -> dict[str, list[dict]]:
    out = []
    for data_type in TYPES:
        for slug, mode, direction, antialiased, scales, outs, pairs in CALLS:
            cid = f"generated/equivalence/resample3-is-resample2/{slug}/{data_type.name.lower()}"
            tensors = {"InputTensor": desc(data_type, SIZES),
                       "OutputTensor": desc(data_type, outs)}
            attributes = offsets_attributes(mode, scales, pairs)
            v3 = SPEC.stated(attributes, direction, antialiased)
            v2 = {k: v for k, v in v3.items() if k != "Antialiased"}
            nearest = mode == "NEAREST_NEIGHBOR"
            if silence(tensors, v3) or (nearest and not decided(SPEC.name, tensors, v3)):
                raise AssertionError(f"{cid}: the page leaves an output open")
            out.append(chain(
                cid, [{"name": "resample3", "operator": SPEC.name, "attributes": v3,
                       "tensors": tensors},
                      {"name": "resample2", "operator": "RESAMPLE2", "attributes": v2,
                       "tensors": tensors}],
                family=FAMILY, spec=SPEC_CITES,
                inputs={"resample3.InputTensor": smooth_input(cid, tensors["InputTensor"]),
                        "resample2.InputTensor": {"from": "resample3.InputTensor"}},
                expected=None if nearest else {"resample3.OutputTensor": "reference",
                                               "resample2.OutputTensor": "reference"},
                relations=[{"equal": ["resample3.OutputTensor", "resample2.OutputTensor"],
                            "why": "RESAMPLE3 is RESAMPLE2 where Antialiased is FALSE or "
                                   "NEAREST_NEIGHBOR"}] if nearest else [],
                description=(f"{mode}, Antialiased {bool(antialiased)}, Scales {list(scales)}"
                             f": RESAMPLE3 is RESAMPLE2 here")))
    return {"resample3": out}
