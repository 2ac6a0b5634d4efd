"""Validation rules: each desc or call below breaks exactly one rule and must get exactly that
rule's violation, with a message that names the offending value. Also the support tables of
every operator at every distinguished feature level, written out from the spec pages, and the
structural errors of make_call.
"""

from __future__ import annotations

import math
import warnings

import pytest

from conformance import ops
from conformance.levels import FeatureLevel
from conformance.tensors import MAX_ELEMENTS, DataType, TensorDesc, validate_desc

F32, F16 = DataType.FLOAT32, DataType.FLOAT16
L = FeatureLevel.parse

DEPTH_OPS = ["DEPTH_TO_SPACE", "DEPTH_TO_SPACE1", "SPACE_TO_DEPTH", "SPACE_TO_DEPTH1"]
RESAMPLE_OPS = ["RESAMPLE", "RESAMPLE1"]
ALL_OPS = DEPTH_OPS + RESAMPLE_OPS
#: RESAMPLE2 and RESAMPLE3 (their rules: tests/ops/test_ops_resample2.py, test_ops_resample3.py):
#: here their identity and support tables, as every operator's.
TABLED_OPS = [*ALL_OPS, "RESAMPLE2", "RESAMPLE3"]


def rules(violations) -> list[str]:
    return [v.rule for v in violations]


def desc(sizes, data_type=F32, strides=None, total=None, align=0) -> TensorDesc:
    return TensorDesc(data_type, tuple(sizes), None if strides is None else tuple(strides),
                      total, align)


def depth_call(name, block=2, order="DEPTH_COLUMN_ROW", data_type=F32, out_type=None,
               inp=None, out=None, out_strides=None, in_strides=None):
    """A valid call of a depth/space operator unless a keyword breaks it. Default shapes:
    depth-to-space {1,8,2,3} -> {1,2,4,6}; space-to-depth {1,2,4,6} -> {1,8,2,3}."""
    spec = ops.get(name)
    to_space = name.startswith("DEPTH_TO_SPACE")
    if inp is None:
        inp = (1, 8, 2, 3) if to_space else (1, 2, 4, 6)
    if out is None:
        out = (1, 2, 4, 6) if to_space else (1, 8, 2, 3)
    attrs = {"BlockSize": block}
    if name.endswith("1"):
        attrs["Order"] = order
    tensors = {"InputTensor": desc(inp, data_type, in_strides),
               "OutputTensor": desc(out, out_type or data_type, out_strides)}
    return spec, spec.make_call(tensors, attrs)


def resample_call(name, inp=(1, 1, 2, 2), out=None, scales=None, mode="LINEAR", in_off=None,
                  out_off=None, data_type=F32, out_type=None, out_strides=None):
    """A valid RESAMPLE(1, 2, 3) call unless a keyword breaks it: every dimension scaled by 2
    (RESAMPLE2/3: rounding DECREASING, not antialiased)."""
    spec = ops.get(name)
    stated = {a.name for a in spec.attributes}
    if scales is None:
        scales = [2.0] * len(inp)
    if out is None:
        out = tuple(2 * n for n in inp)
    attrs = {"InterpolationMode": mode, "Scales": scales}
    if "InputPixelOffsets" in stated:
        attrs["InputPixelOffsets"] = in_off if in_off is not None else [0.5] * len(scales)
        attrs["OutputPixelOffsets"] = out_off if out_off is not None else [-0.5] * len(scales)
    attrs |= {k: v for k, v in (("RoundingDirection", "DECREASING"), ("Antialiased", 0))
              if k in stated}
    tensors = {"InputTensor": desc(inp, data_type),
               "OutputTensor": desc(out, out_type or data_type, out_strides)}
    return spec, spec.make_call(tensors, attrs)


def any_call(name, **kw):
    return depth_call(name, **kw) if name in DEPTH_OPS else resample_call(name, **kw)


# -- desc rules (validate_desc) --------------------------------------------------------------------

VALID_DESCS = [
    desc((1, 1, 2, 3)),
    desc((1, 2, 3, 3), strides=(18, 1, 6, 2)),
    desc((1, 1, 2, 3), total=64, align=16),
    desc((1, 1, 3, 5), strides=(15, 1, 5, 1)),
    desc((3, 2, 1, 1), strides=(2, 3, 1, 1)),  # interleaved but every offset unique
    desc((1, 1, 1, 1), DataType.UINT8, align=1),
]


@pytest.mark.parametrize("d", VALID_DESCS)
@pytest.mark.parametrize("is_output", [False, True])
def test_valid_desc_has_no_violation(d, is_output):
    assert validate_desc(d, "OutputTensor", [4], is_output=is_output) == []


def test_desc_dimension_count():
    got = validate_desc(desc((1, 2, 3)), "InputTensor", [4], is_output=False)
    assert rules(got) == ["desc.dimension_count"]
    assert "InputTensor has 3 dimensions" in got[0].message
    assert "4" in got[0].message
    got = validate_desc(desc((1, 1, 1, 2, 3)), "OutputTensor", [1, 2, 3, 4], is_output=True)
    assert rules(got) == ["desc.dimension_count"]
    assert "5 dimensions" in got[0].message
    assert "1, 2, 3, 4" in got[0].message


@pytest.mark.parametrize(("sizes", "strides"), [
    ((1, 0, 2, 2), None),
    ((0, 1, 1, 1), None),
    ((1, 1, 2, 0), (4, 4, 2, 1)),
    ((1, 0, 1, 1), (1, 5, 1, 1)),  # 1 + sum((n - 1) * s) is negative here
])
def test_desc_zero_size(sizes, strides):
    got = validate_desc(desc(sizes, strides=strides), "InputTensor", [4], is_output=False)
    assert rules(got) == ["desc.zero_size"]
    assert str(list(sizes)) in got[0].message


@pytest.mark.parametrize("strides", [(4, 2, 1), (8, 8, 4, 2, 1), ()])
def test_desc_strides_count(strides):
    got = validate_desc(desc((1, 1, 2, 2), strides=strides), "OutputTensor", [4], is_output=True)
    assert rules(got) == ["desc.strides_count"]
    assert f"has {len(strides)} Strides for 4 Sizes" in got[0].message


@pytest.mark.parametrize("d", [
    desc((1, 1, 65536, 65536), strides=(0, 0, 0, 1)),  # broadcast: a 256 KiB buffer
    desc((1, 1, 65536, 65536)),  # 2^32 elements
    desc((1, 1, 2, 2**31), DataType.UINT8),  # 2^32 one-byte elements
    desc((3, 5, 17, 257, 65538), DataType.INT8),  # 3*5*17*257*65537 = 2^32 - 1, so one row more
])
def test_desc_too_many_elements(d):
    count = math.prod(d.sizes)
    assert count > 2**32 - 1
    got = validate_desc(d, "InputTensor", [4, 5], is_output=False)
    assert rules(got) == ["desc.too_many_elements"]
    assert str(count) in got[0].message


def test_desc_at_the_element_limit_is_valid():
    assert MAX_ELEMENTS == 2**32 - 1
    d = desc((1, 1, 3, 1431655765), DataType.UINT8)  # 3 * 1431655765 = 2^32 - 1
    assert math.prod(d.sizes) == MAX_ELEMENTS
    assert validate_desc(d, "InputTensor", [4], is_output=False) == []


@pytest.mark.parametrize(("d", "minimum"), [
    (desc((1, 1, 2, 3), total=20), 24),
    (desc((1, 1, 2, 3), total=0), 24),
    (desc((1, 2, 3, 3), strides=(18, 1, 6, 2), total=68), 72),
    (desc((1, 1, 1, 3), F16, total=4), 8),
])
def test_desc_total_size_below_minimum(d, minimum):
    got = validate_desc(d, "InputTensor", [4], is_output=False)
    assert rules(got) == ["desc.total_size_below_minimum"]
    assert f"TotalTensorSizeInBytes {d.total_tensor_size_in_bytes} " in got[0].message
    assert str(minimum) in got[0].message


@pytest.mark.parametrize(("d", "total"), [
    (desc((1, 1, 2, 3), total=26), 26),
    (desc((1, 1, 2, 3), total=25), 25),
    (desc((1, 2, 3, 3), strides=(18, 1, 6, 2), total=74), 74),
    (desc((1, 1, 1, 3), F16, total=9), 9),
])
def test_desc_total_size_not_dword_multiple(d, total):
    got = validate_desc(d, "OutputTensor", [4], is_output=True)
    assert rules(got) == ["desc.total_size_not_dword_multiple"]
    assert f"TotalTensorSizeInBytes {total} " in got[0].message


def test_desc_total_size_breaking_both_size_rules():
    got = validate_desc(desc((1, 1, 2, 3), total=22), "InputTensor", [4], is_output=False)
    assert sorted(rules(got)) == ["desc.total_size_below_minimum",
                                  "desc.total_size_not_dword_multiple"]


@pytest.mark.parametrize(("data_type", "align"), [
    (F32, 3), (F32, 2), (F32, 1), (F32, 12), (F32, 24),
    (DataType.FLOAT64, 4), (DataType.INT64, 2),
    (F16, 1), (DataType.UINT8, 3), (DataType.INT32, 2**31 + 1),
])
def test_desc_alignment_invalid(data_type, align):
    got = validate_desc(desc((1, 1, 2, 4), data_type, align=align), "InputTensor", [4],
                        is_output=False)
    assert rules(got) == ["desc.alignment"]
    assert f"GuaranteedBaseOffsetAlignment {align} " in got[0].message
    assert f"element size {data_type.size}" in got[0].message


@pytest.mark.parametrize(("data_type", "align"), [
    (F32, 0), (F32, 4), (F32, 16), (F32, 256), (F32, 2**31),
    (DataType.FLOAT64, 8), (DataType.UINT64, 16), (F16, 2), (DataType.UINT8, 1),
    (DataType.INT8, 2), (DataType.INT8, 0),
])
def test_desc_alignment_valid(data_type, align):
    assert validate_desc(desc((1, 1, 2, 4), data_type, align=align), "InputTensor", [4],
                         is_output=False) == []


@pytest.mark.parametrize(("sizes", "strides"), [
    ((1, 3, 4, 4), (0, 1, 0, 0)),  # broadcast channel vector (NOTES §2)
    ((1, 1, 2, 3), (6, 6, 0, 1)),  # broadcast rows
    ((1, 1, 3, 3), (9, 9, 2, 1)),  # rows overlap: (0,2) and (1,0)
    ((2, 1, 2, 2), (2, 4, 2, 1)),  # batches overlap rows
])
def test_desc_output_overlap(sizes, strides):
    d = desc(sizes, strides=strides)
    got = validate_desc(d, "OutputTensor", [4], is_output=True)
    assert rules(got) == ["desc.output_overlap"]
    assert f"Strides {list(strides)}" in got[0].message
    # The same layout is a legal input (broadcasting, overlapping reads).
    assert validate_desc(d, "InputTensor", [4], is_output=False) == []


# -- the support tables, copied from the pages -----------------------------------------------------

FLOAT = "FLOAT32, FLOAT16"
INTS = "FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, UINT16, UINT8"
ALL = "FLOAT64, FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8"
RESAMPLE_INT8 = "FLOAT32, FLOAT16, INT8, UINT8"

#: Per operator: DML_OPERATOR_TYPE value (NOTES §1), page, Availability (introduced), and each
#: "DML_FEATURE_LEVEL_x and above" table: (x, supported dimension counts, supported data types).
PAGES = {
    "DEPTH_TO_SPACE": (69, "DML_DEPTH_TO_SPACE_OPERATOR_DESC", "1_0",
                       [("1_0", [4], FLOAT), ("2_1", [4], INTS), ("5_0", [4], ALL)]),
    "DEPTH_TO_SPACE1": (113, "DML_DEPTH_TO_SPACE1_OPERATOR_DESC", "2_1",
                        [("2_1", [4], INTS), ("5_0", [4], ALL)]),
    "SPACE_TO_DEPTH": (68, "DML_SPACE_TO_DEPTH_OPERATOR_DESC", "1_0",
                       [("1_0", [4], FLOAT), ("2_1", [4], INTS), ("5_0", [4], ALL)]),
    "SPACE_TO_DEPTH1": (114, "DML_SPACE_TO_DEPTH1_OPERATOR_DESC", "2_1",
                        [("2_1", [4], INTS), ("5_0", [4], ALL)]),
    "RESAMPLE": (96, "DML_RESAMPLE_OPERATOR_DESC", "2_0",
                 [("2_0", [4], FLOAT), ("5_1", [1, 2, 3, 4], FLOAT),
                  ("6_2", [1, 2, 3, 4], RESAMPLE_INT8)]),
    "RESAMPLE1": (116, "DML_RESAMPLE1_OPERATOR_DESC", "2_1",
                  [("2_1", [4], FLOAT), ("5_1", [1, 2, 3, 4], FLOAT),
                   ("6_2", [1, 2, 3, 4], RESAMPLE_INT8)]),
    "RESAMPLE2": (161, "DML_RESAMPLE2_OPERATOR_DESC", "5_1",
                  [("5_1", [1, 2, 3, 4], FLOAT), ("6_2", [1, 2, 3, 4], RESAMPLE_INT8)]),
    "RESAMPLE3": (175, "DML_RESAMPLE3_OPERATOR_DESC", "6_4",
                  [("6_4", [1, 2, 3, 4], RESAMPLE_INT8)]),
}

LEVELS = ["1_0", "2_0", "2_1", "5_0", "5_1", "6_2", "6_4"]

#: The table in force at each distinguished level (None: the operator does not exist yet).
IN_FORCE = {
    "DEPTH_TO_SPACE": ["1_0", "1_0", "2_1", "5_0", "5_0", "5_0", "5_0"],
    "DEPTH_TO_SPACE1": [None, None, "2_1", "5_0", "5_0", "5_0", "5_0"],
    "SPACE_TO_DEPTH": ["1_0", "1_0", "2_1", "5_0", "5_0", "5_0", "5_0"],
    "SPACE_TO_DEPTH1": [None, None, "2_1", "5_0", "5_0", "5_0", "5_0"],
    "RESAMPLE": [None, "2_0", "2_0", "2_0", "5_1", "6_2", "6_2"],
    "RESAMPLE1": [None, None, "2_1", "2_1", "5_1", "6_2", "6_2"],
    "RESAMPLE2": [None, None, None, None, "5_1", "6_2", "6_2"],
    "RESAMPLE3": [None, None, None, None, None, None, "6_4"],
}


def expected_table(name, level):
    heading = IN_FORCE[name][LEVELS.index(level)]
    if heading is None:
        return None
    for lv, dims, types in PAGES[name][3]:
        if lv == heading:
            return lv, set(dims), {DataType[t.strip()] for t in types.split(",")}
    raise AssertionError(f"{name} has no table {heading}")


def test_operators_are_the_eight():
    assert sorted(ops.OPERATORS) == sorted(TABLED_OPS)


@pytest.mark.parametrize("name", TABLED_OPS)
def test_operator_identity(name):
    value, page, introduced, tables = PAGES[name]
    spec = ops.get(name)
    assert spec.name == name
    assert ops.get("DML_OPERATOR_" + name) is spec
    assert ops.get(name.lower()) is spec
    assert spec.type_value == value
    assert spec.page == page
    assert spec.introduced is L(introduced)
    assert [(str(t.level), sorted(t.dimension_counts), {d.name for d in t.data_types})
            for t in spec.support] == [
        (lv, dims, {s.strip() for s in types.split(",")}) for lv, dims, types in tables]
    assert all(t.cite.page == page and f"DML_FEATURE_LEVEL_{t.level}" in t.cite.section
               for t in spec.support)


def test_unknown_operator():
    with pytest.raises(KeyError, match="GATHER"):
        ops.get("GATHER")


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", TABLED_OPS)
def test_support_table_at_level(name, level):
    spec = ops.get(name)
    want = expected_table(name, level)
    t = spec.table_at(L(level))
    if want is None:
        assert L(level) < spec.introduced
        return
    heading, dims, types = want
    assert t is not None
    assert str(t.level) == heading
    assert set(t.dimension_counts) == dims
    assert set(t.data_types) == types


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("name", TABLED_OPS)
def test_validate_follows_support_table(name, level):
    """Every data type and dimension count 1-5 through validate: the table decides which of
    operator.level, operator.data_type and desc.dimension_count appear, and nothing else does."""
    spec = ops.get(name)
    want = expected_table(name, level)
    for data_type in DataType:
        for n in range(1, 6):
            if name in DEPTH_OPS and n == 4:
                _, call = depth_call(name, data_type=data_type)  # the valid default shapes
            elif name in DEPTH_OPS:
                _, call = depth_call(name, data_type=data_type, inp=(1,) * n, out=(1,) * n)
            else:
                _, call = resample_call(name, inp=(1,) * (n - 1) + (3,), data_type=data_type)
            got = set(rules(spec.validate(call, L(level))))
            if want is None:
                expected = {"operator.level"}
            else:
                _, dims, types = want
                expected = set()
                if data_type not in types:
                    expected.add("operator.data_type")
                if n not in dims:
                    expected.add("desc.dimension_count")
            assert got == expected, (name, level, data_type.name, n)


@pytest.mark.parametrize(("name", "types", "dims", "level"), [
    ("DEPTH_TO_SPACE", ["FLOAT16"], 4, "1_0"),
    ("DEPTH_TO_SPACE", ["UINT8"], 4, "2_1"),
    ("DEPTH_TO_SPACE1", ["FLOAT32"], 4, "2_1"),
    ("DEPTH_TO_SPACE1", ["UINT64"], 4, "5_0"),
    ("SPACE_TO_DEPTH", ["FLOAT64", "INT64"], 4, "5_0"),
    ("RESAMPLE", ["FLOAT32"], 4, "2_0"),
    ("RESAMPLE", ["FLOAT32"], 3, "5_1"),
    ("RESAMPLE1", ["FLOAT16"], 4, "2_1"),
    ("RESAMPLE1", ["FLOAT32"], 1, "5_1"),
    ("RESAMPLE1", ["INT8"], 3, "6_2"),
    ("RESAMPLE1", ["UINT8"], 4, "6_2"),
    ("RESAMPLE1", ["INT32"], 4, None),
    ("RESAMPLE1", ["FLOAT32"], 5, None),
    ("DEPTH_TO_SPACE", ["FLOAT32"], 3, None),
])
def test_required_level(name, types, dims, level):
    spec = ops.get(name)
    for t in types:
        assert spec.level_for(DataType[t], dims) == (None if level is None else L(level))
        if name in DEPTH_OPS:
            shapes = {} if dims == 4 else {"inp": (1,) * dims, "out": (1,) * dims}
            _, call = depth_call(name, data_type=DataType[t], **shapes)
        else:
            _, call = resample_call(name, inp=(1,) * dims, data_type=DataType[t])
        assert spec.required_level(call) == (None if level is None else L(level))


# -- operator rules --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL_OPS)
def test_baseline_calls_are_valid(name):
    spec, call = any_call(name)
    assert spec.validate(call, L("6_2")) == []
    assert spec.validate(call, spec.introduced) == []


@pytest.mark.parametrize(("name", "level"), [
    ("DEPTH_TO_SPACE1", "2_0"), ("DEPTH_TO_SPACE1", "1_0"), ("SPACE_TO_DEPTH1", "2_0"),
    ("RESAMPLE", "1_0"), ("RESAMPLE1", "2_0"),
])
def test_operator_level(name, level):
    spec, call = any_call(name)
    got = spec.validate(call, L(level))
    assert rules(got) == ["operator.level"]
    assert f"DML_FEATURE_LEVEL_{spec.introduced}" in got[0].message
    assert f"not available at {level}" in got[0].message


@pytest.mark.parametrize("level", [lv for lv in FeatureLevel if lv >= FeatureLevel.FL_2_1])
def test_int32_resample1_invalid_at_every_level(level):
    spec, call = resample_call("RESAMPLE1", data_type=DataType.INT32)
    got = spec.validate(call, level)
    assert rules(got) == ["operator.data_type", "operator.data_type"]
    assert all("DataType INT32" in v.message for v in got)
    assert {v.message.split()[0] for v in got} == {"InputTensor", "OutputTensor"}


def test_uint64_depth_to_space1_from_5_0():
    spec, call = depth_call("DEPTH_TO_SPACE1", data_type=DataType.UINT64)
    got = spec.validate(call, L("2_1"))
    assert rules(got) == ["operator.data_type", "operator.data_type"]
    assert all("DataType UINT64" in v.message and "2_1" in v.message for v in got)
    assert spec.validate(call, L("4_1")) != []
    assert spec.validate(call, L("5_0")) == []


def test_int8_resample1_from_6_2():
    spec, call = resample_call("RESAMPLE1", data_type=DataType.INT8)
    got = spec.validate(call, L("5_1"))
    assert rules(got) == ["operator.data_type", "operator.data_type"]
    assert all("DataType INT8" in v.message for v in got)
    assert spec.validate(call, L("6_1")) != []
    assert spec.validate(call, L("6_2")) == []


@pytest.mark.parametrize("name", RESAMPLE_OPS)
def test_3d_resample_from_5_1(name):
    spec, call = resample_call(name, inp=(1, 2, 2))
    got = spec.validate(call, L("2_1"))
    assert rules(got) == ["desc.dimension_count", "desc.dimension_count"]
    assert all("has 3 dimensions" in v.message for v in got)
    assert spec.validate(call, L("5_0")) != []
    assert spec.validate(call, L("5_1")) == []


@pytest.mark.parametrize("name", ALL_OPS)
def test_same_data_type(name):
    spec, call = any_call(name, data_type=F32, out_type=F16)
    got = spec.validate(call, L("6_2"))
    assert rules(got) == ["operator.same_data_type"]
    assert "InputTensor FLOAT32" in got[0].message
    assert "OutputTensor FLOAT16" in got[0].message


@pytest.mark.parametrize(("name", "out", "want"), [
    ("DEPTH_TO_SPACE", (1, 2, 4, 5), [1, 2, 4, 6]),
    ("DEPTH_TO_SPACE1", (1, 8, 2, 3), [1, 2, 4, 6]),
    ("SPACE_TO_DEPTH", (1, 2, 4, 6), [1, 8, 2, 3]),
    # The SPACE_TO_DEPTH(1) member text repeats the depth-to-space formula (NOTES §3 doc
    # error): {1, 2/4, 8, 12} is not an output; {N, C*B*B, H/B, W/B} is.
    ("SPACE_TO_DEPTH1", (1, 1, 8, 12), [1, 8, 2, 3]),
    ("SPACE_TO_DEPTH1", (2, 8, 2, 3), [1, 8, 2, 3]),
])
def test_output_sizes(name, out, want):
    spec, call = depth_call(name, out=out)
    got = spec.validate(call, L("5_0"))
    assert rules(got) == ["operator.output_sizes"]
    assert f"OutputTensor Sizes {list(out)}" in got[0].message
    assert str(want) in got[0].message


@pytest.mark.parametrize("name", DEPTH_OPS)
def test_block_size_zero(name):
    spec, call = depth_call(name, block=0)
    got = spec.validate(call, L("5_0"))
    assert rules(got) == ["depth_space.block_size"]
    assert "BlockSize 0" in got[0].message


@pytest.mark.parametrize("name", ["DEPTH_TO_SPACE", "DEPTH_TO_SPACE1"])
@pytest.mark.parametrize(("channels", "block"), [(6, 2), (8, 3), (3, 2)])
def test_channels_divisible(name, channels, block):
    spec, call = depth_call(name, block=block, inp=(1, channels, 2, 3), out=(1, 1, 4, 6))
    got = spec.validate(call, L("5_0"))
    assert rules(got) == ["depth_space.channels_divisible"]
    assert f"InputChannelCount {channels} " in got[0].message
    assert f"{block * block}" in got[0].message


@pytest.mark.parametrize("name", ["SPACE_TO_DEPTH", "SPACE_TO_DEPTH1"])
@pytest.mark.parametrize(("h", "w"), [(3, 4), (4, 5), (5, 7)])
def test_spatial_divisible(name, h, w):
    spec, call = depth_call(name, inp=(1, 2, h, w), out=(1, 8, 2, 2))
    got = spec.validate(call, L("5_0"))
    assert rules(got) == ["depth_space.spatial_divisible"]
    assert f"InputHeight {h} and InputWidth {w}" in got[0].message


def test_space_to_depth_channels_need_not_divide():
    # Only depth-to-space divides channels: a 3-channel space-to-depth input is fine.
    spec, call = depth_call("SPACE_TO_DEPTH1", inp=(1, 3, 4, 6), out=(1, 12, 2, 3))
    assert spec.validate(call, L("2_1")) == []


@pytest.mark.parametrize("name", ["DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"])
@pytest.mark.parametrize("order", [7, 2, 2**32 - 1])
def test_order(name, order):
    spec, call = depth_call(name, order=order)
    got = spec.validate(call, L("5_0"))
    assert rules(got) == ["depth_space.order"]
    assert f"Order {order} " in got[0].message


@pytest.mark.parametrize("name", ["DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"])
@pytest.mark.parametrize(("order", "canonical"), [
    (0, "DEPTH_COLUMN_ROW"), (1, "COLUMN_ROW_DEPTH"), ("column_row_depth", "COLUMN_ROW_DEPTH"),
    ("DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW", "DEPTH_COLUMN_ROW"),
])
def test_order_values(name, order, canonical):
    # DML_DEPTH_SPACE_ORDER: DEPTH_COLUMN_ROW 0, COLUMN_ROW_DEPTH 1 (NOTES §1).
    spec, call = depth_call(name, order=order)
    assert call.attributes["Order"] == canonical
    assert spec.validate(call, L("2_1")) == []


@pytest.mark.parametrize("name", RESAMPLE_OPS)
@pytest.mark.parametrize("level", ["2_1", "5_1"])
def test_resample_dimension_count(name, level):
    spec, call = resample_call(name, inp=(1, 1, 2, 2), out=(1, 1, 4, 4), scales=[1, 2, 2])
    got = spec.validate(call, L(level))
    assert rules(got) == ["resample.dimension_count", "resample.dimension_count"]
    count = "ScaleCount" if name == "RESAMPLE" else "DimensionCount"
    assert all(f"{count} 3 differs" in v.message and "dimension count 4" in v.message
               for v in got)


def test_resample_output_dimension_count_differs_from_input():
    # "InputTensor and OutputTensor must have the same DataType and DimensionCount".
    spec, call = resample_call("RESAMPLE1", inp=(1, 2, 2), out=(1, 1, 4, 4), scales=[1, 2, 2])
    got = spec.validate(call, L("5_1"))
    assert rules(got) == ["resample.dimension_count"]
    assert "OutputTensor's dimension count 4" in got[0].message


@pytest.mark.parametrize("name", RESAMPLE_OPS)
@pytest.mark.parametrize("bad", [0.0, -0.0, -2.0, math.nan, math.inf, -math.inf, 1e-46, 1e39,
                                 "nan", "-inf"])
def test_resample_scales(name, bad):
    spec, call = resample_call(name, scales=[1.0, 1.0, 2.0, bad])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # rounding to float32 is the rule, not a warning
        got = spec.validate(call, L("5_1"))
    assert rules(got) == ["resample.scales"]
    assert repr(float(bad)) in got[0].message


@pytest.mark.parametrize("name", RESAMPLE_OPS)
@pytest.mark.parametrize("fine", [1e-30, 0.5, 3.0, 1e30, 1.5e-45])
def test_resample_scales_valid(name, fine):
    # 1.5e-45 rounds to the smallest float32 subnormal: positive, so valid.
    spec, call = resample_call(name, scales=[1.0, 1.0, 2.0, fine])
    assert spec.validate(call, L("5_1")) == []


@pytest.mark.parametrize("which", ["InputPixelOffsets", "OutputPixelOffsets"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e39])
def test_resample_offsets(which, bad):
    offsets = [0.0, 0.0, 0.5, bad]
    kw = {"in_off": offsets} if which == "InputPixelOffsets" else {"out_off": offsets}
    spec, call = resample_call("RESAMPLE1", **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = spec.validate(call, L("5_1"))
    assert rules(got) == ["resample.offsets"]
    assert got[0].message.startswith(which)
    assert repr(float(bad)) in got[0].message


def test_resample_offsets_any_finite_value_is_valid():
    spec, call = resample_call("RESAMPLE1", in_off=[0, -3.5, 100, 0.25],
                               out_off=[-1e30, 0, 0.5, -0.5])
    assert spec.validate(call, L("2_1")) == []


@pytest.mark.parametrize("name", RESAMPLE_OPS)
@pytest.mark.parametrize("mode", [5, 2, 2**32 - 1])
def test_resample_mode(name, mode):
    spec, call = resample_call(name, mode=mode)
    got = spec.validate(call, L("5_1"))
    assert rules(got) == ["resample.mode"]
    assert f"InterpolationMode {mode} " in got[0].message


@pytest.mark.parametrize("name", RESAMPLE_OPS)
@pytest.mark.parametrize(("mode", "canonical"), [
    (0, "NEAREST_NEIGHBOR"), (1, "LINEAR"), ("linear", "LINEAR"),
    ("DML_INTERPOLATION_MODE_NEAREST_NEIGHBOR", "NEAREST_NEIGHBOR"),
])
def test_resample_mode_values(name, mode, canonical):
    # DML_INTERPOLATION_MODE: NEAREST_NEIGHBOR 0, LINEAR 1 (NOTES §1).
    spec, call = resample_call(name, mode=mode)
    assert call.attributes["InterpolationMode"] == canonical
    assert spec.validate(call, L("5_1")) == []


def test_resample_output_sizes_are_not_checked():
    # "the scales don't need to be exactly OutputSize / InputSize": crop and clamp are legal.
    spec, call = resample_call("RESAMPLE1", inp=(1, 1, 2, 2), out=(1, 1, 7, 3),
                               scales=[1, 1, 2, 2])
    assert spec.validate(call, L("2_1")) == []


@pytest.mark.parametrize("name", ALL_OPS)
def test_output_overlap_through_operator(name):
    to_space = name.startswith("DEPTH_TO_SPACE")
    if name in DEPTH_OPS:
        out = (1, 2, 4, 6) if to_space else (1, 8, 2, 3)
        strides = (0, 0, 0, 1)
        spec, call = depth_call(name, out_strides=strides)
    else:
        out = (2, 2, 4, 4)
        strides = (32, 16, 0, 1)
        spec, call = resample_call(name, out_strides=strides)
    assert call.tensors["OutputTensor"].sizes == out
    got = spec.validate(call, L("6_2"))
    assert rules(got) == ["desc.output_overlap"]
    assert got[0].message.startswith("OutputTensor Strides")


def test_broadcast_input_is_valid():
    spec, call = depth_call("DEPTH_TO_SPACE1", in_strides=(0, 1, 0, 0))
    assert spec.validate(call, L("2_1")) == []


# -- make_call structure ---------------------------------------------------------------------------

def _tensors(*names):
    return {n: desc((1, 1, 2, 2)) for n in names}


def test_make_call_unknown_tensor():
    spec = ops.get("DEPTH_TO_SPACE")
    with pytest.raises(ValueError, match="unknown: ScaleTensor") as info:
        spec.make_call(_tensors("InputTensor", "OutputTensor", "ScaleTensor"), {"BlockSize": 2})
    assert "takes tensors InputTensor, OutputTensor" in str(info.value)


def test_make_call_missing_tensor():
    spec = ops.get("RESAMPLE")
    with pytest.raises(ValueError, match="missing: OutputTensor"):
        spec.make_call(_tensors("InputTensor"), {"InterpolationMode": 0, "Scales": [1] * 4})


@pytest.mark.parametrize(("name", "attrs", "message"), [
    ("DEPTH_TO_SPACE", {"BlockSize": 2, "Order": 0}, "DEPTH_TO_SPACE has no attribute Order"),
    ("RESAMPLE", {"InterpolationMode": 0, "Scales": [1] * 4, "DimensionCount": 4},
     "RESAMPLE has no attribute DimensionCount"),
    ("RESAMPLE", {"InterpolationMode": 0, "Scales": [1] * 4, "InputPixelOffsets": [0] * 4},
     "RESAMPLE has no attribute InputPixelOffsets"),
    ("DEPTH_TO_SPACE1", {"BlockSize": 2}, "DEPTH_TO_SPACE1 needs attribute Order"),
    ("SPACE_TO_DEPTH", {}, "needs attribute BlockSize"),
    ("RESAMPLE1", {"InterpolationMode": 0, "Scales": [1] * 4, "InputPixelOffsets": [0] * 4},
     "RESAMPLE1 needs attribute OutputPixelOffsets"),
    ("RESAMPLE", {"Scales": [1] * 4}, "needs attribute InterpolationMode"),
])
def test_make_call_attribute_names(name, attrs, message):
    with pytest.raises(ValueError, match=message):
        ops.get(name).make_call(_tensors("InputTensor", "OutputTensor"), attrs)


@pytest.mark.parametrize(("scales", "in_off", "out_off", "listed"), [
    ([1] * 4, [0] * 3, [0] * 4, "InputPixelOffsets has 3"),
    ([1] * 4, [0] * 4, [0] * 5, "OutputPixelOffsets has 5"),
    ([1] * 3, [0] * 4, [0] * 4, "Scales has 3"),
])
def test_make_call_array_lengths(scales, in_off, out_off, listed):
    with pytest.raises(ValueError, match="the arrays are all DimensionCount long") as info:
        ops.get("RESAMPLE1").make_call(
            _tensors("InputTensor", "OutputTensor"),
            {"InterpolationMode": 1, "Scales": scales, "InputPixelOffsets": in_off,
             "OutputPixelOffsets": out_off})
    assert listed in str(info.value)


@pytest.mark.parametrize(("name", "count"), [("RESAMPLE1", "DimensionCount"),
                                             ("RESAMPLE", "ScaleCount")])
def test_make_call_count_disagrees(name, count):
    spec = ops.get(name)
    attrs = {"InterpolationMode": 1, "Scales": [1] * 4}
    if name == "RESAMPLE1":
        attrs |= {"InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4}
    with pytest.raises(ValueError, match=f"{count} 3 differs from the 4 Scales given"):
        spec.make_call(_tensors("InputTensor", "OutputTensor"), attrs | {count: 3})
    # Agreeing: accepted, and not stored (it follows from the arrays).
    call = spec.make_call(_tensors("InputTensor", "OutputTensor"), attrs | {count: 4})
    assert count not in call.attributes
    assert call.attributes["Scales"] == (1.0, 1.0, 1.0, 1.0)


@pytest.mark.parametrize("block", [-1, 2**32, 2.0, "2", True, None])
def test_make_call_block_size_type(block):
    with pytest.raises(ValueError, match="BlockSize is a UINT"):
        ops.get("DEPTH_TO_SPACE").make_call(_tensors("InputTensor", "OutputTensor"),
                                            {"BlockSize": block})


@pytest.mark.parametrize(("attr", "value", "message"), [
    ("Order", "DIAGONAL", "Order 'DIAGONAL' is not one of DEPTH_COLUMN_ROW, COLUMN_ROW_DEPTH"),
    ("Order", 1.0, "Order is an enum name or value"),
    ("Order", True, "Order is an enum name or value"),
])
def test_make_call_enum_type(attr, value, message):
    with pytest.raises(ValueError, match=message):
        ops.get("SPACE_TO_DEPTH1").make_call(_tensors("InputTensor", "OutputTensor"),
                                             {"BlockSize": 2, attr: value})


@pytest.mark.parametrize(("scales", "message"), [
    (2.0, "Scales is a list of FLOAT"),
    ("2,2,2,2", "Scales is a list of FLOAT"),
    ([1, 1, 2, "two"], "Scales holds FLOAT values"),
    ([1, 1, 2, True], "Scales holds FLOAT values"),
    ([1, 1, 2, None], "Scales holds FLOAT values"),
])
def test_make_call_scales_type(scales, message):
    with pytest.raises(ValueError, match=message):
        ops.get("RESAMPLE").make_call(_tensors("InputTensor", "OutputTensor"),
                                      {"InterpolationMode": 0, "Scales": scales})
