"""RESAMPLE1's nearest cross-checked against RESAMPLE2 (the equivalence family's RESAMPLE2 part),
as relations on the backend's own outputs (one input, equal bits asked):

- The ties. RESAMPLE1's nearest index is floor(c + 0.5), but at an exact tie (c a half) the
  page does not say which neighbour it picks (NOTES §4). RESAMPLE2 names the rounding: with
  RoundingDirection DECREASING and InputPixelOffsets 0.5 lower its coordinate is c + 0.5 and its
  index floor(c + 0.5), RESAMPLE1's with halves up; with INCREASING and InputPixelOffsets 0.5
  higher, ceil(c - 0.5), RESAMPLE1's with halves down (DirectML's ONNX Runtime provider maps ONNX
  Resize's round_prefer_ceil and round_prefer_floor so, and real DirectML's RESAMPLE1 equals the
  DECREASING call bit for bit: NOTES §10). The two RESAMPLE2 calls differ exactly at RESAMPLE1's
  ties, and a relation asks equal bits of every element, so each situation (a Scale and offset
  pair on one dimension, per data type) is two cases: the offsets moved by 1/8 off every tie,
  where RESAMPLE1 must equal both (mandatory); and at the ties, where it equals DECREASING by the
  suite's reading (floor(c + 0.5)), marked ambiguous: the halves-down reading would make it
  equal INCREASING instead. The clamp keeps the equalities at the edges (both clamp to the same
  element).
- The RESAMPLE2 page's Remarks: RESAMPLE1 equals RESAMPLE2 with NEAREST_NEIGHBOR, DECREASING
  "and OutputPixelOffsets are adjusted an additional -0.5". That coordinate is c + 0.5 / Scale:
  RESAMPLE1's floor(c + 0.5) at Scale 1 only. At Scale 1 the relation is asked (mandatory off
  the ties; at them ambiguous, as above). At other Scales the remark departs from floor(c + 0.5)
  (NOTES §10; real DirectML does not follow it): both calls are judged against the reference,
  in ambiguous cases that name the outputs where the remark's reading differs.

Every case is checked here: the ties land on ties, the mandatory cases have none (the reference
accepts one output per call), and the remark differs where a case says it does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from conformance.kit.build import chain, cite, desc, smooth_input
from conformance.ops.base import float32
from conformance.ops.resample.cases.derive import decided
from conformance.ops.resample.cases.offsets import AXES, one_axis
from conformance.ops.resample.examples import offsets_attributes
from conformance.ops.resample.sampling import coordinates, nearest_index
from conformance.ops.resample.spec import Resample2
from conformance.tensors import DataType

FAMILY = "equivalence"
DESCRIPTION = ("RESAMPLE1's nearest ties against RESAMPLE2 with each RoundingDirection, and the "
               "RESAMPLE2 page's nearest remark")
SPEC = Resample2()
TYPES = (DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8)
NEAREST = "NEAREST_NEIGHBOR"
Pair = tuple[float, float]
#: Scale and offset pair of the scaled dimension whose RESAMPLE1 coordinates land exactly on
#: halves (the offsets family's 'ties'): c = o / 2; c + 0.5 = (o + 0.5) / 1.5, whole at o = 1, 4;
#: c = (o + 2) / 4; c = 2o - 0.5.
AT_TIES: tuple[tuple[float, Pair], ...] = ((2.0, (0.0, 0.0)), (1.5, (0.5, -0.5)),
                                            (4.0, (0.0, -2.0)), (0.5, (0.5, 0.0)))
TIE_AXES = (1, 3)
#: How far the off-tie cases move the InputPixelOffset: no coordinate of those is a half.
OFF_TIE = 0.125
#: The remark at Scale 1 on every dimension of a [2, 3, 4, 5] tensor: offset pairs per
#: dimension; off the ties (p + q not a half) and at them (every coordinate a half).
REMARK_SIZES = [2, 3, 4, 5]
REMARK_OFF_TIE: tuple[Pair, ...] = ((0.25, 0.0), (-0.125, 0.5), (0.5, -0.5), (0.75, 0.375))
REMARK_AT_TIES: tuple[Pair, ...] = ((0.5, 0.0), (0.0, -0.5), (0.25, 0.25), (-0.75, 0.25))
#: The remark at other Scales (the width scaled, offsets pair): where it departs from
#: floor(c + 0.5), away from RESAMPLE2's own near-ties.
REMARK_SCALED: tuple[tuple[float, Pair], ...] = ((4.0, (0.0, 0.0)), (3.0, (0.0, 0.0)),
                                                 (2.0, (0.0, 0.0)), (4.0, (0.25, 0.0)))
TIES = ("NOTES §4: at an exact tie the RESAMPLE1 page does not say which neighbour nearest picks. "
        "The suite reads floor(c + 0.5), RESAMPLE2 DECREASING with InputPixelOffsets 0.5 lower "
        "(the mapping of DirectML's ONNX Runtime provider; real DirectML matches it bit for bit, "
        "NOTES §10); the halves-down reading ceil(c - 0.5) would make RESAMPLE1 equal RESAMPLE2 "
        "INCREASING with InputPixelOffsets 0.5 higher instead")
REMARK_TIES = ("NOTES §4: RESAMPLE1's ties are open; the RESAMPLE2 page's remark, which at "
               "Scale 1 equals the suite's reading floor(c + 0.5), would decide them halves up, "
               "but the suite does not take the remark as deciding RESAMPLE1 (it departs from "
               "floor(c + 0.5) at every other Scale, NOTES §10)")
REMARK_SCALED_WHY = ("NOTES §10: the RESAMPLE2 page's remark (RESAMPLE1 == RESAMPLE2 DECREASING "
                     "with OutputPixelOffsets 0.5 lower) gives floor(c + 0.5 / Scale), which "
                     "departs from floor(c + 0.5), the reading of the suite, of DirectML's ONNX "
                     "Runtime provider and of real DirectML, whenever Scale != 1")


def _calls(data_type: DataType, in_sizes: Sequence[int], out_sizes: Sequence[int],
           scales: Sequence[float], pairs: Sequence[Pair], others: dict[str, tuple[str, Any]]
           ) -> list[dict]:
    """RESAMPLE1 nearest with the given pairs, and RESAMPLE2 calls named by `others`: name ->
    (RoundingDirection, a function of the pairs)."""
    tensors = {"InputTensor": desc(data_type, in_sizes),
               "OutputTensor": desc(data_type, out_sizes)}
    calls = [{"name": "resample1", "operator": "RESAMPLE1",
              "attributes": offsets_attributes(NEAREST, scales, pairs), "tensors": tensors}]
    for name, (direction, moved) in others.items():
        calls.append({"name": name, "operator": SPEC.name,
                      "attributes": SPEC.stated(offsets_attributes(NEAREST, scales,
                                                                   moved(pairs)), direction),
                      "tensors": tensors})
    return calls


def _input_by(delta: float) -> Any:
    return lambda pairs: [(a + delta, b) for a, b in pairs]


def _output_by(delta: float) -> Any:
    return lambda pairs: [(a, b + delta) for a, b in pairs]


def _tied(in_sizes: Sequence[int], out_sizes: Sequence[int], scales: Sequence[float],
          pairs: Sequence[Pair]) -> bool:
    """Whether some RESAMPLE1 coordinate is exactly a half."""
    for o, i, s, (a, b) in zip(out_sizes, in_sizes, float32(scales), pairs, strict=True):
        c, _ = coordinates(o, i, s, *float32([a, b]))
        if np.any(c - np.floor(c) == 0.5):
            return True
    return False


def _check(cid: str, calls: list[dict], at_ties: bool) -> None:
    """At ties: RESAMPLE1 lands on one; off them: every call's reference takes one output."""
    first = calls[0]
    in_sizes, out_sizes = (first["tensors"][t]["Sizes"] for t in ("InputTensor", "OutputTensor"))
    a = first["attributes"]
    pairs = list(zip(a["InputPixelOffsets"], a["OutputPixelOffsets"], strict=True))
    if at_ties and not _tied(in_sizes, out_sizes, a["Scales"], pairs):
        raise AssertionError(f"{cid}: no RESAMPLE1 coordinate lands on a tie")
    if not at_ties and not all(decided(c["operator"], c["tensors"], c["attributes"])
                               for c in calls):
        raise AssertionError(f"{cid}: a coordinate is within rounding of a tie")


def _case(cid: str, calls: list[dict], relations: list[dict], *, at_ties: bool,
          ambiguous: str, spec: list[dict], description: str) -> dict:
    """The chain on one random input, checked (_check); ambiguous only at the ties."""
    _check(cid, calls, at_ties)
    source = smooth_input(cid, calls[0]["tensors"]["InputTensor"])
    return chain(cid, calls, family=FAMILY, spec=spec,
                 inputs={"resample1.InputTensor": source,
                         **{f"{c['name']}.InputTensor": {"from": "resample1.InputTensor"}
                            for c in calls[1:]}},
                 relations=relations, description=description,
                 ambiguous=ambiguous if at_ties else None,
                 tags=["nearest", "ties"] if at_ties else ["nearest"])


def _equal(name: str, why: str) -> dict:
    return {"equal": ["resample1.OutputTensor", f"{name}.OutputTensor"], "why": why}


DECREASING_WHY = ("RESAMPLE1's floor(c + 0.5) is RESAMPLE2 DECREASING (floor) of c + 0.5, "
                  "InputPixelOffsets 0.5 lower")
INCREASING_WHY = ("off the ties RESAMPLE1's floor(c + 0.5) is RESAMPLE2 INCREASING (ceil) of "
                  "c - 0.5, InputPixelOffsets 0.5 higher")
TIE_SPEC = [cite("DML_RESAMPLE2_OPERATOR_DESC", "RoundingDirection"),
            cite("DML_RESAMPLE1_OPERATOR_DESC", "InterpolationMode"), cite("NOTES", "4"),
            cite("NOTES", "10")]


def _ties() -> list[dict]:
    out = []
    for data_type in TYPES:
        for scale, pair in AT_TIES:
            for axis in TIE_AXES:
                for at_ties in (False, True):
                    moved = pair if at_ties else (pair[0] + OFF_TIE, pair[1])
                    in_sizes, out_sizes, scales, pairs = one_axis(axis, scale, moved, "natural")
                    where = "at-ties" if at_ties else "off-ties"
                    cid = (f"generated/equivalence/resample1-ties-resample2/{where}/{AXES[axis]}/"
                           f"scale-{scale}/offsets-{moved[0]}_{moved[1]}/"
                           f"{data_type.name.lower()}")
                    others = {"decreasing": ("DECREASING", _input_by(-0.5))}
                    relations = [_equal("decreasing", DECREASING_WHY)]
                    if not at_ties:
                        others["increasing"] = ("INCREASING", _input_by(0.5))
                        relations.append(_equal("increasing", INCREASING_WHY))
                    what = ("RESAMPLE1 nearest at exact ties against RESAMPLE2 DECREASING with "
                            "InputPixelOffsets 0.5 lower" if at_ties else
                            "RESAMPLE1 nearest off the ties against RESAMPLE2 DECREASING with "
                            "InputPixelOffsets 0.5 lower and INCREASING with them 0.5 higher")
                    out.append(_case(
                        cid, _calls(data_type, in_sizes, out_sizes, scales, pairs, others),
                        relations, at_ties=at_ties, ambiguous=TIES, spec=TIE_SPEC,
                        description=(f"{what}: {AXES[axis]} scaled by {scale}, offsets "
                                     f"{moved[0]} / {moved[1]}")))
    return out


REMARK_SPEC = [cite("DML_RESAMPLE2_OPERATOR_DESC", "Remarks"), cite("NOTES", "4"),
               cite("NOTES", "10")]
REMARK_WHY = ("the RESAMPLE2 page's Remarks: NEAREST_NEIGHBOR, DECREASING, OutputPixelOffsets "
              "0.5 lower")


def _remark_scale_1() -> list[dict]:
    out = []
    for data_type in TYPES:
        for at_ties, pairs in ((False, REMARK_OFF_TIE), (True, REMARK_AT_TIES)):
            where = "at-ties" if at_ties else "off-ties"
            cid = f"generated/equivalence/resample2-remark/scale-1/{where}/{data_type.name.lower()}"
            calls = _calls(data_type, REMARK_SIZES, REMARK_SIZES, [1.0] * 4, list(pairs),
                           {"remark": ("DECREASING", _output_by(-0.5))})
            out.append(_case(
                cid, calls, [_equal("remark", REMARK_WHY)],
                at_ties=at_ties, ambiguous=REMARK_TIES, spec=REMARK_SPEC,
                description=("Scale 1 on every dimension, offsets "
                             + ", ".join(f"{a} / {b}" for a, b in pairs)
                             + (": every coordinate a half" if at_ties else ": no tie"))))
    return out


def _departures(in_size: int, out_size: int, scale: float, pair: Pair) -> list[int]:
    """The output indices where the remark's floor(c + 0.5 / Scale) differs from floor(c + 0.5)
    (both clamped as the page clamps: RESAMPLE1's c, RESAMPLE2's c + 0.5 / Scale)."""
    s = float(float32([scale])[0])
    a, b = float32(list(pair))
    c, _ = coordinates(out_size, in_size, s, a, b)
    remark, _ = coordinates(out_size, in_size, s, a, b - 0.5)
    return [int(o) for o in np.flatnonzero(nearest_index(c) != np.floor(remark))]


def _remark_scaled() -> list[dict]:
    out = []
    for data_type in TYPES:
        for scale, pair in REMARK_SCALED:
            in_sizes, out_sizes, scales, pairs = one_axis(3, scale, pair, "natural")
            cid = (f"generated/equivalence/resample2-remark/scale-{scale}/offsets-{pair[0]}_"
                   f"{pair[1]}/{data_type.name.lower()}")
            calls = _calls(data_type, in_sizes, out_sizes, scales, pairs,
                           {"remark": ("DECREASING", _output_by(-0.5))})
            if not decided(SPEC.name, calls[1]["tensors"], calls[1]["attributes"]):
                raise AssertionError(f"{cid}: a remark coordinate is within rounding of a whole "
                                     "number")
            departs = _departures(in_sizes[3], out_sizes[3], scale, pair)
            if not departs:
                raise AssertionError(f"{cid}: the remark agrees with floor(c + 0.5) here")
            tied = _tied(in_sizes, out_sizes, scales, pairs)
            out.append(chain(
                cid, calls, family=FAMILY, spec=REMARK_SPEC,
                inputs={"resample1.InputTensor": smooth_input(cid, calls[0]["tensors"][
                    "InputTensor"]), "remark.InputTensor": {"from": "resample1.InputTensor"}},
                relations=[], expected={"resample1.OutputTensor": "reference",
                                        "remark.OutputTensor": "reference"},
                ambiguous=REMARK_SCALED_WHY, tags=["nearest", "remark"],
                description=(f"width scaled by {scale}, offsets {pair[0]} / {pair[1]}: the "
                             "remark's RESAMPLE2 call and RESAMPLE1 each against the reference; "
                             "RESAMPLE1 read as the remark says departs at width "
                             f"{', '.join(map(str, departs))}"
                             + (" (some of them RESAMPLE1 ties)" if tied else ""))))
    return out


def files() -> dict[str, list[dict]]:
    return {"resample2_ties": _ties(), "resample2_remark": _remark_scale_1() + _remark_scaled()}
