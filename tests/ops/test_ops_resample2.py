"""RESAMPLE2 (conformance/ops/resample2): the page's tables, attributes and rules, and its
reference against hand-computed coordinates, RESAMPLE1, the page's and ONNX Runtime's stated
equivalences, and a peer (onnxruntime's CPU Resize).

Nothing here checks the reference against itself: expected numbers are worked by hand in the
comment next to them, and relations compare RESAMPLE2 with RESAMPLE1 (another operator's reading)
or with onnxruntime.
"""

from __future__ import annotations

import numpy as np
import pytest

from conformance import ops
from conformance.judge.compare import mismatches
from conformance.levels import FeatureLevel
from conformance.tensors import DataType, TensorDesc
from tests.support import DOCUMENTED, run_misreading

R2 = ops.get("RESAMPLE2")
R1 = ops.get("RESAMPLE1")
DTYPE_OF = {t.numpy_dtype: t for t in DataType}
L = FeatureLevel.parse


def make(spec, x_shape, out_shape, mode="NEAREST_NEIGHBOR", direction="DECREASING", scales=None,
         in_off=None, out_off=None, dt=DataType.FLOAT32, **extra):
    n = len(x_shape)
    attributes = {"InterpolationMode": mode, "Scales": scales or [1.0] * n,
                  "InputPixelOffsets": in_off if in_off is not None else [0.0] * n,
                  "OutputPixelOffsets": out_off if out_off is not None else [0.0] * n, **extra}
    if spec.name != "RESAMPLE1":
        attributes["RoundingDirection"] = direction
    return spec.make_call({"InputTensor": TensorDesc(dt, tuple(x_shape)),
                           "OutputTensor": TensorDesc(dt, tuple(out_shape))}, attributes)


def expect(spec, call, x, **kw):
    return spec.expected(call, {"InputTensor": x}, **kw)["OutputTensor"]


def rules(violations):
    return sorted(v.rule for v in violations)


# -- identity, tables, attributes -----------------------------------------------------------------

def test_identity_and_tables_from_the_page():
    assert R2.name == "RESAMPLE2"
    assert R2.type_value == 161  # DML_OPERATOR_RESAMPLE2 counted in DirectML.h's enum
    assert R2.page == "DML_RESAMPLE2_OPERATOR_DESC"
    assert R2.introduced is FeatureLevel.FL_5_1  # "introduced in DML_FEATURE_LEVEL_5_1"
    # "DML_FEATURE_LEVEL_5_1 and above": 1 to 4, FLOAT32, FLOAT16; "6_2 and above": + INT8, UINT8
    assert [(str(t.level), sorted(t.dimension_counts), sorted(d.name for d in t.data_types))
            for t in R2.support] == [
        ("5_1", [1, 2, 3, 4], ["FLOAT16", "FLOAT32"]),
        ("6_2", [1, 2, 3, 4], ["FLOAT16", "FLOAT32", "INT8", "UINT8"])]
    assert all(t.cite.page == R2.page for t in R2.support)
    # The desc's members in the page's order (DimensionCount derived from the arrays).
    assert [a.name for a in R2.attributes] == ["InterpolationMode", "RoundingDirection",
                                               "Scales", "InputPixelOffsets",
                                               "OutputPixelOffsets"]
    assert R2.derived_attributes == ("DimensionCount",)
    assert ops.get("DML_OPERATOR_RESAMPLE2") is R2


def test_rounding_direction_values_of_directml_h():
    # DirectML.h: DML_AXIS_DIRECTION_INCREASING = 0, DML_AXIS_DIRECTION_DECREASING = 1.
    attr = R2.attribute("RoundingDirection")
    assert attr.parse(0) == "INCREASING" and attr.parse(1) == "DECREASING"
    assert attr.parse("DML_AXIS_DIRECTION_DECREASING") == "DECREASING"
    assert attr.parse("increasing") == "INCREASING"
    assert attr.parse(2) == 2  # kept, so that the invalid desc can be written
    with pytest.raises(ValueError, match="not one of INCREASING, DECREASING"):
        attr.parse("UP")


@pytest.mark.parametrize("dt, dims, level, want", [
    (DataType.FLOAT32, 2, "5_0", ["operator.level"]),   # before its introduction
    (DataType.FLOAT32, 2, "5_1", []),
    (DataType.FLOAT16, 1, "5_1", []),
    (DataType.INT8, 4, "5_1", ["operator.data_type", "operator.data_type"]),
    (DataType.UINT8, 4, "6_2", []),
    (DataType.INT8, 3, "6_2", []),
    (DataType.INT32, 2, "6_4", ["operator.data_type", "operator.data_type"]),
])
def test_tables_decide_types_and_levels(dt, dims, level, want):
    call = make(R2, [2] * dims, [2] * dims, dt=dt)
    assert rules(R2.validate(call, L(level))) == want
    assert R2.required_level(call) == (None if dt == DataType.INT32 else
                                       L("6_2") if dt in (DataType.INT8, DataType.UINT8)
                                       else L("5_1"))


def test_five_dimensions_are_outside_the_table():
    call = make(R2, [1] * 5, [1] * 5)
    assert rules(R2.validate(call, L("6_4"))) == ["desc.dimension_count", "desc.dimension_count"]


def test_every_rule_of_resample1_holds():
    level = L("6_2")
    # DimensionCount "must match the dimension count of InputTensor and OutputTensor".
    call = R2.make_call({"InputTensor": TensorDesc(DataType.FLOAT32, (2, 2)),
                         "OutputTensor": TensorDesc(DataType.FLOAT32, (2, 2))},
                        {"InterpolationMode": "LINEAR", "RoundingDirection": "DECREASING",
                         "Scales": [1, 1, 1], "InputPixelOffsets": [0, 0, 0],
                         "OutputPixelOffsets": [0, 0, 0]})
    assert rules(R2.validate(call, level)) == ["resample.dimension_count"] * 2
    assert "DimensionCount 3" in R2.validate(call, level)[0].message
    assert rules(R2.validate(make(R2, [2], [2], mode=7), level)) == ["resample.mode"]
    for bad in (0.0, -1.0, "inf", "nan", 1e39):  # 1e39 is inf as float32
        assert rules(R2.validate(make(R2, [2], [2], scales=[bad]), level)) == ["resample.scales"]
    assert rules(R2.validate(make(R2, [2], [2], in_off=["nan"]), level)) == ["resample.offsets"]
    assert rules(R2.validate(make(R2, [2], [2], out_off=["-inf"]), level)) == ["resample.offsets"]
    # "InputTensor and OutputTensor must have the same DataType and DimensionCount."
    mixed = R2.make_call({"InputTensor": TensorDesc(DataType.FLOAT32, (2,)),
                          "OutputTensor": TensorDesc(DataType.FLOAT16, (2,))},
                         dict(make(R2, [2], [2]).attributes))
    assert rules(R2.validate(mixed, level)) == ["operator.same_data_type"]
    with pytest.raises(ValueError, match="DimensionCount 2 differs from the 1 Scales"):
        R2.make_call(dict(make(R2, [2], [2]).tensors),
                     {**make(R2, [2], [2]).attributes, "DimensionCount": 2})
    with pytest.raises(ValueError, match="needs attribute RoundingDirection"):
        R2.make_call(dict(make(R2, [2], [2]).tensors),
                     {k: v for k, v in make(R2, [2], [2]).attributes.items()
                      if k != "RoundingDirection"})


def test_rounding_direction_must_be_an_axis_direction():
    got = R2.validate(make(R2, [2], [2], direction=2), L("6_2"))
    assert rules(got) == ["resample2.rounding_direction"]
    assert got[0].cite.page == "DML_AXIS_DIRECTION"
    assert "RoundingDirection 2" in got[0].message


# -- nearest: RoundingDirection -------------------------------------------------------------------

X4 = np.array([10, 20, 30, 40], dtype=np.float32)


@pytest.mark.parametrize("direction, want", [
    # c = (o - 0) / 2 - 0.25 = o/2 - 0.25 for o = 0..7: -0.25, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75,
    # 3.25, clamped to [0, 3]: 0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.
    # DECREASING, floor: 0 0 0 1 1 2 2 3.  INCREASING, ceil: 0 1 1 2 2 3 3 3.
    ("DECREASING", [10, 10, 10, 20, 20, 30, 30, 40]),
    ("INCREASING", [10, 20, 20, 30, 30, 40, 40, 40]),
])
def test_nearest_rounds_the_way_the_direction_says(direction, want):
    call = make(R2, [4], [8], direction=direction, scales=[2], in_off=[0.25], out_off=[0])
    exp = expect(R2, call, X4)
    np.testing.assert_array_equal(exp.values, np.array(want, dtype=np.float32))
    assert exp.kind == "exact"  # no coordinate is near a whole number: nothing else is accepted
    assert "floor(c)" in exp.rule if direction == "DECREASING" else "ceil(c)" in exp.rule
    # RESAMPLE1 on the same call rounds to nearest: floor(c + 0.5) = 0 0 1 1 2 2 3 3, neither.
    r1 = expect(R1, make(R1, [4], [8], scales=[2], in_off=[0.25], out_off=[0]), X4)
    np.testing.assert_array_equal(r1.values, np.float32([10, 10, 20, 20, 30, 30, 40, 40]))


@pytest.mark.parametrize("direction, want, other", [
    # c = o/2 for o = 0..7: 0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5 -> clamped 3 at o = 7.
    # DECREASING floor: 0 0 1 1 2 2 3 3; a float32 c a hair below a whole k floors to k - 1.
    # INCREASING ceil: 0 1 1 2 2 3 3 3; a hair above a whole k ceils to k + 1.
    ("DECREASING", [10, 10, 20, 20, 30, 30, 40, 40], {2: 10, 4: 20, 6: 30}),
    ("INCREASING", [10, 20, 20, 30, 30, 40, 40, 40], {0: 20, 2: 30, 4: 40}),
])
def test_whole_coordinates_accept_either_neighbour_and_nothing_else(direction, want, other):
    call = make(R2, [4], [8], direction=direction, scales=[2])
    exp = expect(R2, call, X4)
    np.testing.assert_array_equal(exp.values, np.float32(want))
    assert exp.kind == "one_of"
    assert not mismatches(exp.values, exp).any()
    for o in range(8):
        for value in (10, 20, 30, 40):
            got = exp.values.copy()
            got[o] = value
            ok = value == want[o] or other.get(o) == value
            assert bool(mismatches(got, exp)[o]) is not ok, (o, value)
    # An ambiguous case judges by the page's words alone: floor / ceil of the exact coordinate.
    strict = expect(R2, call, X4, strict=True)
    assert strict.kind == "exact" and "even at ties" in strict.rule
    np.testing.assert_array_equal(strict.values, np.float32(want))


def test_a_clamped_coordinate_is_no_tie():
    # InputPixelOffsets 0.75, Scale 2: c = o/2 - 0.75 = -0.75 at o = 0, clamped to 0 (a whole
    # number): ceil gives 0 and no float32 error reaches index 1. At the far edge c = 3.25 for
    # o = 8, clamped to 3: floor keeps 3.
    for direction in ("INCREASING", "DECREASING"):
        call = make(R2, [4], [9], direction=direction, scales=[2], in_off=[0.75])
        exp = expect(R2, call, X4)
        for alt in exp.alternatives:
            assert alt[0] == 10 and alt[8] == 40


def test_near_whole_coordinates_within_float32_rounding_accept_both():
    # Scale 3: c = o / 3, whole at o = 3, 6. A float32 implementation computing o * (1 / 3) gets
    # 3 * 0.33333334f = 1.0000001 (floor 1), one with a reciprocal rounded down (0.3333333, legal:
    # "rcp ... 1 ULP") 0.99999994 (floor 0). Both must pass.
    x = np.arange(1, 4, dtype=np.float32) * 10  # 10 20 30
    call = make(R2, [3], [9], scales=[3])
    exp = expect(R2, call, x)
    for recip in (np.float32(1 / 3), np.nextafter(np.float32(1 / 3), np.float32(0))):
        c = np.clip(np.arange(9, dtype=np.float32) * recip, 0, 2)
        got = x[np.floor(c).astype(int)]
        assert not mismatches(got, exp).any()
        assert not mismatches(got, exp.envelope).any()


# -- linear: RESAMPLE1's --------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.uint8])
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_linear_is_resample1_linear(dt, direction):
    # Remarks: "equivalent to DML_RESAMPLE1_OPERATOR_DESC when InterpolationMode is set to
    # DML_INTERPOLATION_MODE_LINEAR".
    rng = np.random.default_rng(3)
    info = np.iinfo(dt) if np.issubdtype(dt, np.integer) else None
    x = (rng.integers(info.min, info.max, (2, 3, 4, 5)) if info else
         rng.standard_normal((2, 3, 4, 5))).astype(dt)
    kw = dict(mode="LINEAR", scales=[1.5, 0.7, 2.0, 1.3], in_off=[0.5, 0.25, 0.0, -0.3],
              out_off=[-0.5, 0.1, 0.0, 0.7], dt=DTYPE_OF[np.dtype(dt)])
    two = expect(R2, make(R2, [2, 3, 4, 5], [3, 2, 8, 6], direction=direction, **kw), x)
    one = expect(R1, make(R1, [2, 3, 4, 5], [3, 2, 8, 6], **kw), x)
    for a, b in ((two, one), (two.legal, one.legal)):
        assert a.kind == b.kind == "within"
        np.testing.assert_array_equal(a.values, b.values)
        np.testing.assert_array_equal(a.center, b.center)
        np.testing.assert_array_equal(a.bound, b.bound)


def test_dxdispatch_hardware_vector_through_resample2_linear():
    # NOTES §4: input [[1,2],[3,4]], 2x, half-pixel -> the DxDispatch UPSAMPLE_2D hardware vector.
    # By hand, c = (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 -> clamped 0, 0.25, 0.75, 1;
    # a row [1, 2] gives 1, 1.25, 1.75, 2.
    x = np.float32([[[[1, 2], [3, 4]]]])
    want = np.float32([[1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5], [2.5, 2.75, 3.25, 3.5],
                       [3, 3.25, 3.75, 4]]).reshape(1, 1, 4, 4)
    for direction in ("INCREASING", "DECREASING"):
        call = make(R2, [1, 1, 2, 2], [1, 1, 4, 4], mode="LINEAR", direction=direction,
                    scales=[1, 1, 2, 2], in_off=[0.5] * 4, out_off=[-0.5] * 4)
        exp = expect(R2, call, x)
        np.testing.assert_array_equal(exp.values, want)


# -- the stated equivalences ---------------------------------------------------------------------

def test_page_remark_holds_at_scale_1():
    # Remarks: RESAMPLE1 == RESAMPLE2 NEAREST, DECREASING, OutputPixelOffsets "adjusted an
    # additional -0.5". Scale 1, InputPixelOffset 0.3: RESAMPLE1 c = o - 0.3 = -0.3 (0), 0.7,
    # 1.7, 2.7 -> floor(c + 0.5) = 0 1 2 3. RESAMPLE2 with OutputPixelOffset -0.5: c = o + 0.5 -
    # 0.3 = 0.2, 1.2, 2.2, 3.2 (clamped 3) -> floor 0 1 2 3. Equal.
    r1 = expect(R1, make(R1, [4], [4], in_off=[0.3], out_off=[0.0]), X4)
    r2 = expect(R2, make(R2, [4], [4], in_off=[0.3], out_off=[-0.5]), X4)
    np.testing.assert_array_equal(r1.values, np.float32([10, 20, 30, 40]))
    np.testing.assert_array_equal(r2.values, r1.values)


def test_page_remark_departs_from_floor_c_plus_half_when_scale_is_not_1():
    # NOTES §4's ambiguity, by hand: Scale 4, offsets 0: RESAMPLE1 c = o / 4, o = 3: 0.75 ->
    # floor(1.25) = 1 (no tie). The remark's RESAMPLE2 (DECREASING, OutputPixelOffset -0.5):
    # c = 3.5 / 4 = 0.875 -> floor 0. The remark and floor(c + 0.5) disagree off any tie.
    x = np.float32([10, 20])
    r1 = expect(R1, make(R1, [2], [8], scales=[4]), x)
    r2 = expect(R2, make(R2, [2], [8], scales=[4], out_off=[-0.5]), x)
    assert r1.values[3] == 20 and r2.values[3] == 10
    assert mismatches(r2.values, r1)[3]


@pytest.mark.parametrize("scales, offsets", [([2.0], (0.5, -0.5)), ([3.0], (0.0, 0.0)),
                                             ([0.6], (0.5, -0.5)), ([1.75], (0.25, 0.1))])
def test_onnx_runtime_mapping_of_round_prefer_ceil_is_floor_c_plus_half(scales, offsets):
    # DmlOperatorResize.cpp: round_prefer_ceil -> DECREASING with InputPixelOffsets - 0.5, i.e.
    # floor(c + 0.5): RESAMPLE1's reading. Equal selections wherever neither has a near-tie.
    x = np.arange(10, dtype=np.float32)
    n_out = max(1, int(10 * scales[0]))
    p, q = offsets
    r1 = expect(R1, make(R1, [10], [n_out], scales=scales, in_off=[p], out_off=[q]), x)
    r2 = expect(R2, make(R2, [10], [n_out], scales=scales, in_off=[p - 0.5], out_off=[q]), x)
    np.testing.assert_array_equal(r2.values, r1.values)
    assert not mismatches(r1.values, r2).any()


# -- a peer: onnxruntime's CPU Resize under the DML EP's mapping (NOTES §5, §8) ----------------

#: ONNX nearest_mode -> (RoundingDirection, InputPixelOffset adjustment), DmlOperatorResize.cpp.
ORT_MAPPING = {"round_prefer_floor": ("INCREASING", 0.5), "round_prefer_ceil": ("DECREASING", -0.5),
               "floor": ("DECREASING", 0.0), "ceil": ("INCREASING", 0.0)}


@pytest.mark.parametrize("nearest_mode", sorted(ORT_MAPPING))
@pytest.mark.parametrize("scales", [[1, 1, 2.0, 3.0], [1, 1, 0.5, 0.75], [1, 2, 1.5, 2.5]])
def test_onnxruntime_cpu_resize_passes_under_the_dml_mapping(nearest_mode, scales):
    ort = pytest.importorskip("onnxruntime")
    helper = pytest.importorskip("onnx.helper")
    from onnx import TensorProto

    x = np.random.default_rng(7).standard_normal((1, 2, 6, 5)).astype(np.float32)
    node = helper.make_node("Resize", ["X", "", "S"], ["Y"], mode="nearest",
                            coordinate_transformation_mode="half_pixel",
                            nearest_mode=nearest_mode)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        initializer=[helper.make_tensor("S", TensorProto.FLOAT, [4], scales)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]
                               ).run(None, {"X": x})[0]
    direction, adjust = ORT_MAPPING[nearest_mode]
    call = make(R2, x.shape, got.shape, direction=direction, scales=scales,
                in_off=[0.5 + adjust] * 4, out_off=[-0.5] * 4)
    exp = expect(R2, call, x)
    assert not mismatches(got, exp).any()
    # Off the whole-number coordinates the selection is unique: the peer must equal it there.
    alone = np.ones(got.shape, dtype=bool)
    for alt in exp.alternatives:
        alone &= alt == exp.values
    np.testing.assert_array_equal(got[alone], exp.values[alone])


# -- the documented cases (cases/documented/resample2.yaml) -------------------------------------

def documented(name: str):
    from conformance import casefile

    cases = casefile.load_file(DOCUMENTED / f"{name}.yaml")
    return {c.id.rsplit("/", 1)[1]: c for c in cases}


def test_documented_cases_hold_the_hand_values():
    cases = documented("resample2")
    # The values worked by hand in test_nearest_rounds_the_way_the_direction_says.
    assert cases["rounding-decreasing"].expected["call.OutputTensor"].data == [
        10, 10, 10, 20, 20, 30, 30, 40]
    assert cases["rounding-increasing"].expected["call.OutputTensor"].data == [
        10, 20, 20, 30, 30, 40, 40, 40]
    assert cases["rounding-decreasing-int8"].expected["call.OutputTensor"].data == [
        10, 10, 10, 20, 20, 30, 30, 40]
    # RESAMPLE1 at Scale 4 (test_page_remark_departs_from_floor_c_plus_half...): the suite's
    # floor(c + 0.5), the remark's reading departing at o = 2, 3 is why the case is ambiguous.
    remark = cases["remark-nearest-resample1-scale-4"]
    assert remark.expected["call.OutputTensor"].data == [10, 10, 20, 20, 20, 20, 20, 20]
    assert remark.ambiguous and "Scale != 1" in remark.ambiguous
    assert [c.id for c in cases.values() if c.ambiguous] == [remark.id]
    assert all(R2.silent_regions(named.call) == [] for case in cases.values()
               for named in case.calls if named.call.operator == "RESAMPLE2")


def test_documented_cases_pass_on_the_reference():
    from backends.numpy_reference import NumpyReferenceBackend
    from conformance.session import case_run

    for case in documented("resample2").values():
        result = case_run.run_case(case, NumpyReferenceBackend(), memory_cap=2**30)
        assert result.status == "PASS", (case.id, result.message)


# -- the misreadings of RoundingDirection (conformance/ops/resample/misreadings_rounding.py) -

FLOOR_VALUES = [10, 10, 10, 20, 20, 30, 30, 40]  # worked above (Scale 2, InputPixelOffset 0.25)
CEIL_VALUES = [10, 20, 20, 30, 30, 40, 40, 40]
NEAREST_VALUES = [10, 10, 20, 20, 30, 30, 40, 40]


@pytest.mark.parametrize("key, direction, want", [
    ("rounding-direction-swapped", "DECREASING", CEIL_VALUES),
    ("rounding-direction-swapped", "INCREASING", FLOOR_VALUES),
    ("rounding-direction-ignored-floor", "INCREASING", FLOOR_VALUES),
    ("rounding-direction-ignored-ceil", "DECREASING", CEIL_VALUES),
    ("rounding-to-nearest", "DECREASING", NEAREST_VALUES),
    ("rounding-to-nearest", "INCREASING", NEAREST_VALUES),
])
def test_each_misreading_fails_the_hand_example(key, direction, want):
    from conformance.ops.resample2.misreadings import MISREADINGS

    entry = {m.key: m for m in MISREADINGS}[key]
    call = make(R2, [4], [8], direction=direction, scales=[2], in_off=[0.25], out_off=[0])
    assert entry.covers(call)
    got = run_misreading(entry, call, X4)
    np.testing.assert_array_equal(got, np.float32(want))
    assert mismatches(got, expect(R2, call, X4).envelope).any()


def test_misreadings_apply_only_where_they_differ():
    from conformance.ops.resample2.misreadings import MISREADINGS

    entries = {m.key: m for m in MISREADINGS}
    linear = make(R2, [4], [8], mode="LINEAR", scales=[2], in_off=[0.25])
    assert not any(m.covers(linear) for m in MISREADINGS)  # "affects only NEAREST_NEIGHBOR"
    down = make(R2, [4], [8], direction="DECREASING", scales=[2], in_off=[0.25])
    assert not entries["rounding-direction-ignored-floor"].covers(down)
    assert entries["rounding-direction-ignored-ceil"].covers(down)
    # Scale 1, offsets 0: every coordinate whole, floor = ceil = floor(c + 0.5).
    whole = make(R2, [4], [4], direction="INCREASING")
    assert not any(m.covers(whole) for m in MISREADINGS)
    assert not any(m.covers(make(R1, [4], [8], scales=[2])) for m in MISREADINGS)


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_float32_nearest_implementations_are_accepted(direction):
    # An independent float32 implementation, c = (o - q) * (1 / s) - p with a float32
    # reciprocal, clamped, then floor or ceil: on many scales and offsets (whole-number
    # coordinates included) its selections are the reference's or an accepted neighbour, and
    # equal the reference wherever no whole number is within rounding.
    rng = np.random.default_rng(5)
    rounder = np.ceil if direction == "INCREASING" else np.floor
    pairs = [(0, 0), (0.5, -0.5), (0.25, 0.1), (-0.3, 0.7), (1.0, 0), (0, -0.5),
             *(tuple(float(v) for v in np.float32(rng.uniform(-1, 1, 2))) for _ in range(3))]
    for scale in (1.0, 2.0, 3.0, 0.5, 1 / 3, 1.5, 0.3, 2.5, 7.0):
        for p, q in pairs:
            size = 7
            n_out = max(1, int(size * scale) + 2)
            x = np.arange(size, dtype=np.float32) * 10
            s = np.float32(scale)
            c = (np.arange(n_out, dtype=np.float32) - np.float32(q)) * (np.float32(1) / s) \
                - np.float32(p)
            got = x[rounder(np.clip(c, 0, size - 1)).astype(int)]
            exp = expect(R2, make(R2, [size], [n_out], direction=direction, scales=[scale],
                                  in_off=[p], out_off=[q]), x)
            assert not mismatches(got, exp).any(), (scale, p, q)
            alone = np.ones(n_out, bool)
            for alt in exp.alternatives:
                alone &= alt == exp.values
            np.testing.assert_array_equal(got[alone], exp.values[alone])
