"""Legal implementations as tests (issue 11, part 6): RESAMPLE/RESAMPLE1 computed as the Direct3D
floating-point rules let a GPU compute them (tests/support/legal_backends.py: truncating float32,
fused multiply-add, reciprocal division, a quotient 2 ulp off, non-separable tap sums in bad orders,
float16 math under ALLOW_HALF_PRECISION_COMPUTATION, float32 denormals flushed, NaN payloads changed
in nearest) must PASS every mandatory committed case they support, QUALITY_WARNING allowed
(docs/tolerances.md). Each backend must also really deviate from the reference, so that the test
cannot pass vacuously, and the emulated arithmetic is checked on hand-computed values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

import numpy as np
import pytest

from backends.numpy_reference import NumpyReferenceBackend
from conformance import ops
from conformance.backend import Backend
from conformance.casefile import Case, load_cases, load_text
from conformance.flags import ExecutionFlags
from conformance.ops.base import float32
from conformance.ops.resample import coordinates
from conformance.results import PASSING, Result
from conformance.session.case_run import run_case
from conformance.tensors import DataType, TensorDesc, read_tensor
from tests.support import CASES
from tests.support import legal_backends as lb

F32, F16 = np.float32, np.float16
#: Hand-made cases that exercise a rule no committed linear case reaches: float32 denormal inputs
#: to LINEAR ([DENORM]: a backend may flush them).
RULE_CASES = """
cases:
  - id: legal-envelope/linear-float32-denormals
    description: float32 denormals of both signs interpolated with normal values, 2x.
    feature_level: "2_1"
    spec:
      - {page: DML_RESAMPLE1_OPERATOR_DESC, section: InterpolationMode}
      - {page: NOTES, section: "4"}
    operator: RESAMPLE1
    attributes: {InterpolationMode: LINEAR, Scales: [1, 1, 2, 2],
                 InputPixelOffsets: [0.5, 0.5, 0.5, 0.5],
                 OutputPixelOffsets: [-0.5, -0.5, -0.5, -0.5]}
    tensors:
      InputTensor: {DataType: FLOAT32, Sizes: [1, 1, 2, 3]}
      OutputTensor: {DataType: FLOAT32, Sizes: [1, 1, 4, 6]}
    inputs:
      InputTensor:
        bits: [[[["0x1", "0x7fffff", "0x80000010"], ["0x800000", "0x80400000", "0x3f800000"]]]]
    expected: {OutputTensor: reference}
"""


@cache
def mandatory_cases() -> tuple[Case, ...]:
    """The committed mandatory (not ambiguous) RESAMPLE/RESAMPLE1 cases, and RULE_CASES."""
    committed = load_cases([CASES])
    chosen = [c for c in committed if c.ambiguous is None
              and set(c.operators) <= {"RESAMPLE", "RESAMPLE1"}]
    return (*chosen, *load_text(RULE_CASES, "tests/judge/test_judge_legal_envelope.py"))


@dataclass
class Run:
    """A backend's results by case id, and each call's output (its logical elements' bytes)."""

    results: dict[str, Result]
    outputs: dict[int, bytes] = field(default_factory=dict)  # id(call) -> output bytes

    def supported(self) -> list[Result]:
        return [r for r in self.results.values() if r.status != "NOT_SUPPORTED"]


@cache
def run(cls: type[Backend]) -> Run:
    """Every chosen case through conformance.session.case_run.run_case, recording each call's
    output."""
    backend = cls()
    outputs: dict[int, bytes] = {}
    execute = backend.execute

    def recording(call: ops.OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        execute(call, bindings)
        if call.operator.startswith("RESAMPLE"):
            out = call.tensors["OutputTensor"]
            outputs[id(call)] = read_tensor(out, bindings["OutputTensor"]).tobytes()

    backend.execute = recording  # type: ignore[method-assign]
    results = {c.id: run_case(c, backend) for c in mandatory_cases()}
    return Run(results, outputs)


def differing_calls(a: Run, b: Run) -> int:
    """How many calls both runs executed gave different output bytes."""
    return sum(a.outputs[k] != b.outputs[k] for k in a.outputs.keys() & b.outputs.keys())


#: The default run certifies one legal backend on the whole mandatory RESAMPLE slice (the one
#: that breaks most of the strict reading at once: truncating, fused multiply-adds); CI's
#: certification step (`pytest -m certification`) every other one too, each a whole-slice run
#: of a few seconds of NumPy-emulated arithmetic.
DEFAULT_RUN = lb.TruncatingFusedBackend
BACKENDS = pytest.mark.parametrize("cls", [
    cls if cls is DEFAULT_RUN else pytest.param(cls, marks=pytest.mark.certification)
    for cls in lb.LEGAL_BACKENDS], ids=lambda c: c.name)


@BACKENDS
def test_a_legal_backend_passes_every_mandatory_case(cls: type[lb.LegalResampleBackend]) -> None:
    supported = run(cls).supported()
    assert len(supported) >= 20, f"{cls.name} ran only {len(supported)} cases"
    failing = [r for r in supported if r.status not in PASSING]
    shown = "\n".join(f"  {r.status} {r.id} (margin {r.margin}): {r.message[:400]}"
                      for r in failing[:8])
    assert not failing, (
        f"{cls.name} computes RESAMPLE as the Direct3D floating-point rules allow, yet "
        f"{len(failing)} of its {len(supported)} supported mandatory cases do not pass: the "
        f"suite rejects legal arithmetic there (outside its legal envelope, or a bit-exact "
        f"relation):\n{shown}")


#: The backend whose outputs each variant must differ from somewhere: the one without the rule
#: it demonstrates (the NumPy reference for the float32 variants rounding to nearest).
WITNESS: dict[type[Backend], type[Backend]] = {
    lb.TruncatingBackend: NumpyReferenceBackend,
    lb.TruncatingFusedBackend: lb.TruncatingBackend,
    lb.ReciprocalBackend: lb.TruncatingBackend,
    lb.DivisionTwoUlpsBackend: NumpyReferenceBackend,
    lb.DescendingTapsBackend: lb.TruncatingBackend,
    lb.ReversedFusedTapsBackend: lb.TruncatingBackend,
    lb.HalfPrecisionBackend: lb.TruncatingBackend,
    lb.FlushDenormalsBackend: lb.TruncatingBackend,
    lb.QuietedNaNBackend: NumpyReferenceBackend,
    lb.CanonicalNaNBackend: NumpyReferenceBackend,
}


@pytest.mark.certification  # three whole runs per variant (50 s for the default one)
@pytest.mark.parametrize("cls", lb.LEGAL_BACKENDS, ids=lambda c: c.name)
def test_a_legal_backend_really_deviates(cls: type[lb.LegalResampleBackend]) -> None:
    """Its outputs differ from the reference's and from those of the backend without its rule
    (WITNESS), on some call of the cases it supports: the rule is exercised, not idle."""
    mine = run(cls)
    assert differing_calls(mine, run(NumpyReferenceBackend)) > 0, \
        f"{cls.name} returned the reference's bits on every case: nothing legal was tested"
    witness = WITNESS[cls]
    assert differing_calls(mine, run(witness)) > 0, \
        f"{cls.name} returned the same bits as {witness.name} on every case it supports"
    if cls.nan != "kept":
        warned = [r.id for r in mine.supported() if r.status == "QUALITY_WARNING"]
        assert any("bitlevel" in i for i in warned), \
            f"{cls.name} changed no NaN payload that the judge saw: {warned}"


class HalfPrecisionWithoutFlag(lb.HalfPrecisionBackend):
    """legal-half-precision compiled without ALLOW_HALF_PRECISION_COMPUTATION."""

    name = "legal-half-precision-without-flag"

    def __init__(self) -> None:
        super().__init__()
        self.execution_flags = ExecutionFlags.NONE


def test_the_half_precision_flag_decides_float16_arithmetic() -> None:
    """legal-half-precision computes FLOAT16 in float16 only when compiled with the flag (it sets
    it itself); without it, its outputs are legal-truncating's, bit for bit, and pass."""
    assert ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION in \
        lb.HalfPrecisionBackend().execution_flags
    without, truncating = run(HalfPrecisionWithoutFlag), run(lb.TruncatingBackend)
    assert without.outputs and differing_calls(without, truncating) == 0
    assert differing_calls(run(lb.HalfPrecisionBackend), truncating) > 0
    assert all(r.status in PASSING for r in without.supported())


def test_the_flush_backend_flushes_denormals_in_linear_only() -> None:
    """The hand-made denormal case comes back with those values flushed to signed zero (a
    QUALITY_WARNING at worst), and nearest keeps denormals: it is a selection ([DENORM])."""
    flush = run(lb.FlushDenormalsBackend)
    case = next(c for c in mandatory_cases() if c.id == "legal-envelope/linear-float32-denormals")
    got = np.frombuffer(flush.outputs[id(case.calls[0].call)], dtype=F32)
    assert got[0] == 0 and not np.signbit(got[0])  # 0x1 interpolated with itself at the corner
    assert flush.results[case.id].status in PASSING
    backend = lb.FlushDenormalsBackend()
    x = np.array([1e-40, -1e-40, 1.0], dtype=F32).reshape(1, 1, 1, 3)
    call = ops.get("RESAMPLE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 1, 3)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 1, 3))},
        {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": [1, 1, 1, 1],
         "InputPixelOffsets": [0.0] * 4, "OutputPixelOffsets": [0.0] * 4})
    same = backend.resample(call, x, (1, 1, 1, 3))
    assert same.tobytes() == x.tobytes()


# -- the emulated arithmetic on hand-computed values -----------------------------------------------
def bits(x: np.ndarray | np.generic) -> int:
    a = np.asarray(x)
    return int(a.view(f"<u{a.dtype.itemsize}").item())


TRUNC, NEAREST = lb.Arithmetic(lb.F32, truncate=True), lb.Arithmetic(lb.F32)


def test_one_third_truncates_toward_zero() -> None:
    # 1/3 = 0x3eaaaaaa.aaa... : nearest rounds up to ...ab, truncation keeps ...aa.
    assert bits(NEAREST.div(F32(1), F32(3))) == 0x3EAAAAAB
    assert bits(TRUNC.div(F32(1), F32(3))) == 0x3EAAAAAA
    assert bits(TRUNC.div(F32(-1), F32(3))) == 0xBEAAAAAA  # toward zero, not down
    assert bits(TRUNC.rcp(F32(3))) == 0x3EAAAAAA
    # x * rcp(y): rcp(3) is the truncated 0x3eaaaaaa, and 2 * 0x3eaaaaaa = 0x3f2aaaaa exactly;
    # 6 * rcp(1.5) = 6 * 0x3f2aaaaa = 4 - 2^-22 exactly; rcp(1) is 1 - 2^-24 (1 ulp low), so
    # 5 * rcp(1) = 5 - 5 * 2^-24 truncates to 5 - 2^-21
    assert bits(lb.reciprocal_multiply(TRUNC, F32(2), F32(3))) == 0x3F2AAAAA
    assert lb.reciprocal_multiply(TRUNC, F32(6), F32(1.5)) == F32(4 - 2.0**-22)
    assert lb.reciprocal_multiply(TRUNC, F32(5), F32(1)) == F32(5 - 2.0**-21)
    # 1 - 2^-30: nearest gives 1.0, truncation the float below 1
    assert TRUNC.sub(F32(1), F32(2.0**-30)) == F32(1 - 2.0**-24)
    assert NEAREST.sub(F32(1), F32(2.0**-30)) == F32(1)
    # a product that is exact is not moved
    assert TRUNC.mul(F32(1.5), F32(3)) == F32(4.5)


def test_a_fused_multiply_add_rounds_once() -> None:
    a = F32(1 + 2.0**-12)  # a * a = 1 + 2^-11 + 2^-24: the 2^-24 is lost when the product rounds
    c = F32(-(1 + 2.0**-11))
    assert NEAREST.fma(a, a, c) == F32(2.0**-24)
    assert NEAREST.add(NEAREST.mul(a, a), c) == 0
    assert TRUNC.fma(a, a, c) == F32(2.0**-24)
    # 2^-24 (1 + 2^-23) * (1 - 2^-23) + (1 + 2^-23) = 1 + 3 * 2^-24 - 2^-70: just below the
    # midpoint 1 + 3 * 2^-24 that float64 rounds it to, so one rounding gives 1 + 2^-23, where
    # rounding the product first (to 2^-24) makes a tie that goes to the even 1 + 2^-22
    a, b, c = F32(2.0**-24 * (1 + 2.0**-23)), F32(1 - 2.0**-23), F32(1 + 2.0**-23)
    assert NEAREST.fma(a, b, c) == F32(1 + 2.0**-23)
    assert NEAREST.add(NEAREST.mul(a, b), c) == F32(1 + 2.0**-22)
    assert TRUNC.fma(a, b, c) == F32(1 + 2.0**-23)


def test_denormals_flushed_to_signed_zero() -> None:
    flush = lb.Arithmetic(lb.F32, truncate=True, flush=True)
    tiny = F32(2.0**-70)
    assert NEAREST.mul(tiny, tiny) == F32(2.0**-140)  # a denormal result, kept
    zero = flush.mul(-tiny, tiny)
    assert zero == 0 and np.signbit(zero)  # flushed on output, sign kept
    assert flush.add(F32(1e-40), F32(0)) == 0  # flushed on input
    assert flush.mul(F32(2.0**-63), F32(2.0**-63)) == F32(2.0**-126)  # the smallest normal stays


def test_float16_operations_round_to_nearest_even_and_keep_denormals() -> None:
    half = lb.Arithmetic(lb.F16)
    assert half.add(F16(1), F16(2.0**-11)) == F16(1)  # a tie: to even
    assert half.add(F16(1 + 2.0**-10), F16(2.0**-11)) == F16(1 + 2.0**-9)  # a tie: to even, up
    # 0.1 in float16 is 0x2e66 = 0.0999755859375; times 3 is 0.2999267578125, 1228.5 units of
    # 2^-12: a tie, to the even 1228 * 2^-12 = 0.2998046875 (0x34cc)
    assert bits(half.mul(F16(0.1), F16(3))) == 0x34CC
    assert half.mul(F16(2.0**-14), F16(2.0**-5)) == F16(2.0**-19)  # a float16 denormal, kept
    # converting float32 to float16: round-to-zero ([CONVERT]) or to nearest
    x = F32(1 + 2.0**-11 + 2.0**-12)
    assert lb.Arithmetic(lb.F16, truncate=True).convert(x) == F16(1)
    assert half.convert(x) == F16(1 + 2.0**-10)


def test_quotient_two_ulps_off_and_integer_conversions() -> None:
    q = lb.two_ulps_off(NEAREST, np.array([0.5, 1.5, 0.0], F32), np.ones(3, F32))
    assert list(q) == [F32(0.5 + 2 * 2.0**-24), F32(1.5 - 2 * 2.0**-23), F32(0)]
    y = np.array([2.9999998, -1.5, 300.0, -7.5], F32)
    assert list(lb.to_integer(y, np.dtype(np.int8), "truncate")) == [2, -1, 127, -7]
    assert list(lb.to_integer(y, np.dtype(np.int8), "nearest")) == [3, -2, 127, -8]


@pytest.mark.parametrize("scale,in_off,out_off", [
    (1.5, 0.0, 0.0), (3.0, 0.5, -0.5), (0.33333334, 0.25, 0.1), (2.1, -0.3, 0.7)])
def test_emulated_coordinates_follow_the_spec_definition(scale: float, in_off: float,
                                                         out_off: float) -> None:
    """Each backend's float32 coordinate is conformance.ops.resample.coordinates' c to within
    the float32 error of its few operations (a couple of ulps of the magnitudes involved)."""
    call = ops.get("RESAMPLE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 1, 9)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 1, 24))},
        {"InterpolationMode": "LINEAR", "Scales": [1, 1, 1, scale],
         "InputPixelOffsets": [0, 0, 0, in_off], "OutputPixelOffsets": [0, 0, 0, out_off]})
    s, a, b = (float(v) for v in float32([scale, in_off, out_off]))
    c, _ = coordinates(24, 9, s, a, b)
    o = np.arange(24)
    allowed = 4 * 2.0**-23 * (np.abs(o - b) / s + abs(a) + 1)
    for cls in lb.LEGAL_BACKENDS:
        got = cls().coordinates(call, (1, 1, 1, 9), (1, 1, 1, 24))[3].astype(np.float64)
        assert np.all(np.abs(got - c) <= allowed), cls.name
