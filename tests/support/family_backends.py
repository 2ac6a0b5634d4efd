"""Test doubles for the property-generated case families: TEST DOUBLES ONLY.

Each class is the NumPy reference backend with exactly one fault, the fault that one family of
cases/generated/<family>/ is built to catch (tests/generate/test_generate_families.py checks
that it does, and that the backend passes families that do not touch its fault):

- InconsistentOrderBackend   SPACE_TO_DEPTH1 runs the other Order; DEPTH_TO_SPACE1 is right
                                                                      -> roundtrip FAILs
- SwappedOrderBackend        both *1 operators swap the two Orders consistently: round trips
                             still pass                                 -> equivalence FAILs
- IgnoresInputOffsetBackend  RESAMPLE1 takes InputPixelOffsets as 0      -> offsets FAILs
- IgnoresStridesBackend      reads and writes every tensor as if packed -> layouts FAILs
- HalvesToEvenBackend        nearest picks rint(c) (halves to even), not floor(c + 0.5): legal at
                             the ties of mandatory cases (either neighbour), FAILs the ambiguous
                             'ties' cases of offsets (judged strictly), which decide nothing
- AcceptsInt32ResampleBackend validates like the reference but accepts INT32 for RESAMPLE1
                                                                      -> tables FAILs
- CanonicalNaNBackend        rewrites every NaN it outputs to the canonical quiet NaN
                                                                      -> bitlevel FAILs
- TiledBackend               leaves the last column of outputs wider than 64 unwritten
                                                                      -> large FAILs

(The invalid family is checked with tests/support/broken_backends.py's AcceptAllBackend.)

The resample doubles compute through the operator spec (conformance.ops) with patched
attributes or coordinates, never with a copy of the reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from backends.numpy_reference import NumpyReferenceBackend
from conformance import ops
from conformance.backend import Capabilities, DescRejected
from conformance.ops import OperatorCall
from conformance.ops.base import float32
from conformance.ops.resample import coordinates
from conformance.tensors import DataType, TensorDesc, read_tensor, strided_view, write_tensor

OTHER_ORDER = {"DEPTH_COLUMN_ROW": "COLUMN_ROW_DEPTH", "COLUMN_ROW_DEPTH": "DEPTH_COLUMN_ROW"}


def with_attributes(call: OperatorCall, **changes: Any) -> OperatorCall:
    """The call with some attributes replaced."""
    return replace(call, attributes={**call.attributes, **changes})


def _other_order(call: OperatorCall) -> OperatorCall:
    order = call.attributes.get("Order")
    return with_attributes(call, Order=OTHER_ORDER[order]) if order in OTHER_ORDER else call


class InconsistentOrderBackend(NumpyReferenceBackend):
    """SPACE_TO_DEPTH1 runs with the other DML_DEPTH_SPACE_ORDER than asked; DEPTH_TO_SPACE1 and
    the original operators are right. SPACE_TO_DEPTH1 then no longer inverts DEPTH_TO_SPACE1 of
    the same Order (invisible with BlockSize 1 or one channel in the space form)."""

    name = "family-inconsistent-order"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if call.operator == "SPACE_TO_DEPTH1":
            call = _other_order(call)
        super().execute(call, bindings)


class SwappedOrderBackend(NumpyReferenceBackend):
    """DEPTH_TO_SPACE1 and SPACE_TO_DEPTH1 both run DEPTH_COLUMN_ROW as COLUMN_ROW_DEPTH and back:
    consistent, so every round trip still returns its input, but DEPTH_COLUMN_ROW no longer
    equals the original operators."""

    name = "family-swapped-order"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if call.operator in ("DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"):
            call = _other_order(call)
        super().execute(call, bindings)


class IgnoresInputOffsetBackend(NumpyReferenceBackend):
    """RESAMPLE1 computed by the spec with InputPixelOffsets patched to 0 (OutputPixelOffsets
    kept). RESAMPLE is right."""

    name = "family-ignores-input-offset"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if call.operator == "RESAMPLE1":
            self.create_operator(call)  # the desc as given is validated
            zeros = (0.0,) * len(call.attributes["InputPixelOffsets"])
            call = with_attributes(call, InputPixelOffsets=zeros)
        super().execute(call, bindings)


def _packed(desc: TensorDesc) -> TensorDesc:
    return replace(desc, strides=None, total_tensor_size_in_bytes=None)


class IgnoresStridesBackend(NumpyReferenceBackend):
    """Validates the desc as given, then reads every input and writes every output as if its
    Strides were omitted (packed, row-major). Where the packed image is longer than the binding
    (a broadcast input), bytes beyond it read as 0 and writes beyond it are dropped, as robust
    buffer access does on a GPU; nothing outside the binding is touched."""

    name = "family-ignores-strides"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        self.create_operator(call)
        packed = replace(call, tensors={n: _packed(d) for n, d in call.tensors.items()})
        spec = ops.get(call.operator)
        inputs = {}
        for name in spec.inputs:
            desc, buffer = packed.tensors[name], bindings[name]
            image = np.zeros(max(desc.total_size, buffer.size), dtype=np.uint8)
            image[:buffer.size] = buffer
            inputs[name] = read_tensor(desc, image)
        for name, values in spec.reference(packed, inputs).items():
            desc, buffer = packed.tensors[name], bindings[name]
            image = np.zeros(desc.total_size, dtype=np.uint8)
            write_tensor(desc, image, values)
            n = min(desc.element_count * desc.data_type.size, buffer.size)
            buffer[:n] = image[:n]


class _NearestIndexBackend(NumpyReferenceBackend):
    """Nearest-neighbour resampling of `operators` with index(c, InputSize) in place of the
    spec's rounding, where applies(call); c comes from the spec's own coordinates()
    (conformance.ops.resample). Every other call is the reference's."""

    operators: ClassVar[tuple[str, ...]] = ()

    def applies(self, call: OperatorCall) -> bool:
        return (call.operator in self.operators
                and call.attributes["InterpolationMode"] == "NEAREST_NEIGHBOR")

    def index(self, c: np.ndarray, size: int) -> np.ndarray:
        raise NotImplementedError

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if not self.applies(call):
            super().execute(call, bindings)
            return
        self.create_operator(call)
        spec = ops.get(call.operator)
        x = read_tensor(call.tensors["InputTensor"], bindings["InputTensor"])
        out = call.tensors["OutputTensor"]
        in_off, out_off = spec.offsets(call)
        index = [self.index(coordinates(o, i, s, a, b)[0], i).astype(np.int64)
                 for o, i, s, a, b in zip(out.sizes, x.shape, float32(call.attributes["Scales"]),
                                          in_off, out_off, strict=True)]
        write_tensor(out, bindings["OutputTensor"], x[np.ix_(*index)])


class HalvesToEvenBackend(_NearestIndexBackend):
    """Nearest-neighbour resampling (RESAMPLE and RESAMPLE1) with the index rint(c), halves to
    even, where the suite's reading is floor(c + 0.5). The two differ only at exact ties, an open
    region (spec-notes §4) where every case accepts either neighbour; the equivalence family's
    ambiguous tie relations (bit equality with RESAMPLE2 DECREASING) FAIL without deciding the
    exit status. LINEAR is right."""

    name = "family-halves-to-even"
    operators = ("RESAMPLE", "RESAMPLE1")

    def index(self, c: np.ndarray, size: int) -> np.ndarray:
        return np.rint(c)


class MarginCeilBackend(_NearestIndexBackend):
    """RESAMPLE2 (and RESAMPLE3) nearest INCREASING computed as trunc(c + 0.999) instead of
    ceil(c): right everywhere but where the coordinate's fraction is above 0 and below 0.001
    (issue 25's bug that no case could see before the boundaries family)."""

    name = "family-margin-ceil"
    operators = ("RESAMPLE2", "RESAMPLE3")

    def applies(self, call: OperatorCall) -> bool:
        return super().applies(call) and call.attributes["RoundingDirection"] == "INCREASING"

    def index(self, c: np.ndarray, size: int) -> np.ndarray:
        return np.minimum(np.trunc(c + 0.999), size - 1)


class AcceptsInt32ResampleBackend(NumpyReferenceBackend):
    """Validates every desc like the reference except that RESAMPLE1 takes INT32 tensors (no
    RESAMPLE1 table lists INT32 at any level); it runs them through the spec's reference, which
    computes any integer type. It claims INT32 for RESAMPLE1."""

    name = "family-accepts-int32-resample"

    @property
    def capabilities(self) -> Capabilities:
        caps = super().capabilities
        operators = dict(caps.operators)
        operators["RESAMPLE1"] = operators["RESAMPLE1"] | {DataType.INT32}
        return replace(caps, operators=operators)

    def create_operator(self, call: OperatorCall) -> None:
        violations = ops.get(call.operator).validate(call, self.claimed_level)
        if call.operator == "RESAMPLE1":
            violations = [v for v in violations if not (
                v.rule == "operator.data_type" and "DataType INT32 " in v.message)]
        if violations:
            raise DescRejected("; ".join(str(v) for v in violations))


class CanonicalNaNBackend(NumpyReferenceBackend):
    """Right values, but every NaN it writes (any sign, payload, quiet or signalling) becomes the
    canonical quiet NaN of the type, as a path through float registers that canonicalises may do.
    Depth/space operators must move bits (spec-notes §3), and nearest selects an element."""

    name = "family-canonical-nan"
    CANONICAL: ClassVar[dict[DataType, int]] = {DataType.FLOAT16: 0x7E00,
                                                DataType.FLOAT32: 0x7FC00000,
                                                DataType.FLOAT64: 0x7FF8000000000000}

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super().execute(call, bindings)
        for name in ops.get(call.operator).outputs:
            desc = call.tensors[name]
            if desc.data_type in self.CANONICAL:
                view = strided_view(desc, bindings[name])
                view.view(desc.data_type.bits_dtype)[np.isnan(view)] = self.CANONICAL[
                    desc.data_type]


class TiledBackend(NumpyReferenceBackend):
    """Right for outputs up to WIDTH elements wide; a wider output (its last dimension) has its
    last column left unwritten, as a tiled kernel whose tile count is rounded down would."""

    name = "family-tiled"
    WIDTH = 64

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        outputs = ops.get(call.operator).outputs
        before = {n: read_tensor(call.tensors[n], bindings[n]) for n in outputs}
        super().execute(call, bindings)
        for name in outputs:
            desc = call.tensors[name]
            if desc.sizes[-1] > self.WIDTH:
                bits = desc.data_type.bits_dtype
                view = strided_view(desc, bindings[name]).view(bits)
                view[..., -1] = before[name].view(bits)[..., -1]
