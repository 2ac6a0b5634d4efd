"""The legal envelope and the verdict tiers (docs/tolerances.md): compare.judge's PASS /
QUALITY_WARNING / FAIL and margins, the nearest envelope (a NaN may become any NaN, every other
bit kept), the linear envelope against hand-computed bounds, the envelope containing the strict
model, and the half-precision flag widening FLOAT16 only."""

from __future__ import annotations

import numpy as np
import pytest

from conformance import ops
from conformance.expected import Expected
from conformance.flags import ExecutionFlags
from conformance.judge import compare
from conformance.ops.resample import (
    FLOAT16_OP_ERROR,
    FLOAT32_OP_ERROR,
    legal_coordinate_error,
    operation_count,
)
from conformance.tensors import DataType, TensorDesc

HALF = ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION


def resample_call(data_type: DataType, sizes: tuple[int, ...], out: tuple[int, ...],
                  mode: str, scales: list[float], offsets: tuple[float, float] = (0.5, -0.5)
                  ) -> ops.OperatorCall:
    n = len(sizes)
    return ops.get("RESAMPLE1").make_call(
        {"InputTensor": TensorDesc(data_type, sizes), "OutputTensor": TensorDesc(data_type, out)},
        {"InterpolationMode": mode, "Scales": scales,
         "InputPixelOffsets": [offsets[0]] * n, "OutputPixelOffsets": [offsets[1]] * n})


def expected(call: ops.OperatorCall, x: np.ndarray, flags: ExecutionFlags = ExecutionFlags.NONE
             ) -> Expected:
    return ops.get(call.operator).expected(call, {"InputTensor": x}, flags=flags)["OutputTensor"]


# -- judge: the tiers and the margin --------------------------------------------------------------
def within(center: list[float], strict: float, legal: float) -> Expected:
    c = np.asarray(center, dtype=np.float64)
    values = c.astype(np.float32)
    return Expected(values, kind="within", center=c, bound=np.full(c.shape, strict),
                    legal=Expected(values, kind="within", center=c, bound=np.full(c.shape, legal)))


@pytest.mark.parametrize(("got", "status", "margin"), [
    ([1.0, 2.0], "PASS", 0.0),
    ([1.0, 2.05], "PASS", 0.05 / 0.5),       # inside the strict bound 0.1
    ([1.0, 2.3], "QUALITY_WARNING", 0.3 / 0.5),
    ([1.0, 2.6], "FAIL", 0.6 / 0.5),
    ([float("nan"), 2.0], "FAIL", 0.0),        # a NaN where a number is expected
])
def test_judge_gives_the_tier_and_the_margin(got: list[float], status: str, margin: float
                                             ) -> None:
    exp = within([1.0, 2.0], strict=0.1, legal=0.5)
    judged = compare.judge(np.asarray(got, dtype=np.float32), exp)
    assert judged.status == status
    assert judged.margin == pytest.approx(margin, rel=1e-6)
    # the elements reported are relative to the model that decided
    assert judged.model is (exp.envelope if status == "FAIL" else exp)
    assert judged.bad.any() == (status != "PASS")


def test_exact_models_have_no_margin_and_no_warning_tier() -> None:
    exp = Expected(np.array([1, 2], dtype=np.uint32))
    assert compare.judge(np.array([1, 2], np.uint32), exp).status == "PASS"
    judged = compare.judge(np.array([1, 3], np.uint32), exp)
    assert (judged.status, judged.margin) == ("FAIL", None)


# -- nearest: NaN payloads may change, nothing else ------------------------------------------------
def nearest_identity(data_type: DataType, bits: list[int]) -> tuple[Expected, np.ndarray]:
    call = resample_call(data_type, (1, 1, 1, len(bits)), (1, 1, 1, len(bits)),
                         "NEAREST_NEIGHBOR", [1, 1, 1, 1])
    x = np.asarray(bits, dtype=data_type.bits_dtype).view(data_type.numpy_dtype)
    return expected(call, x.reshape(1, 1, 1, -1)), x.reshape(1, 1, 1, -1)


def test_nearest_nan_payload_change_is_a_quality_warning() -> None:
    exp, x = nearest_identity(DataType.FLOAT16, [0x7C01, 0x7E15, 0x3C00])  # sNaN, qNaN, 1.0
    got = np.asarray([0x7E00, 0x7E00, 0x3C00], np.uint16).view(np.float16).reshape(x.shape)
    judged = compare.judge(got, exp)
    assert judged.status == "QUALITY_WARNING" and int(judged.bad.sum()) == 2
    assert compare.judge(x.copy(), exp).status == "PASS"


def test_nearest_nan_must_stay_nan_and_denormals_keep_their_bits() -> None:
    exp, x = nearest_identity(DataType.FLOAT32, [0x7F800001, 0x00000001, 0x80000000])
    not_nan = x.copy()
    not_nan.view(np.uint32)[..., 0] = 0x7F800000  # +inf instead of the NaN
    assert compare.judge(not_nan, exp).status == "FAIL"
    flushed = x.copy()
    flushed.view(np.uint32)[..., 1] = 0  # the denormal flushed: selection is data movement
    assert compare.judge(flushed, exp).status == "FAIL"
    positive_zero = x.copy()
    positive_zero.view(np.uint32)[..., 2] = 0  # -0.0 read back as +0.0
    assert compare.judge(positive_zero, exp).status == "FAIL"


def test_depth_to_space_has_no_envelope_beyond_its_bits() -> None:
    call = ops.get("DEPTH_TO_SPACE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT16, (1, 4, 1, 1)),
         "OutputTensor": TensorDesc(DataType.FLOAT16, (1, 1, 2, 2))},
        {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"})
    x = np.asarray([0x7C01, 1, 2, 3], np.uint16).view(np.float16).reshape(1, 4, 1, 1)
    exp = ops.get(call.operator).expected(call, {"InputTensor": x})["OutputTensor"]
    assert exp.legal is None and not exp.any_nan
    quieted = exp.values.copy()
    quieted.view(np.uint16)[0, 0, 0, 0] = 0x7E01
    assert compare.judge(quieted, exp).status == "FAIL"


# -- linear: the envelope, by hand -----------------------------------------------------------------
def test_operation_count_is_the_worse_of_the_two_evaluations() -> None:
    assert [operation_count(d) for d in (1, 2, 3, 4)] == [4, 8, 12, 19]


def test_linear_envelope_matches_the_documented_formula() -> None:
    # 1-D, 2x, half-pixel, on [1, 3]: output 1 has c = (1 + 0.5) / 2 - 0.5 = 0.25 -> 1.5.
    call = resample_call(DataType.FLOAT32, (2,), (4,), "LINEAR", [2.0])
    x = np.array([1.0, 3.0], np.float32)
    exp = expected(call, x)
    assert exp.values[1] == np.float32(1.5)
    coordinate = legal_coordinate_error(4, 2.0, 0.5, -0.5)[1]
    assert coordinate == pytest.approx(8 * 2.0**-23 * ((1 + 0.5) / 2 + 0.5 + 1))
    peak, spread = 3.0, 2.0
    want = (np.spacing(np.float32(1.5)) + operation_count(1) * FLOAT32_OP_ERROR * peak
            + 1 * FLOAT32_OP_ERROR * peak + coordinate * spread
            + 2 * operation_count(1) * 2.0**-126 * peak)
    assert exp.envelope.bound[1] == pytest.approx(want, rel=1e-12)
    # strict: one ulp + 2^-21 sum|w x| + e(o) * spread, with sum|w x| = 0.75 * 1 + 0.25 * 3
    strict = np.spacing(np.float32(1.5)) + 2.0**-21 * 1.5 + 2.0**-20 * (1.5 / 2 + 0.5 + 1) * 2
    assert exp.bound[1] == pytest.approx(strict, rel=1e-12)


@pytest.mark.parametrize("data_type", [DataType.FLOAT32, DataType.FLOAT16, DataType.INT8,
                                       DataType.UINT8])
def test_the_strict_model_is_inside_the_envelope(data_type: DataType) -> None:
    rng = np.random.default_rng(7)
    for dims in (1, 2, 3, 4):
        sizes = tuple(int(v) for v in rng.integers(1, 5, dims))
        scales = [float(v) for v in rng.choice([0.5, 1.0, 1.5, 2.0, 3.0], dims)]
        out = tuple(max(1, int(s * f)) for s, f in zip(sizes, scales, strict=True))
        call = resample_call(data_type, sizes, out, "LINEAR", scales, (0.25, -0.75))
        if data_type.is_float:
            x = rng.uniform(-8, 8, sizes).astype(data_type.numpy_dtype)
        else:
            info = np.iinfo(data_type.numpy_dtype)
            x = rng.integers(info.min, info.max + 1, sizes).astype(data_type.numpy_dtype)
        exp = expected(call, x)
        assert exp.legal is not None
        assert np.all(exp.envelope.bound >= exp.bound)
        # ... but not loose: far below a pixel's worth of the taps' spread here
        assert np.all(exp.envelope.bound < 1e-3 * max(1.0, float(np.abs(x).max())) + 1)


def test_half_precision_flag_widens_float16_linear_only() -> None:
    for data_type in (DataType.FLOAT32, DataType.FLOAT16):
        call = resample_call(data_type, (1, 1, 2, 2), (1, 1, 4, 4), "LINEAR", [1, 1, 2, 2])
        x = np.array([[[[1, 2], [3, 4]]]], data_type.numpy_dtype)
        plain, half = expected(call, x), expected(call, x, HALF)
        if data_type == DataType.FLOAT16:
            assert np.all(half.envelope.bound > plain.envelope.bound)
            # 19 half-precision op errors of the largest tap, plus 4 weights' worth
            assert half.envelope.bound.max() >= (19 + 8) * FLOAT16_OP_ERROR * 4
            assert "half precision" in half.envelope.rule
            np.testing.assert_array_equal(half.bound, plain.bound)  # the strict model is one
        else:
            np.testing.assert_array_equal(half.envelope.bound, plain.envelope.bound)


def test_float16_in_half_precision_is_a_warning_with_the_flag_and_a_failure_without() -> None:
    call = resample_call(DataType.FLOAT16, (1, 1, 1, 4), (1, 1, 1, 12), "LINEAR", [1, 1, 1, 3])
    x = np.array([[[[1000.0, -999.0, 517.0, 3.0]]]], np.float16)
    exp_plain, exp_half = expected(call, x), expected(call, x, HALF)
    # A half-precision evaluation error of 8 op errors of each value (at most its largest tap):
    # beyond float32 math, inside half-precision math.
    got = (exp_plain.center * (1 + 8 * FLOAT16_OP_ERROR)).astype(np.float16)
    assert compare.judge(got, exp_plain).status == "FAIL"
    assert compare.judge(got, exp_half).status == "QUALITY_WARNING"


def test_nan_and_infinity_in_linear_need_the_same_in_the_output() -> None:
    # Scale 1, half-pixel: every output sits on a sample (t = 0), so each output is its sample
    # whatever the zero-weight neighbour holds; multiplying that neighbour in is legal too and
    # gives NaN where it is NaN or infinite ("(+/-)INF * 0 = NaN").
    call = resample_call(DataType.FLOAT32, (3,), (3,), "LINEAR", [1.0])
    x = np.array([np.inf, 1.0, np.nan], np.float32)
    exp = expected(call, x)
    assert exp.values[1] == 1.0 and exp.nan_ok is not None and list(exp.nan_ok) == [
        False, True, False]
    assert compare.judge(x.copy(), exp).status == "PASS"
    multiplied = np.array([np.inf, np.nan, np.nan], np.float32)  # 1 * 1 + NaN * 0
    assert compare.judge(multiplied, exp).status == "PASS"
    other_nan = x.copy()
    other_nan.view(np.uint32)[2] = 0xFFC00001
    assert compare.judge(other_nan, exp).status == "PASS"  # any NaN, already in the strict model
    finite = x.copy()
    finite[0] = 3.4e38
    assert compare.judge(finite, exp).status == "FAIL"
    wrong = x.copy()
    wrong[1] = 2.0
    assert compare.judge(wrong, exp).status == "FAIL"


def test_a_coordinate_legally_off_a_sample_may_weight_the_next_tap() -> None:
    # Scale 1, half-pixel: c = o exactly, so the exact value reads one sample and the next tap
    # has weight 0. A division 2 ulp high puts c a few float32 ulps past the sample: the next
    # tap gets a tiny weight, which the coordinate term must cover (a hole found by the resample
    # misreadings' legal backend on sampling/.../scale-1.6-size-x2).
    call = resample_call(DataType.FLOAT32, (2,), (2,), "LINEAR", [1.0])
    x = np.array([1.0, 1000.0], np.float32)
    exp = expected(call, x)
    dc = 2 * 2.0**-23 * 1.5  # the coordinate (0 + 0.5) / 1 - 0.5 with 0.5 / 1 two ulp high
    got = np.array([1.0 + dc * 999.0, 1000.0], np.float32)
    assert got[0] != exp.values[0]
    assert compare.judge(got, exp).status in ("PASS", "QUALITY_WARNING")
    # ... while a whole pixel off is still far outside
    assert compare.judge(np.array([1000.0, 1000.0], np.float32), exp).status == "FAIL"
