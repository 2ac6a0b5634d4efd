"""RESAMPLE3 (conformance/ops/resample3): the page's table and Antialiased, the antialiased filter
against values worked by hand and against ONNX's reference Resize, the silent regions, and the
strict bound and legal envelope of the antialiased filter (docs/tolerances.md).

The hand values use powers of two, so every weight and sum is exact in float32 and a reader can
redo them: with Scale 1/4 the filter is the triangle 1 - |i - c| / 4 over the inputs within 4 of
the coordinate c, divided by the weights' sum (4 for a whole stretch).
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance import ops
from conformance.flags import ExecutionFlags
from conformance.judge.compare import margin, mismatches
from conformance.levels import FeatureLevel
from conformance.ops.resample.antialias import stretch
from conformance.tensors import DataType, TensorDesc
from tests.support import DOCUMENTED, run_misreading

R3 = ops.get("RESAMPLE3")
R2 = ops.get("RESAMPLE2")
L = FeatureLevel.parse
DTYPE_OF = {t.numpy_dtype: t for t in DataType}
POWERS = (2.0 ** np.arange(12)).astype(np.float32)  # 1 2 4 ... 2048


def make(spec, x_shape, out_shape, mode="LINEAR", scales=None, in_off=None, out_off=None,
         antialiased=True, direction="DECREASING", dt=DataType.FLOAT32):
    n = len(x_shape)
    attributes = {"InterpolationMode": mode, "RoundingDirection": direction,
                  "Scales": scales or [1.0] * n,
                  "InputPixelOffsets": in_off if in_off is not None else [0.0] * n,
                  "OutputPixelOffsets": out_off if out_off is not None else [0.0] * n}
    if spec.name == "RESAMPLE3":
        attributes["Antialiased"] = antialiased
    return spec.make_call({"InputTensor": TensorDesc(dt, tuple(x_shape)),
                           "OutputTensor": TensorDesc(dt, tuple(out_shape))}, attributes)


def expect(spec, call, x, **kw):
    return spec.expected(call, {"InputTensor": x}, **kw)["OutputTensor"]


# -- identity, table, Antialiased ----------------------------------------------------------------

def test_identity_and_table_from_the_page():
    assert R3.type_value == 175  # DML_OPERATOR_RESAMPLE3 counted in DirectML.h's enum
    assert R3.page == "DML_RESAMPLE3_OPERATOR_DESC"
    assert R3.introduced is FeatureLevel.FL_6_4
    assert [(str(t.level), sorted(t.dimension_counts), sorted(d.name for d in t.data_types))
            for t in R3.support] == [
        ("6_4", [1, 2, 3, 4], ["FLOAT16", "FLOAT32", "INT8", "UINT8"])]
    assert [a.name for a in R3.attributes][-1] == "Antialiased"
    assert [a.name for a in R3.attributes][:-1] == [a.name for a in R2.attributes]


def test_levels_types_and_the_bool():
    call = make(R3, [2, 2], [2, 2], dt=DataType.INT8)
    assert R3.validate(call, L("6_4")) == []
    assert [v.rule for v in R3.validate(call, L("6_3"))] == ["operator.level"]
    assert R3.required_level(call) is FeatureLevel.FL_6_4
    assert [v.rule for v in R3.validate(make(R3, [2], [2], direction=5), L("6_4"))] == [
        "resample2.rounding_direction"]
    attr = R3.attribute("Antialiased")
    assert [attr.parse(v) for v in (True, False, 1, 0)] == [True, False, True, False]
    for bad in (2, "true", 1.0, None):
        with pytest.raises(ValueError, match="Antialiased is a BOOL"):
            attr.parse(bad)


def test_stretch_only_where_one_over_scale_exceeds_2():
    # "1/Scales > 2", "a factor max(1, 1 / scale)": 1/0.25 = 4; 1/0.5 = 2 is not above 2.
    assert stretch(0.25) == 4.0 and stretch(0.125) == 8.0
    assert stretch(0.5) == 1.0 and stretch(0.75) == 1.0 and stretch(3.0) == 1.0


# -- when RESAMPLE3 is RESAMPLE2 -----------------------------------------------------------------

@pytest.mark.parametrize("mode, antialiased, scales", [
    ("LINEAR", False, [0.25, 1.5]),             # Remarks: Antialiased false == RESAMPLE2
    ("NEAREST_NEIGHBOR", False, [0.25, 0.3]),
    ("NEAREST_NEIGHBOR", True, [0.25, 0.3]),    # "InterpolationMode is ... LINEAR" only
    ("LINEAR", True, [0.75, 1.5]),              # no 1/Scale above 2
])
def test_equal_to_resample2(mode, antialiased, scales):
    x = np.random.default_rng(5).standard_normal((9, 7)).astype(np.float32)
    out = [max(1, int(n * s)) for n, s in zip(x.shape, scales, strict=True)]
    kw = dict(mode=mode, scales=scales, in_off=[0.5, 0.25], out_off=[-0.5, 0.0])
    three = expect(R3, make(R3, x.shape, out, antialiased=antialiased, **kw), x)
    two = expect(R2, make(R2, x.shape, out, **kw), x)
    assert three.kind == two.kind and three.rule == two.rule
    np.testing.assert_array_equal(three.values, two.values)
    for a, b in ((three, two), (three.envelope, two.envelope)):
        if a.kind == "within":
            np.testing.assert_array_equal(a.bound, b.bound)
    assert R3.silent_regions(make(R3, x.shape, out, antialiased=antialiased, **kw)) == []


# -- the antialiased filter, by hand ---------------------------------------------------------------

def test_symmetric_filter_by_hand():
    # Scale 1/4 (f = 4), InputPixelOffset -3.5: c = 4 o + 3.5 = 3.5, 7.5. Inputs within 4 of 3.5:
    # 0..7 at distances 3.5 2.5 1.5 0.5 0.5 1.5 2.5 3.5, weights 1 - d/4 = 1 3 5 7 7 5 3 1 (/8),
    # sum 32/8 = 4: normalised 1 3 5 7 7 5 3 1 (/32).
    # o = 0: (1*1 + 3*2 + 5*4 + 7*8 + 7*16 + 5*32 + 3*64 + 1*128) / 32 = 675 / 32 = 21.09375
    # o = 1: inputs 4..11, 16 times the same: 10800 / 32 = 337.5
    call = make(R3, [12], [2], scales=[0.25], in_off=[-3.5])
    exp = expect(R3, call, POWERS)
    np.testing.assert_array_equal(exp.values, np.float32([21.09375, 337.5]))
    assert R3.silent_regions(call) == []  # inside the input, whole stretch: the page decides
    # Without antialiasing (RESAMPLE2 linear) c = 3.5 gives (8 + 16) / 2 = 12, far outside.
    plain = expect(R2, make(R2, [12], [2], scales=[0.25], in_off=[-3.5]), POWERS)
    np.testing.assert_array_equal(plain.values, np.float32([12, 192]))
    assert mismatches(plain.values, exp.envelope).all()


def test_asymmetric_filter_by_hand():
    # InputPixelOffset -3.25: c = 3.25, 7.25. Inputs 0..7 at distances 3.25 2.25 1.25 0.25 0.75
    # 1.75 2.75 3.75: weights (3 7 11 15 13 9 5 1) / 16, sum 4: normalised (...) / 64.
    # o = 0: (3 + 14 + 44 + 120 + 208 + 288 + 320 + 128) / 64 = 1125 / 64 = 17.578125
    # o = 1: inputs 4..11: 16 * 17.578125 = 281.25
    call = make(R3, [12], [2], scales=[0.25], in_off=[-3.25])
    np.testing.assert_array_equal(expect(R3, call, POWERS).values, np.float32([17.578125, 281.25]))
    # Weights mirrored (1 5 9 13 15 11 7 3): (1 + 10 + 36 + 104 + 240 + 352 + 448 + 384) / 64 =
    # 1575 / 64 = 24.609375, which the envelope refuses.
    assert mismatches(np.float32([1575 / 64, 281.25]), expect(R3, call, POWERS).envelope)[0]


def test_separable_in_two_dimensions_by_hand():
    # Dimension 0 at Scale 1 and offsets 0: c = o, the input row itself. Dimension 1 as above.
    # Row 1 is 3 times row 0, so is its output: 63.28125 = 3 * 21.09375, 1012.5 = 3 * 337.5.
    x = np.stack([POWERS, 3 * POWERS])
    call = make(R3, [2, 12], [2, 2], scales=[1, 0.25], in_off=[0, -3.5])
    np.testing.assert_array_equal(expect(R3, call, x).values,
                                  np.float32([[21.09375, 337.5], [63.28125, 1012.5]]))
    assert R3.silent_regions(call) == []


def test_edges_repeat_the_edge_element_by_hand():
    # Half-pixel (0.5 / -0.5), Scale 1/4: c = 4 o + 1.5 = 1.5, 5.5, 9.5. At o = 0 the inputs -2..5
    # (weights 1 3 5 7 7 5 3 1, /32) read 0 0 0 1 2 3 4 5: (9*1 + 7*2 + 7*4 + 5*8 + 3*16 +
    # 1*32) / 32 = 171 / 32 = 5.34375. o = 1: inputs 2..9, (4 + 24 + 80 + 224 + 448 + 640 + 768 +
    # 512) / 32 = 2700 / 32 = 84.375. o = 2: inputs 6..13 read 6..11, 11, 11: (64 + 384 + 1280 +
    # 3584 + 7168 + 10240 + 6144 + 2048) / 32 = 30912 / 32 = 966.
    call = make(R3, [12], [3], scales=[0.25], in_off=[0.5], out_off=[-0.5])
    np.testing.assert_array_equal(expect(R3, call, POWERS).values,
                                  np.float32([5.34375, 84.375, 966]))
    reasons = R3.silent_regions(call)
    assert len(reasons) == 1 and "beyond the input's edge" in reasons[0]


def test_integer_outputs_accept_either_neighbour_of_the_exact_value():
    # The symmetric filter (1 3 5 7 7 5 3 1) / 32 at o = 0 over UINT8 inputs 0..7:
    # [5, 0, ...]: 5/32 = 0.15625 -> 0 or 1;  [0, 0, 0, 16, 16, 0, ...]: 14*16/32 = 7 exactly,
    # where a float32 6.9999995 may truncate to 6 (NOTES §4's allowance, as for RESAMPLE1).
    call = make(R3, [12], [2], scales=[0.25], in_off=[-3.5], dt=DataType.UINT8)
    x = np.zeros(12, np.uint8)
    x[0] = 5
    exp = expect(R3, call, x)
    assert exp.values[0] == 0
    assert [bool(mismatches(np.uint8([v, 0]), exp)[0]) for v in (0, 1, 2)] == [False, False, True]
    x = np.zeros(12, np.uint8)
    x[3] = x[4] = 16
    exp = expect(R3, call, x)
    assert exp.values[0] == 7
    assert [bool(mismatches(np.uint8([v, 0]), exp)[0]) for v in (5, 6, 7, 8, 9)] == [
        True, False, False, False, True]


def test_nan_and_infinity():
    # A NaN with weight 1/32 (input 0 at o = 0) makes that output NaN; o = 1 does not read it.
    x = POWERS.copy()
    x[0] = np.nan
    exp = expect(R3, make(R3, [12], [2], scales=[0.25], in_off=[-3.5]), x)
    assert np.isnan(exp.values[0]) and exp.values[1] == 337.5
    # +inf and -inf both of positive weight: NaN.
    x = POWERS.copy()
    x[2], x[5] = np.inf, -np.inf
    assert np.isnan(expect(R3, make(R3, [12], [2], scales=[0.25], in_off=[-3.5]), x).values[0])
    # A whole c = 4 (InputPixelOffset -4): inputs 1..7 weigh 1/4 ... 1, input 0 weighs 0 but is
    # in the footprint an implementation may multiply in (|i - c| <= ceil(f)): an infinity there
    # may come back as NaN, nowhere else.
    x = POWERS.copy()
    x[0] = np.inf
    exp = expect(R3, make(R3, [12], [2], scales=[0.25], in_off=[-4.0]), x)
    assert np.isfinite(exp.values).all()
    np.testing.assert_array_equal(exp.nan_ok, [True, False])
    assert not mismatches(np.float32([np.nan, exp.values[1]]), exp)[0]


# -- against ONNX's reference Resize (antialias, exclude_outside 0): the reading's source ------

def onnx_resize(x: np.ndarray, scales: list[float], antialias: int = 1) -> np.ndarray:
    helper = pytest.importorskip("onnx.helper")
    from onnx import TensorProto
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("Resize", ["X", "", "S"], ["Y"], mode="linear", antialias=antialias,
                            coordinate_transformation_mode="half_pixel")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor("S", TensorProto.FLOAT, [len(scales)], scales)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return ReferenceEvaluator(model).run(None, {"X": x})[0]


@pytest.mark.parametrize("shape, scales", [((16,), [0.25]), ((3, 20), [1, 0.25]),
                                           ((2, 12, 9), [1, 0.3, 0.125]), ((5, 7), [0.4, 2.0]),
                                           ((1, 2, 13, 17), [1, 1, 0.3333333, 0.2])])
def test_agrees_with_onnx_reference_antialias(shape, scales):
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    want = onnx_resize(x, scales)
    call = make(R3, shape, want.shape, scales=scales, in_off=[0.5] * len(shape),
                out_off=[-0.5] * len(shape))
    exp = expect(R3, call, x)
    assert not mismatches(want, exp).any()  # within the strict bound of one float32 pipeline
    assert R3.silent_regions(call)  # half-pixel downsampling always reaches over an edge


def test_onnx_antialiases_where_the_page_does_not():
    # ONNX stretches by 1/scale for every scale < 1; the page only where 1/Scale > 2. At Scale
    # 0.75 RESAMPLE3 is linear: the DML EP's mapping of ONNX antialias differs from ONNX there.
    x = np.random.default_rng(2).standard_normal((12,)).astype(np.float32)
    want = onnx_resize(x, [0.75])
    call = make(R3, [12], want.shape, scales=[0.75], in_off=[0.5], out_off=[-0.5])
    exp = expect(R3, call, x)
    np.testing.assert_array_equal(exp.values, expect(R2, make(R2, [12], want.shape, scales=[0.75],
                                                              in_off=[0.5], out_off=[-0.5]),
                                                     x).values)
    assert mismatches(want, exp.envelope).any()


# -- silent regions ---------------------------------------------------------------------------

@pytest.mark.parametrize("scales, in_off, size, out, words", [
    ([0.4], [-2.0], 20, 4, "normalised"),        # f = 2.5: weights sum to 2.4..2.6, not 2.5
    ([0.5], [0.0], 12, 6, "within float32 rounding of 2"),
    ([0.4999999], [0.0], 12, 5, "within float32 rounding of 2"),
    ([0.75, 0.25], [0.0, -3.5], 12, None, "1 < 1/Scale <= 2"),
])
def test_silent_regions(scales, in_off, size, out, words):
    shape = [size] * len(scales)
    out_shape = [out] if out else [2, 2]
    call = make(R3, shape, out_shape, scales=scales, in_off=in_off)
    reasons = R3.silent_regions(call)
    assert any(words in r for r in reasons), reasons


def test_no_silence_where_the_page_decides():
    for scales, in_off in (([0.25], [-3.5]), ([0.125], [-7.5]), ([3.0], [0.5])):
        call = make(R3, [24], [2], scales=scales, in_off=in_off)
        assert R3.silent_regions(call) == [], scales
    # Scale float32(1/3): 1/Scale = 2.99999991, whose weights sum to it within 2^-20.
    call = make(R3, [30], [3], scales=[1 / 3], in_off=[-2.5])
    assert R3.silent_regions(call) == []


# -- the bounds (docs/tolerances.md, "Antialiased linear") ---------------------------------------

def test_bounds_of_the_symmetric_example_by_hand():
    # o = 0 of test_symmetric_filter_by_hand: D = 1, taps within f + reach of c = 3.5: 0..7,
    # N = T = 8, K = max(1 + 8 - 1, 8) = 8; weights 8 N / S + N + 1 = 16 + 8 + 1 = 25; M = 128,
    # R = 127. Coordinate allowances: strict 2^-20 * (0 / 0.25 + 3.5 + 1) = 36 * 2^-23, legal
    # 8 * 2^-23 * ((0 + 0) / 0.25 + 3.5 + 1) = 36 * 2^-23; sensitivity ceil(f) / (f * S) = 1/4.
    # spacing(21.09375) = 2^-19 = 16 * 2^-23.
    # legal  = (16 + (8 + 25) * 128 + 36 * 127 / 4) * 2^-23 + 2 * (8 + 5 * 8 + 1) * 128 * 2^-126
    # strict = 16 * 2^-23 + 33 * 2^-24 * 21.09375 + 36 * 127 / 4 * 2^-23
    exp = expect(R3, make(R3, [12], [2], scales=[0.25], in_off=[-3.5]), POWERS)
    u = 2.0**-23
    legal = (16 + 33 * 128 + 9 * 127) * u + 2 * 49 * 128 * 2.0**-126
    strict = 16 * u + 33 * 2.0**-24 * 21.09375 + 9 * 127 * u
    assert exp.envelope.bound[0] == pytest.approx(legal, rel=1e-12)
    assert exp.bound[0] == pytest.approx(strict, rel=1e-12)


def float32_antialias(x: np.ndarray, scale: float, in_off: float, out_off: float, n_out: int,
                      reverse: bool = False, by_stretch: bool = False) -> np.ndarray:
    """An independent 1-D float32 implementation: c in float32 as o * (1 / Scale) - (offsets),
    weights 1 - |i - c| * Scale in float32, summed in float32 (in reverse order if asked),
    divided by the weights' float32 sum (or by 1 / Scale: the other normalisation)."""
    f32 = np.float32
    s, recip = f32(scale), f32(1) / f32(scale)
    out = np.empty(n_out, f32)
    for o in range(n_out):
        c = f32(o) * recip - (f32(out_off) * recip + f32(in_off))
        lo, hi = int(np.floor(c - recip)), int(np.ceil(c + recip))
        taps = range(hi, lo - 1, -1) if reverse else range(lo, hi + 1)
        acc, total = f32(0), f32(0)
        for i in taps:
            w = f32(1) - abs(f32(i) - c) * s
            if w > 0:
                acc = f32(acc + w * x[min(max(i, 0), x.size - 1)])
                total = f32(total + w)
        out[o] = acc / (recip if by_stretch else total)
    return out


@pytest.mark.parametrize("scale, in_off, out_off, size", [
    (0.25, -3.5, 0.0, 40), (0.125, -7.3, 0.0, 80), (1 / 3, -2.5, 0.0, 30), (0.2, -7.0, 0.5, 50)])
def test_float32_implementations_stay_inside(scale, in_off, out_off, size):
    rng = np.random.default_rng(int(size))
    x = rng.uniform(-100, 100, size).astype(np.float32)
    n_out = 3
    call = make(R3, [size], [n_out], scales=[scale], in_off=[in_off], out_off=[out_off])
    assert R3.silent_regions(call) == []
    exp = expect(R3, call, x)
    for reverse in (False, True):
        got = float32_antialias(x, scale, in_off, out_off, n_out, reverse)
        assert not mismatches(got, exp).any()
        assert margin(got, exp) < 0.5
    # Dividing by the stretch instead of the weights' sum: the other normalisation, legal where
    # the two agree (a whole stretch or 2^-20 from one).
    got = float32_antialias(x, scale, in_off, out_off, n_out, by_stretch=True)
    assert not mismatches(got, exp.envelope).any()


def test_strict_is_inside_legal_and_half_precision_widens_only_the_legal():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 20, 30)).astype(np.float16)
    call = make(R3, x.shape, [3, 4, 3], scales=[1, 0.2, 0.1], in_off=[0, 0.5, 0.5],
                out_off=[0, -0.5, -0.5], dt=DataType.FLOAT16)
    exp = expect(R3, call, x)
    assert (exp.bound <= exp.envelope.bound).all()
    half = expect(R3, call, x, flags=ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION)
    np.testing.assert_array_equal(half.bound, exp.bound)
    assert (half.envelope.bound > exp.envelope.bound).all()
    assert "half precision" in half.envelope.rule


# -- the documented cases (cases/documented/resample3.yaml) -------------------------------------

def documented():
    from conformance import casefile

    cases = casefile.load_file(DOCUMENTED / "resample3.yaml")
    return {c.id.rsplit("/", 1)[1]: c for c in cases}


def test_documented_cases_hold_the_hand_values():
    cases = documented()
    values = {name: case.expected["call.OutputTensor"].data for name, case in cases.items()
              if len(case.calls) == 1 and case.expected["call.OutputTensor"].kind == "values"}
    # Worked in the tests above (symmetric, asymmetric, separable, UINT8, edges).
    assert values == {"antialias-symmetric": [21.09375, 337.5],
                      "antialias-asymmetric": [17.578125, 281.25],
                      "antialias-two-dimensions": [[21.09375, 337.5], [63.28125, 1012.5]],
                      "antialias-uint8": [9, 15],
                      "antialias-half-pixel-edges": [5.34375, 84.375, 966]}


def test_documented_cases_are_open_exactly_where_the_page_is_silent():
    for case in documented().values():
        reasons = [r for named in case.calls if named.call.operator == "RESAMPLE3"
                   for r in R3.silent_regions(named.call)]
        assert bool(case.open) == bool(reasons) and not case.ambiguous, case.id
        for reason in reasons:  # the case states the same reason, in the same words
            assert reason.split(":")[0] in " ".join(case.open.split()), case.id


def test_documented_cases_pass_on_the_reference():
    from backends.numpy_reference import NumpyReferenceBackend
    from conformance.session import case_run

    for case in documented().values():
        result = case_run.run_case(case, NumpyReferenceBackend(), memory_cap=2**30)
        assert result.status == "PASS", (case.id, result.message)


# -- the misreadings of Antialiased (conformance/ops/resample/misreadings_antialias.py) -----

def entries():
    from conformance.ops.resample.misreadings_antialias import ADMISSIBLE, MISREADINGS

    return {m.key: m for m in (*MISREADINGS, *ADMISSIBLE)}


SYMMETRIC = dict(x_shape=[12], out_shape=[2], scales=[0.25], in_off=[-3.5])


@pytest.mark.parametrize("key, want", [
    # LINEAR at c = 3.5 and 7.5: (8 + 16) / 2 = 12, (128 + 256) / 2 = 192.
    ("antialias-ignored", [12, 192]),
    # The weights (1 3 5 7 7 5 3 1) / 8 summed without dividing by their sum 4: 4 times
    # 21.09375 and 337.5.
    ("antialias-unnormalised", [84.375, 1350]),
])
def test_mandatory_misreadings_fail_the_symmetric_example(key, want):
    entry = entries()[key]
    call = make(R3, **SYMMETRIC)
    assert entry.covers(call)
    got = run_misreading(entry, call, POWERS)
    np.testing.assert_array_equal(got, np.float32(want))
    assert mismatches(got, expect(R3, call, POWERS).envelope).all()


def test_stretching_below_the_threshold_fails_where_the_page_says_linear():
    # Scale 0.75, Antialiased: the page's condition 1/Scales > 2 fails, so LINEAR; stretching by
    # 1/0.75 anyway is a different filter.
    entry = entries()["antialias-below-threshold"]
    x = np.random.default_rng(4).uniform(-1, 1, 12).astype(np.float32)
    call = make(R3, [12], [9], scales=[0.75], in_off=[0.5], out_off=[-0.5])
    assert R3.silent_regions(call) == [] and entry.covers(call)
    assert mismatches(run_misreading(entry, call, x), expect(R3, call, x).envelope).any()
    assert not entry.covers(make(R3, **SYMMETRIC))  # every 1/Scale above 2: nothing differs


def test_admissible_readings_differ_only_in_the_open_regions():
    from conformance.ops.resample.misreadings_antialias import ADMISSIBLE

    found = entries()
    interior = make(R3, **SYMMETRIC)
    for key in ("antialias-divided-by-stretch", "antialias-edges-excluded"):
        assert found[key] in ADMISSIBLE and not found[key].covers(interior)
    # Edges dropped on the half-pixel example: o = 0 keeps inputs 0..5 weighted 5 7 7 5 3 1
    # (sum 28): (5 + 14 + 28 + 40 + 48 + 32) / 28 = 167 / 28; o = 1 is inside (84.375); o = 2
    # keeps 6..11 weighted 1 3 5 7 7 5: (64 + 384 + 1280 + 3584 + 7168 + 10240) / 28 = 22720 / 28.
    edges = make(R3, [12], [3], scales=[0.25], in_off=[0.5], out_off=[-0.5])
    assert found["antialias-edges-excluded"].covers(edges)
    got = run_misreading(found["antialias-edges-excluded"], edges, POWERS)
    np.testing.assert_allclose(got, [167 / 28, 84.375, 22720 / 28], rtol=1e-7)
    # Divided by the stretch 2.5 where the weights sum to 2.4..2.6: up to 4% away.
    norm = make(R3, [20], [4], scales=[0.4], in_off=[-2.0])
    assert found["antialias-divided-by-stretch"].covers(norm)
    x = np.full(20, 1, np.float32)
    got = run_misreading(found["antialias-divided-by-stretch"], norm, x)
    assert np.abs(got - 1).max() > 0.03  # a constant input comes back scaled by sum / 2.5


def test_the_spec_enumerates_the_open_regions_readings_and_fails_zeros_beyond_the_edge():
    """An open case is judged against every admissible reading (notes §10): the spec's own
    expectation lets the independent implementations of the dropped taps and of the division by
    the stretch through, naming the reading, and still FAILs taps beyond the edge read as zero,
    which no reading allows. Strictly (an ambiguous case's judging) only the suite's reading is
    asked."""
    from conformance.judge.compare import judge

    found = entries()
    edges = make(R3, [12], [3], scales=[0.25], in_off=[0.5], out_off=[-0.5])
    norm = make(R3, [20], [4], scales=[0.4], in_off=[-2.0])
    for key, call, x in (("antialias-edges-excluded", edges, POWERS),
                         ("antialias-divided-by-stretch", norm,
                          np.random.default_rng(7).uniform(-1, 1, 20).astype(np.float32))):
        exp = expect(R3, call, x)
        assert exp.readings and not expect(R3, call, x, strict=True).readings
        got = run_misreading(found[key], call, x)
        judged = judge(got, exp)
        assert judged.status == "PASS" and judged.reading is not None, key
        assert judge(got, expect(R3, call, x, strict=True)).status == "FAIL", key
    zero = run_misreading(found["antialias-zero-edges"], edges, POWERS)
    assert judge(zero, expect(R3, edges, POWERS)).status == "FAIL"
    # Where the page decides every output there is no other reading.
    assert not expect(R3, make(R3, **SYMMETRIC), POWERS).readings


def test_a_wrong_linear_element_says_what_its_value_is_consistent_with():
    """Issue 25: a linear FAIL without a catalogued reading still points at the cause: the weight
    and coordinate that give the value, or, outside the range of its taps, that no weighting
    of them can (as INT8 bytes read as UINT8 give)."""
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 1, 2, 4) * 10  # 10 .. 80
    # RESAMPLE2 LINEAR, width 4 -> 8 at Scale 2, half-pixel: output 3 reads c = 1.25 (t 0.25)
    call = make(R2, [1, 1, 2, 4], [1, 1, 2, 8], scales=[1, 1, 1, 2], in_off=[0.5] * 4,
                out_off=[-0.5] * 4)
    said = R2.consistent_with(call, x, (0, 0, 0, 3), 27.5)  # 20 + 0.75 * 10: t 0.75
    assert "along dimension 3, the weight 0.75 on input index 2 (expected 0.25)" in said
    assert "the coordinate 1.75 instead of 1.25" in said
    outside = R2.consistent_with(call, x, (0, 0, 0, 3), -125.0)
    assert outside.startswith("-125 lies outside 20 .. 30, the range of the 2 inputs")
    # antialiased: the range of the filter's taps
    wide = make(R3, [12], [3], scales=[0.25], in_off=[-3.5])
    assert R3.consistent_with(wide, POWERS, (0,), 5000.0).startswith("5000 lies outside 1 ..")
    assert R2.consistent_with(make(R2, [4], [8], mode="NEAREST_NEIGHBOR", scales=[2]),
                              x.ravel()[:4], (3,), 1.0) is None


def test_the_diagnosis_of_an_uncatalogued_linear_fail_names_the_weight():
    from conformance.judge import diagnose

    x = np.arange(1, 9, dtype=np.float32).reshape(1, 1, 2, 4) * 10
    call = make(R2, [1, 1, 2, 4], [1, 1, 2, 8], scales=[1, 1, 1, 2], in_off=[0.5] * 4,
                out_off=[-0.5] * 4)
    exp = expect(R2, call, x)
    got = exp.values.copy()
    got[0, 0, 0, 3] = 27.5
    found = diagnose.explain(call, {"InputTensor": x.view(np.uint8).ravel()}, 0xCD,
                             {"OutputTensor": got}, {"OutputTensor": exp})
    assert found is not None and found["readings"] == []
    assert "Wrong elements: [0,0,0,3] holds 27.5: it is consistent with " in found["text"]
    assert "along dimension 3, the weight 0.75 on input index 2 (expected 0.25): the " \
           "coordinate 1.75 instead of 1.25" in found["text"], found["text"]
