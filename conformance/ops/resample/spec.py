"""RESAMPLE, RESAMPLE1, RESAMPLE2 and RESAMPLE3: one family base whose behaviour follows from what
each operator's desc states, and four spec classes that hold their pages' data (attributes,
support tables, page, feature level). The sampling is sampling.py's, the antialiased filter
antialias.py's (docs/spec-notes.md §4 and §10 hold the readings).

- RESAMPLE1: the coordinate relation, clamp, nearest floor(c + 0.5) and linear of sampling.py.
- RESAMPLE is RESAMPLE1 with InputPixelOffsets 0.5 and OutputPixelOffsets -0.5 (RESAMPLE1 page,
  Remarks): it states no offsets, and the family implies those.
- RESAMPLE2 (DML_FEATURE_LEVEL_5_1; INT8/UINT8 from 6_2) is RESAMPLE1 with a RoundingDirection:
  NEAREST_NEIGHBOR takes "DML_AXIS_DIRECTION_INCREASING. Round fractional coordinates toward
  increasing axis values (ceil)" and "DML_AXIS_DIRECTION_DECREASING ... (floor)": index ceil(c)
  or floor(c), a coordinate within float32 rounding of a whole number accepting either neighbour
  in mandatory cases (NearestRounding). LINEAR: "Since bilinear interpolation interpolates
  fractional coordinates anyway, this affects only DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR", and
  the Remarks: "This operator is equivalent to DML_RESAMPLE1_OPERATOR_DESC when
  InterpolationMode is set to DML_INTERPOLATION_MODE_LINEAR": RESAMPLE1's reference, strict bound
  and legal envelope, unchanged. Validation: every RESAMPLE1 rule, the RoundingDirection a
  DML_AXIS_DIRECTION value, the "Tensor constraints" and the two "Tensor support" tables.
- RESAMPLE3 (DML_FEATURE_LEVEL_6_4) is RESAMPLE2 with Antialiased. Remarks: "When Antialiased is
  false, this operator is equivalent to DML_RESAMPLE2_OPERATOR_DESC". Antialiased TRUE:
  "stretching the resampling filter by a factor max(1, 1 / scale) ... when this flag is set to
  TRUE, and assuming the following conditions: InterpolationMode is
  DML_INTERPOLATION_MODE_LINEAR; 1/Scales > 2". NEAREST_NEIGHBOR is unaffected, and so is a LINEAR
  call whose every 1/Scale is at most 2; otherwise the filter of antialias.py. Antialiased is a
  BOOL (any value of it is valid); one "Tensor support" table. silent_regions() names where the
  page leaves the output open; cases there are marked ambiguous.

Resample3 derives from Resample2 for RESAMPLE2's data (its attributes, tables' shape): RESAMPLE3
is RESAMPLE2's desc with Antialiased, and the RoundingDirection readings of RESAMPLE2 cover it
as one of RESAMPLE2's (tests/architecture/test_architecture_operators.py holds a package's
readings to its operators and those that extend them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.ops.base import (
    Attribute,
    OperatorCall,
    OperatorSpec,
    Statement,
    float32,
    table,
)
from conformance.ops.resample.antialias import (
    Axis,
    Reading,
    antialiased,
    filter_weights,
    readings,
    silences,
    stretch,
)
from conformance.ops.resample.attributes import (
    ANTIALIASED,
    AXIS_DIRECTIONS,
    INPUT_PIXEL_OFFSETS,
    INTERPOLATION_MODE,
    MODES,
    OUTPUT_PIXEL_OFFSETS,
    ROUNDING_DIRECTION,
    SCALES,
)
from conformance.ops.resample.describe import COUNT, KERNELS, TENSORS, formula
from conformance.ops.resample.examples import DIRECTION, ResampleExamples
from conformance.ops.resample.pages import (
    DIRECTION_PAGE,
    MODE_PAGE,
    RESAMPLE,
    RESAMPLE1,
    RESAMPLE2,
    RESAMPLE3,
)
from conformance.ops.resample.sampling import (
    Coordinates,
    NearestRounding,
    coordinates,
    legal_coordinate_error,
    linear_taps,
    resampled,
    unclamped,
)
from conformance.spec import Citation, Violation, notes

#: RoundingDirection's two readings of a nearest coordinate c, as RESAMPLE1's rounding of a
#: shifted coordinate: floor(c) = floor((c - 0.5) + 0.5), halves up; ceil(c) = ceil((c + 0.5) -
#: 0.5), halves down. Their near-ties are c within float32 rounding of a whole number.
_TIES = ("the coordinate within float32 rounding of a whole number: either neighbour (notes §10; "
         "a float32 coordinate may land on either side of it)")
ROUNDINGS = {
    "DECREASING": NearestRounding(
        shift=-0.5, halves_up=True, words="floor(c) (RoundingDirection DECREASING)",
        strict_why='"DML_AXIS_DIRECTION_DECREASING. Round fractional coordinates toward '
                   'decreasing axis values (floor)"', tie_why=_TIES),
    "INCREASING": NearestRounding(
        shift=0.5, halves_up=False, words="ceil(c) (RoundingDirection INCREASING)",
        strict_why='"DML_AXIS_DIRECTION_INCREASING. Round fractional coordinates toward '
                   'increasing axis values (ceil)"', tie_why=_TIES),
}


def support_tables(page: str, rows: Sequence[tuple[str, Sequence[int], str]]) -> tuple:
    """A resample page's "Tensor support" tables, each (level, dimension counts, data types) as
    the page words them, cited by their heading."""
    return tuple(table(lv, dims, types, page, f"Tensor support / DML_FEATURE_LEVEL_{lv} and above")
                 for lv, dims, types in rows)


def _tables(page: str, first: str) -> tuple:
    return support_tables(page, [(first, [4], "FLOAT32, FLOAT16"),
                                 ("5_1", [1, 2, 3, 4], "FLOAT32, FLOAT16"),
                                 ("6_2", [1, 2, 3, 4], "FLOAT32, FLOAT16, INT8, UINT8")])


def tables(page: str, rows: tuple[tuple[str, str], ...]) -> tuple:
    """The page's "Tensor support" tables, 1 to 4 dimensions each: (level, data types)."""
    return support_tables(page, [(lv, [1, 2, 3, 4], types) for lv, types in rows])


class ResampleFamily(OperatorSpec):
    """What the four operators share, each step taken as the operator's desc states it: offsets
    stated or implied (0.5 / -0.5), nearest rounded by a RoundingDirection or floor(c + 0.5), the
    antialiased filter where Antialiased is stated."""

    count_name: str  # "DimensionCount" or "ScaleCount"
    examples_type = ResampleExamples

    def states(self, attribute: str) -> bool:
        """Whether the operator's desc has this attribute (a later page adds some)."""
        return any(a.name == attribute for a in self.attributes)

    def formula(self) -> list[Statement]:
        return formula(self)

    def tensor_doc(self, name: str) -> str:
        return TENSORS[name]

    def derived_doc(self, name: str) -> str:
        return COUNT

    def capability_fields(self) -> tuple[str, ...]:
        """Pixel offsets, where the desc states them (capability_gap)."""
        return ("arbitrary_offsets", "offset_pairs") if self.states_offsets else ()

    @property
    def states_offsets(self) -> bool:
        """Whether the desc states its pixel offsets (RESAMPLE implies them)."""
        return self.states("InputPixelOffsets")

    def stated(self, attributes: Mapping[str, Any], direction: str = DIRECTION,
               antialiased: int = 1) -> dict[str, Any]:
        """RESAMPLE1's attributes with the RoundingDirection and Antialiased where the operator
        states them, in the page's order."""
        full = {**attributes, "RoundingDirection": direction, "Antialiased": antialiased}
        return {a.name: full[a.name] for a in self.attributes if a.name in full}

    def offsets(self, call: OperatorCall) -> tuple[np.ndarray, np.ndarray]:
        """The pixel offsets per dimension: stated, or RESAMPLE's implied 0.5 / -0.5."""
        if not self.states_offsets:
            n = len(call.attributes["Scales"])
            return np.full(n, 0.5), np.full(n, -0.5)
        a = call.attributes
        return float32(a["InputPixelOffsets"]), float32(a["OutputPixelOffsets"])

    def check_structure(self, parsed: dict[str, Any], given: Mapping[str, Any]) -> None:
        arrays = {k: v for k, v in parsed.items() if isinstance(v, tuple)}
        lengths = {len(v) for v in arrays.values()}
        if len(lengths) > 1:
            listed = ", ".join(f"{k} has {len(v)}" for k, v in arrays.items())
            raise ValueError(f"the arrays are all {self.count_name} long; {listed}")
        if self.count_name in given and given[self.count_name] != len(parsed["Scales"]):
            raise ValueError(f"{self.count_name} {given[self.count_name]} differs from the "
                             f"{len(parsed['Scales'])} Scales given")

    def desc_fields(self, call: OperatorCall) -> list[tuple[str, Any]]:
        """The Syntax blocks of DML_RESAMPLE_OPERATOR_DESC (InputTensor, OutputTensor,
        InterpolationMode, ScaleCount, Scales), DML_RESAMPLE1_OPERATOR_DESC (..., InterpolationMode,
        DimensionCount, Scales, InputPixelOffsets, OutputPixelOffsets) and their successors
        (RESAMPLE2 adds RoundingDirection before DimensionCount, RESAMPLE3 Antialiased last): the
        count stands right before the first array it counts."""
        fields = super().desc_fields(call)
        first = next(i for i, (name, _) in enumerate(fields) if name == "Scales")
        return [*fields[:first], (self.count_name, len(call.attributes["Scales"])),
                *fields[first:]]

    def infer_output_sizes(self, input_sizes: Sequence[int], attributes: Mapping[str, Any]
                           ) -> tuple[int, ...]:
        """floor(InputSize * Scale): the size the scales imply. A reading used to build cases;
        the spec does not require it ("the scales don't need to be exactly OutputSize /
        InputSize")."""
        scales = float32(attributes["Scales"])
        return tuple(max(1, math.floor(s * f)) for s, f in zip(input_sizes, scales, strict=True))

    def check(self, call: OperatorCall, level: FeatureLevel) -> list[Violation]:
        out = []
        a = call.attributes
        count = len(a["Scales"])
        for name in ("InputTensor", "OutputTensor"):
            dims = call.tensors[name].dimension_count
            if dims != count:
                out.append(Violation(
                    "resample.dimension_count",
                    f"{self.count_name} {count} differs from {name}'s dimension count {dims}; "
                    "it must match the dimension count of InputTensor and OutputTensor",
                    Citation(self.page, self.count_name)))
        if a["InterpolationMode"] not in MODES:
            out.append(Violation("resample.mode",
                                 f"InterpolationMode {a['InterpolationMode']!r} is not a "
                                 "DML_INTERPOLATION_MODE value",
                                 Citation(MODE_PAGE, "Constants")))
        scales = float32(a["Scales"])
        if not all(math.isfinite(s) and s > 0 for s in scales):
            out.append(Violation(
                "resample.scales",
                f"Scales {list(a['Scales'])} must be positive and finite (as float32); a zero or "
                "non-finite scale leaves the coordinate formula undefined (reading, notes §4)",
                notes("4")))
        if "InputPixelOffsets" in a:
            for name in ("InputPixelOffsets", "OutputPixelOffsets"):
                if not all(math.isfinite(v) for v in float32(a[name])):
                    out.append(Violation(
                        "resample.offsets",
                        f"{name} {list(a[name])} must be finite (as float32); reading, notes §4",
                        notes("4")))
        direction = a.get("RoundingDirection")
        if self.states("RoundingDirection") and direction not in AXIS_DIRECTIONS:
            out.append(Violation(
                "resample2.rounding_direction",
                f"RoundingDirection {direction!r} is not a DML_AXIS_DIRECTION value (INCREASING "
                "0, DECREASING 1)",
                Citation(DIRECTION_PAGE, "Constants")))
        return out

    def selects_elements(self, call: OperatorCall) -> bool:
        """Nearest-neighbour sampling selects input elements; linear computes its outputs."""
        return call.attributes["InterpolationMode"] == "NEAREST_NEIGHBOR"

    def consistent_with(self, call: OperatorCall, x: np.ndarray, index: tuple[int, ...],
                        value: float) -> str | None:
        """For a wrong LINEAR (or antialiased) element: the range of the inputs its expected
        taps read, when the value lies outside it (no weighted average of them: weights
        outside [0, 1], the bytes read as another type, or other elements); else, per
        dimension, the weight on its second tap that gives the value with the other
        dimensions' weights as expected, and the coordinate that weight means."""
        if call.attributes["InterpolationMode"] != "LINEAR":
            return None
        taps, weights, coords = [], [], []
        filters = self.antialias_axes(call)
        if filters is not None:
            for d, axis in enumerate(filters):
                t, w, _, _ = filter_weights(axis)
                keep = w[index[d]] > 0
                taps.append(t[index[d]][keep])
                weights.append(w[index[d]][keep])
                coords.append(float(axis.c[index[d]]))
        else:
            for d, (c, _) in enumerate(self.axes(call, x.shape)):
                i0, i1, t = linear_taps(c, x.shape[d])
                k = index[d]
                pair = [int(i0[k]), int(i1[k])] if i1[k] != i0[k] else [int(i0[k])]
                taps.append(np.array(pair))
                weights.append(np.array([1 - t[k], t[k]][:len(pair)]))
                coords.append(float(c[k]))
        block = x[np.ix_(*taps)].astype(np.float64)
        read = [t[w > 0] for t, w in zip(taps, weights, strict=True)]  # the taps weighed in
        inside = x[np.ix_(*read)].astype(np.float64)
        with np.errstate(invalid="ignore"):
            lo, hi = float(np.nanmin(inside)), float(np.nanmax(inside))
        first = [int(t[0]) for t in read]
        last = [int(t[-1]) for t in read]
        slack = 1.0 if np.issubdtype(x.dtype, np.integer) else 1e-6 * max(abs(lo), abs(hi))
        if not (np.isfinite(value) and lo - slack <= value <= hi + slack):
            return (f"{value:g} lies outside {lo:g} .. {hi:g}, the range of the {inside.size} "
                    f"inputs its taps read ({first} .. {last}): no weighted average of them "
                    "(weights outside [0, 1], the bytes read as another type, or other elements)")
        said = []
        for d in range(x.ndim):
            if len(taps[d]) != 2:
                continue
            sides = []
            for k in range(2):
                part = block.take([k], axis=d)
                for e in range(x.ndim):
                    if e != d:
                        shape = [-1 if j == e else 1 for j in range(x.ndim)]
                        part = part * weights[e].reshape(shape)
                sides.append(float(part.sum()))
            if sides[0] == sides[1]:
                continue
            share = (value - sides[0]) / (sides[1] - sides[0])
            if 0.0 <= share <= 1.0 and abs(share - weights[d][1]) > 1e-6:
                said.append(f"along dimension {d}, the weight {share:.4g} on input index "
                            f"{int(taps[d][1])} (expected {weights[d][1]:.4g}): the coordinate "
                            f"{int(taps[d][0]) + share:.6g} instead of {coords[d]:.6g}")
        if not said:
            return None
        return "it is consistent with " + "; or ".join(said)

    def capability_gap(self, call: OperatorCall, capabilities: Any) -> str | None:
        """A backend that takes some pixel offset pairs only (Capabilities.offset_pairs, e.g.
        an adapter whose target API expresses half-pixel and asymmetric sampling alone)."""
        if capabilities.arbitrary_offsets or "InputPixelOffsets" not in call.attributes:
            return None
        pairs = zip(call.attributes["InputPixelOffsets"], call.attributes["OutputPixelOffsets"],
                    strict=True)
        odd = [p for p in pairs if tuple(p) not in capabilities.offset_pairs]
        if odd:
            return (f"the backend takes pixel offset pairs {sorted(capabilities.offset_pairs)} "
                    f"only, not {odd[0]}")
        return None

    # -- reference ------------------------------------------------------------------------------
    def _parameters(self, call: OperatorCall, sizes: Sequence[int]) -> list[tuple]:
        """Per dimension (size of `sizes`, Scale, InputPixelOffset, OutputPixelOffset)."""
        in_off, out_off = self.offsets(call)
        return list(zip(sizes, float32(call.attributes["Scales"]), in_off, out_off,
                        strict=True))

    def axes(self, call: OperatorCall, in_shape: Sequence[int]) -> list[Coordinates]:
        """Per dimension: the clamped input coordinate of every output index, and its float32
        error allowance (see coordinates). With a RoundingDirection, for NEAREST_NEIGHBOR no
        near-tie where the clamp decided the coordinate: a clamped coordinate is 0 or
        InputSize - 1, a whole number that floor and ceil keep, and no float32 error reaches its
        other side (RESAMPLE1's clamped coordinates are whole too, never near its ties at
        halves). The allowance there is -inf: no |frac - 0.5| is within it, not even an exact
        tie's 0."""
        out_shape = call.tensors["OutputTensor"].sizes
        axes = [coordinates(o, i, s, a, b) for (o, s, a, b), i
                in zip(self._parameters(call, out_shape), in_shape, strict=True)]
        if (call.attributes["InterpolationMode"] != "NEAREST_NEIGHBOR"
                or not self.states("RoundingDirection")):
            return axes
        return [(c, np.where((raw < -err) | (raw > size - 1 + err), -np.inf, err))
                for (c, err), raw, size in zip(axes, self.unclamped(call), in_shape, strict=True)]

    def unclamped(self, call: OperatorCall) -> list[np.ndarray]:
        """Per dimension the page's coordinate of every output index before the clamp that
        coordinates() applies: (o - OutputPixelOffset) / Scale - InputPixelOffset (notes §4)."""
        return [unclamped(*p) for p in self._parameters(call,
                                                         call.tensors["OutputTensor"].sizes)]

    def legal_axes(self, call: OperatorCall) -> list[np.ndarray]:
        """Per dimension: the envelope's coordinate allowance of every output index."""
        return [legal_coordinate_error(*p) for p in self._parameters(
            call, call.tensors["OutputTensor"].sizes)]

    def nearest_rounding(self, call: OperatorCall) -> NearestRounding:
        """How NEAREST_NEIGHBOR rounds this call's coordinates: floor(c) for DECREASING, ceil(c)
        for INCREASING (the page's RoundingDirection), else floor(c + 0.5) (notes §4)."""
        if self.states("RoundingDirection"):
            return ROUNDINGS[call.attributes["RoundingDirection"]]
        return NearestRounding()

    def stretches(self, call: OperatorCall,
                  stretch: Callable[[float], float] = stretch) -> list[float]:
        """Per dimension the factor the filter is stretched by: 1 / Scale where 1 / Scale > 2,
        else 1 (stretch; a reading may give another rule)."""
        return [stretch(s) for s in float32(call.attributes["Scales"])]

    def antialias_axes(self, call: OperatorCall,
                       stretch: Callable[[float], float] = stretch,
                       stretches: Sequence[float] | None = None, edges: str = "repeat",
                       norm: str = "sum") -> list[Axis] | None:
        """Per dimension the antialiased filter's parameters, or None where the call is
        RESAMPLE2's (no Antialiased, Antialiased FALSE, NEAREST_NEIGHBOR, or no 1/Scale above
        2). stretches, edges, norm: an admissible reading's (antialias.readings), where the
        page is silent."""
        a = call.attributes
        if not a.get("Antialiased") or a["InterpolationMode"] != "LINEAR":
            return None
        if stretches is None:
            stretches = self.stretches(call, stretch)
        if all(f == 1.0 for f in stretches):
            return None
        # The filter is centred on the coordinate before coordinates()' clamp; its taps are
        # clamped (antialias.py).
        return [Axis(c=c, err=coordinates(o, i, s, p, q)[1],
                               reach=legal_coordinate_error(o, s, p, q), f=f, size=i,
                               edges=edges, norm=norm)
                for c, (o, s, p, q), i, f in zip(
                    self.unclamped(call),
                    self._parameters(call, call.tensors["OutputTensor"].sizes),
                    call.tensors["InputTensor"].sizes, stretches, strict=True)]

    def silent_regions(self, call: OperatorCall) -> list[str]:
        """Why the page leaves some output of this call open (docs/spec-notes.md §10), one
        reason each; empty where the page decides every output. A case whose call has any is
        marked ambiguous (docs/case-format.md). None without Antialiased: RoundingDirection
        decides every nearest coordinate, the Remarks make RESAMPLE2's LINEAR RESAMPLE1's, and the
        rounding of LINEAR integer outputs is accepted either way in every case (notes §4)."""
        a = call.attributes
        if not a.get("Antialiased") or a["InterpolationMode"] != "LINEAR":
            return []
        return silences(float32(a["Scales"]), self.antialias_axes(call) or [])

    def open_readings(self, call: OperatorCall) -> list[Reading]:
        """The admissible readings of this call's silent regions besides the suite's own
        (antialias.readings; docs/spec-notes.md §10): empty where the page decides every
        output."""
        if not self.silent_regions(call):
            return []
        return readings(float32(call.attributes["Scales"]),
                        lambda f, edges, norm: self.antialias_axes(call, stretches=f,
                                                                   edges=edges, norm=norm))[1:]

    def reference(self, call: OperatorCall, inputs: Mapping[str, np.ndarray]
                  ) -> dict[str, np.ndarray]:
        return {"OutputTensor": self.expected(call, inputs)["OutputTensor"].values}

    def expected(self, call: OperatorCall, inputs: Mapping[str, np.ndarray],
                 strict: bool = False, flags: ExecutionFlags = ExecutionFlags.NONE
                 ) -> dict[str, Expected]:
        x = inputs["InputTensor"]
        half = (x.dtype == np.float16
                and bool(flags & ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION))
        out = self._read(call, x, self.antialias_axes(call), strict, half)
        if not strict:  # judged against every admissible reading of an open region
            out.readings = tuple(self._reading(call, x, r, half)
                                 for r in self.open_readings(call))
        return {"OutputTensor": out}

    def _read(self, call: OperatorCall, x: np.ndarray, filters: list[Axis] | None,
              strict: bool, half: bool) -> Expected:
        """The output antialiased by filters, or RESAMPLE2's where there are none."""
        if filters is not None:
            return antialiased(x, filters, half)
        return resampled(x, call.attributes["InterpolationMode"], self.axes(call, x.shape),
                         self.legal_axes(call), self.nearest_rounding(call), strict, half)

    def _reading(self, call: OperatorCall, x: np.ndarray, reading: Reading, half: bool
                 ) -> Expected:
        """The output under an admissible reading, its rules naming it."""
        filters = self.antialias_axes(call, stretches=reading.stretches, edges=reading.edges,
                                      norm=reading.norm)
        exp = self._read(call, x, filters, False, half)
        rule = f"the admissible reading where the page is silent (notes §10): {reading.words}"
        legal = exp.legal
        return replace(exp, rule=rule, legal=None if legal is None else replace(
            legal, rule=f"{rule}, within the legal envelope"))


class Resample(ResampleFamily):
    name = "RESAMPLE"
    type_value = 96
    introduced = FeatureLevel.FL_2_0
    page = RESAMPLE
    attributes = (INTERPOLATION_MODE, SCALES)
    derived_attributes = ("ScaleCount",)
    count_name = "ScaleCount"
    support = _tables(page, "2_0")
    example_kernel = KERNELS[name]


class Resample1(ResampleFamily):
    name = "RESAMPLE1"
    type_value = 116
    introduced = FeatureLevel.FL_2_1
    page = RESAMPLE1
    attributes = (INTERPOLATION_MODE, SCALES, INPUT_PIXEL_OFFSETS, OUTPUT_PIXEL_OFFSETS)
    derived_attributes = ("DimensionCount",)
    count_name = "DimensionCount"
    support = _tables(page, "2_1")
    example_kernel = KERNELS[name]


class Resample2(ResampleFamily):
    name = "RESAMPLE2"
    type_value = 161  # DML_OPERATOR_RESAMPLE2 (DirectML.h, target 0x5100 and up; notes §1)
    introduced = FeatureLevel.FL_5_1  # Availability: "introduced in DML_FEATURE_LEVEL_5_1"
    page = RESAMPLE2
    attributes: tuple[Attribute, ...] = (INTERPOLATION_MODE, ROUNDING_DIRECTION, SCALES,
                                         INPUT_PIXEL_OFFSETS, OUTPUT_PIXEL_OFFSETS)
    derived_attributes = ("DimensionCount",)
    count_name = "DimensionCount"
    support = tables(page, (("5_1", "FLOAT32, FLOAT16"), ("6_2", "FLOAT32, FLOAT16, INT8, UINT8")))
    example_kernel = KERNELS[name]


class Resample3(Resample2):
    name = "RESAMPLE3"
    type_value = 175  # DML_OPERATOR_RESAMPLE3 (DirectML.h, target 0x6400; notes §1)
    introduced = FeatureLevel.FL_6_4  # Availability: "introduced in DML_FEATURE_LEVEL_6_4"
    page = RESAMPLE3
    attributes = (*Resample2.attributes, ANTIALIASED)
    support = tables(page, (("6_4", "FLOAT32, FLOAT16, INT8, UINT8"),))
    example_kernel = KERNELS[name]
