"""The operators' reference implementations against the spec pages' examples, the index formulas
of NOTES §3, the coordinate formula of NOTES §4 worked by hand, and independent implementations.

Nothing here uses the reference to check itself: expected numbers are literals copied from the
pages or derived by hand (the derivation is in the comment next to them), and the relations are
checked against plain loops or a separate float32 implementation written below.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conformance import ops
from conformance.expected import Expected
from conformance.judge.compare import mismatches
from conformance.levels import HIGHEST, FeatureLevel
from conformance.tensors import DataType, TensorDesc

DCR, CRD = "DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH"
HALF = (0.5, -0.5)  # (InputPixelOffset, OutputPixelOffset) of RESAMPLE (RESAMPLE1 Remarks)
ZERO = (0.0, 0.0)
ALL_TYPES = list(DataType)
DTYPE_OF = {t.numpy_dtype: t for t in DataType}


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.dtype(f"<u{a.dtype.itemsize}"))


def assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_array_equal(bits(got), bits(want))


# -- calling the operators ----------------------------------------------------------------------

def call_op(name: str, x: np.ndarray, out_sizes, attributes, level=HIGHEST):
    """Build a valid call (checked by validate), return (reference output, Expected)."""
    spec = ops.get(name)
    dt = DTYPE_OF[x.dtype]
    call = spec.make_call({"InputTensor": TensorDesc(dt, tuple(x.shape)),
                           "OutputTensor": TensorDesc(dt, tuple(out_sizes))}, attributes)
    assert spec.validate(call, level) == []
    ref = spec.reference(call, {"InputTensor": x})["OutputTensor"]
    exp = spec.expected(call, {"InputTensor": x})["OutputTensor"]
    assert ref.dtype == x.dtype and ref.shape == tuple(out_sizes)
    return ref, exp


def depth_space(name: str, x: np.ndarray, block: int, order: str | None = None):
    n, c, h, w = x.shape
    if name.startswith("DEPTH_TO_SPACE"):
        out = (n, c // (block * block), h * block, w * block)
    else:
        out = (n, c * block * block, h // block, w // block)
    attributes = {"BlockSize": block}
    if order is not None:
        attributes["Order"] = order
    ref, exp = call_op(name, x, out, attributes)
    assert exp.kind == "exact"
    assert_same_bits(exp.values, ref)
    return ref


def resample(x: np.ndarray, out_sizes, mode: str, scales, offsets=HALF, op: str = "RESAMPLE1",
             level=HIGHEST):
    """offsets: one (in, out) pair for every dimension, or a list of pairs."""
    n = len(scales)
    pairs = [offsets] * n if isinstance(offsets[0], (int, float)) else list(offsets)
    attributes = {"InterpolationMode": mode, "Scales": list(scales)}
    if op == "RESAMPLE1":
        attributes["InputPixelOffsets"] = [p[0] for p in pairs]
        attributes["OutputPixelOffsets"] = [p[1] for p in pairs]
        attributes["DimensionCount"] = n
    else:
        attributes["ScaleCount"] = n
    return call_op(op, x, out_sizes, attributes, level)


def along(values, axis: int, ndim: int = 4) -> np.ndarray:
    """A 1-D list laid along one axis of an ndim array (size 1 elsewhere)."""
    shape = [1] * ndim
    shape[axis] = len(values)
    return np.asarray(values, dtype=np.float64).reshape(shape)


# == DEPTH_TO_SPACE / SPACE_TO_DEPTH: the documented examples ===================================

# DML_DEPTH_TO_SPACE1_OPERATOR_DESC, "Examples": InputTensor (Sizes:{1, 8, 2, 3}, UINT32)
DEPTH = [[[[0, 1, 2],
           [3, 4, 5]],
          [[9, 10, 11],
           [12, 13, 14]],
          [[18, 19, 20],
           [21, 22, 23]],
          [[27, 28, 29],
           [30, 31, 32]],
          [[36, 37, 38],
           [39, 40, 41]],
          [[45, 46, 47],
           [48, 49, 50]],
          [[54, 55, 56],
           [57, 58, 59]],
          [[63, 64, 65],
           [66, 67, 68]]]]

# Example 1. Depth-column-row order: OutputTensor (Sizes:{1, 2, 4, 6})
SPACE_DCR = [[[[0, 18, 1, 19, 2, 20],
               [36, 54, 37, 55, 38, 56],
               [3, 21, 4, 22, 5, 23],
               [39, 57, 40, 58, 41, 59]],
              [[9, 27, 10, 28, 11, 29],
               [45, 63, 46, 64, 47, 65],
               [12, 30, 13, 31, 14, 32],
               [48, 66, 49, 67, 50, 68]]]]

# Example 2. Column-row-depth order: OutputTensor (Sizes:{1, 2, 4, 6})
SPACE_CRD = [[[[0, 9, 1, 10, 2, 11],
               [18, 27, 19, 28, 20, 29],
               [3, 12, 4, 13, 5, 14],
               [21, 30, 22, 31, 23, 32]],
              [[36, 45, 37, 46, 38, 47],
               [54, 63, 55, 64, 56, 65],
               [39, 48, 40, 49, 41, 50],
               [57, 66, 58, 67, 59, 68]]]]


@pytest.mark.parametrize("dt", ALL_TYPES, ids=lambda t: t.name)
def test_depth_to_space1_documented_examples(dt):
    x = np.array(DEPTH, dtype=dt.numpy_dtype)
    assert x.shape == (1, 8, 2, 3)
    assert_same_bits(depth_space("DEPTH_TO_SPACE1", x, 2, DCR),
                     np.array(SPACE_DCR, dtype=dt.numpy_dtype))
    assert_same_bits(depth_space("DEPTH_TO_SPACE1", x, 2, CRD),
                     np.array(SPACE_CRD, dtype=dt.numpy_dtype))
    # the enum by DirectML.h value and by its full name mean the same
    assert_same_bits(depth_space("DEPTH_TO_SPACE1", x, 2, 1),
                     np.array(SPACE_CRD, dtype=dt.numpy_dtype))
    assert_same_bits(depth_space("DEPTH_TO_SPACE1", x, 2, "DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW"),
                     np.array(SPACE_DCR, dtype=dt.numpy_dtype))


@pytest.mark.parametrize("dt", ALL_TYPES, ids=lambda t: t.name)
def test_space_to_depth1_documented_examples(dt):
    want = np.array(DEPTH, dtype=dt.numpy_dtype)
    x1 = np.array(SPACE_DCR, dtype=dt.numpy_dtype)
    x2 = np.array(SPACE_CRD, dtype=dt.numpy_dtype)
    assert_same_bits(depth_space("SPACE_TO_DEPTH1", x1, 2, DCR), want)
    assert_same_bits(depth_space("SPACE_TO_DEPTH1", x2, 2, CRD), want)
    # the orders are not interchangeable on these inputs
    assert not np.array_equal(depth_space("SPACE_TO_DEPTH1", x1, 2, CRD), want)


@pytest.mark.parametrize("dt", ALL_TYPES, ids=lambda t: t.name)
def test_original_operators_documented_examples(dt):
    # DML_DEPTH_TO_SPACE_OPERATOR_DESC and DML_SPACE_TO_DEPTH_OPERATOR_DESC "Example" (the same
    # tensors as the *1 pages' depth-column-row example)
    depth = np.array(DEPTH, dtype=dt.numpy_dtype)
    space = np.array(SPACE_DCR, dtype=dt.numpy_dtype)
    assert_same_bits(depth_space("DEPTH_TO_SPACE", depth, 2), space)
    assert_same_bits(depth_space("SPACE_TO_DEPTH", space, 2), depth)


# == NOTES §3 index formulas, as plain loops ====================================================

def channel_of(order: str, c: int, by: int, bx: int, b: int, cc: int) -> int:
    """NOTES §3: the depth channel holding (c, by = y % b, bx = x % b); cc = C / b^2."""
    if order == DCR:
        return (by * b + bx) * cc + c
    return c * b * b + by * b + bx


def depth_to_space_loop(x: np.ndarray, b: int, order: str) -> np.ndarray:
    n_, c_, h_, w_ = x.shape
    cc = c_ // (b * b)
    out = np.zeros((n_, cc, h_ * b, w_ * b), dtype=x.dtype)
    for n in range(n_):
        for c in range(cc):
            for y in range(h_ * b):
                for xx in range(w_ * b):
                    ch = channel_of(order, c, y % b, xx % b, b, cc)
                    out[n, c, y, xx] = x[n, ch, y // b, xx // b]
    return out


def space_to_depth_loop(x: np.ndarray, b: int, order: str) -> np.ndarray:
    """Written as the scatter that undoes depth_to_space_loop (NOTES §3: exact inverse)."""
    n_, c_, h_, w_ = x.shape
    out = np.zeros((n_, c_ * b * b, h_ // b, w_ // b), dtype=x.dtype)
    for n in range(n_):
        for c in range(c_):
            for y in range(h_):
                for xx in range(w_):
                    ch = channel_of(order, c, y % b, xx % b, b, c_)
                    out[n, ch, y // b, xx // b] = x[n, c, y, xx]
    return out


def test_loops_reproduce_documented_examples():
    """The test's own loops are right: they give the pages' examples (NOTES §3's claim)."""
    depth = np.array(DEPTH, dtype=np.uint32)
    assert np.array_equal(depth_to_space_loop(depth, 2, DCR), np.array(SPACE_DCR))
    assert np.array_equal(depth_to_space_loop(depth, 2, CRD), np.array(SPACE_CRD))
    assert np.array_equal(space_to_depth_loop(np.array(SPACE_CRD, np.uint32), 2, CRD), depth)


@pytest.mark.parametrize("order", [DCR, CRD])
@pytest.mark.parametrize("b", [1, 2, 3, 4])
def test_depth_to_space1_matches_index_formula(b, order):
    # batch 2, C' = 3, odd H = 3 and W = 5; every element distinct
    x = np.arange(2 * 3 * b * b * 3 * 5, dtype=np.int32).reshape(2, 3 * b * b, 3, 5)
    got = depth_space("DEPTH_TO_SPACE1", x, b, order)
    assert got.shape == (2, 3, 3 * b, 5 * b)
    np.testing.assert_array_equal(got, depth_to_space_loop(x, b, order))


@pytest.mark.parametrize("order", [DCR, CRD])
@pytest.mark.parametrize("b", [1, 2, 3, 4])
def test_space_to_depth1_matches_index_formula_and_inverts(b, order):
    rng = np.random.default_rng(100 + b)
    space = rng.integers(-2**31, 2**31, size=(2, 3, 3 * b, 5 * b), dtype=np.int64).astype(np.int32)
    depth = depth_space("SPACE_TO_DEPTH1", space, b, order)
    assert depth.shape == (2, 3 * b * b, 3, 5)
    np.testing.assert_array_equal(depth, space_to_depth_loop(space, b, order))
    # round trips both ways
    np.testing.assert_array_equal(depth_space("DEPTH_TO_SPACE1", depth, b, order), space)
    d = rng.integers(0, 2**16, size=(3, 5 * b * b, 5, 3), dtype=np.int64).astype(np.uint16)
    np.testing.assert_array_equal(
        depth_space("SPACE_TO_DEPTH1", depth_space("DEPTH_TO_SPACE1", d, b, order), b, order), d)


@pytest.mark.parametrize("b", [1, 2, 3, 4])
def test_original_operators_equal_depth_column_row(b):
    rng = np.random.default_rng(b)
    x = rng.standard_normal((2, 2 * b * b, 3, 5)).astype(np.float32)
    assert_same_bits(depth_space("DEPTH_TO_SPACE", x, b), depth_space("DEPTH_TO_SPACE1", x, b, DCR))
    s = rng.standard_normal((3, 2, 3 * b, 5 * b)).astype(np.float16)
    assert_same_bits(depth_space("SPACE_TO_DEPTH", s, b), depth_space("SPACE_TO_DEPTH1", s, b, DCR))
    if b > 1:  # the two orders differ once there is more than one block element and channel
        assert not np.array_equal(depth_space("DEPTH_TO_SPACE", x, b),
                                  depth_space("DEPTH_TO_SPACE1", x, b, CRD))


@pytest.mark.parametrize("b", [1, 2, 3, 4])
def test_crd_is_dcr_after_channel_permutation(b):
    cc = 3
    x = np.arange(2 * cc * b * b * 3 * 5, dtype=np.uint32).reshape(2, cc * b * b, 3, 5)
    # DCR channel (by * b + bx) * cc + c holds what CRD keeps in channel c * b^2 + by * b + bx
    perm = np.zeros(cc * b * b, dtype=np.int64)
    for c, by, bx in itertools.product(range(cc), range(b), range(b)):
        perm[(by * b + bx) * cc + c] = c * b * b + by * b + bx
    assert sorted(perm) == list(range(cc * b * b))
    np.testing.assert_array_equal(depth_space("DEPTH_TO_SPACE1", x, b, CRD),
                                  depth_space("DEPTH_TO_SPACE1", x[:, perm], b, DCR))
    space = depth_space("DEPTH_TO_SPACE1", x, b, CRD)
    inverse = np.argsort(perm)
    np.testing.assert_array_equal(depth_space("SPACE_TO_DEPTH1", space, b, CRD),
                                  depth_space("SPACE_TO_DEPTH1", space, b, DCR)[:, inverse])


# == Bit exactness of the data movement =========================================================

SPECIAL_BITS = {
    # NaN payloads (quiet and signalling, both signs), -0.0, subnormals, infinities
    DataType.FLOAT32: [0x7FC00001, 0xFF800001, 0x7F800001, 0xFFC12345, 0x80000000, 0x00000001,
                       0x807FFFFF, 0x7F800000, 0xFF800000],
    DataType.FLOAT16: [0x7E01, 0x7C01, 0xFC01, 0xFE3F, 0x8000, 0x0001, 0x83FF, 0x7C00, 0xFC00],
    DataType.FLOAT64: [0x7FF8000000000001, 0x7FF0000000000001, 0xFFF0000000000001,
                       0x8000000000000000, 0x0000000000000001, 0x800FFFFFFFFFFFFF,
                       0x7FF0000000000000],
}


def special_input(dt: DataType, shape, seed: int) -> np.ndarray:
    """Random bit patterns of the type with its special values planted at the front."""
    size = math.prod(shape)
    u = dt.bits_dtype
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, np.iinfo(u).max, size=size, dtype=u, endpoint=True)
    if dt.is_float:
        planted = SPECIAL_BITS[dt]
    else:
        info = np.iinfo(dt.numpy_dtype)
        planted = [int(np.array(v, dtype=dt.numpy_dtype).view(u))
                   for v in (info.min, info.max, 0, -1 if info.min else 1, info.min + 1)]
    raw[: len(planted)] = np.array(planted, dtype=u)
    return raw.reshape(shape).view(dt.numpy_dtype)


@pytest.mark.parametrize("dt", ALL_TYPES, ids=lambda t: t.name)
def test_data_movement_is_bit_exact(dt):
    for b, order in [(2, DCR), (2, CRD), (3, CRD)]:
        x = special_input(dt, (2, 2 * b * b, 3, 5), seed=int(dt) * 10 + b)
        in_bits = bits(x).copy()
        y = depth_space("DEPTH_TO_SPACE1", x, b, order)
        assert_same_bits(y, depth_to_space_loop(bits(x), b, order).view(x.dtype))
        # every planted pattern arrives unchanged, and nothing else changed either
        assert np.array_equal(np.sort(bits(y).ravel()), np.sort(in_bits.ravel()))
        z = depth_space("SPACE_TO_DEPTH1", y, b, order)
        assert_same_bits(z, x)
        assert_same_bits(depth_space("SPACE_TO_DEPTH1", y, b, order),
                         space_to_depth_loop(bits(y), b, order).view(x.dtype))
        np.testing.assert_array_equal(bits(x), in_bits)  # the input was not touched
    assert_same_bits(depth_space("DEPTH_TO_SPACE", x, 3),
                     depth_to_space_loop(bits(x), 3, DCR).view(x.dtype))


@pytest.mark.parametrize("dt", [DataType.FLOAT32, DataType.FLOAT16, DataType.INT8, DataType.UINT8],
                         ids=lambda t: t.name)
def test_resample_nearest_is_bit_exact(dt):
    x = special_input(dt, (1, 1, 3, 3), seed=7)
    # half-pixel 2x: input index (o // 2) in both spatial dimensions, no ties
    ref, exp = resample(x, (1, 1, 6, 6), "NEAREST_NEIGHBOR", [1, 1, 2, 2])
    assert exp.kind == "exact"
    want = x[:, :, [0, 0, 1, 1, 2, 2]][:, :, :, [0, 0, 1, 1, 2, 2]]
    assert_same_bits(ref, want)
    assert not mismatches(want, exp).any()


# == RESAMPLE1: hand-computed values ============================================================
#
# NOTES §4: c = (o - OutputPixelOffset) / Scale - InputPixelOffset, clamped to [0, size - 1];
# nearest index floor(c + 0.5); linear i0 = floor(c), i1 = min(i0 + 1, size - 1), t = c - i0.
# The working for the 1-D input X = [1, 5, 2, 8] (size 4):
#
# scale 2, half-pixel (c = o/2 - 1/4), output 8:
#   c = 0(-.25), .25, .75, 1.25, 1.75, 2.25, 2.75, 3(3.25)
#   nearest 0,0,1,1,2,2,3,3 -> 1,1,5,5,2,2,8,8
#   linear  1, 1+.25*4=2, 1+.75*4=4, 5-.25*3=4.25, 5-.75*3=2.75, 2+.25*6=3.5, 2+.75*6=6.5, 8
# scale 2, offsets 0/0 (c = o/2), output 8:
#   c = 0, .5, 1, 1.5, 2, 2.5, 3, 3(3.5); nearest ties at .5, 1.5, 2.5 (halves round up)
#   nearest 0,1,1,2,2,3,3,3 -> 1,5,5,2,2,8,8,8 (alternatives at o=1,3,5: 1, 5, 2)
#   linear  1, 3, 5, 3.5, 2, 5, 8, 8
# scale 1.5, half-pixel (c = (4o - 1)/6), output 6:
#   c = 0(-1/6), 1/2, 7/6, 11/6, 5/2, 3(19/6)
#   nearest 0, tie 1|0, 1, 2, tie 3|2, 3 -> 1, 5|1, 5, 2, 8|2, 8
#   linear  1, 1+.5*4=3, 5-3/6=4.5, 5-15/6=2.5, 2+.5*6=5, 8
# scale 1.5, offsets 0/0 (c = 2o/3), output 6:
#   c = 0, 2/3, 4/3, 2, 8/3, 3(10/3)
#   nearest 0,1,1,2,3,3 -> 1,5,5,2,8,8
#   linear  1, 1+(2/3)*4=11/3, 5-(1/3)*3=4, 2, 2+(2/3)*6=6, 8
# scale 0.75, half-pixel (c = (8o + 1)/6), output 3:
#   c = 1/6, 3/2, 17/6
#   nearest 0, tie 2|1, 3 -> 1, 2|5, 8
#   linear  1+(1/6)*4=5/3, 5-.5*3=3.5, 2+(5/6)*6=7
# scale 0.75, offsets 0/0 (c = 4o/3), output 3:
#   c = 0, 4/3, 8/3 -> nearest 0,1,3 -> 1,5,8; linear 1, 5-(1/3)*3=4, 2+(2/3)*6=6

X = [1, 5, 2, 8]

# (scale, offsets, output size, nearest, nearest alternative (None: no tie), linear)
HAND = [
    (2.0, HALF, 8, [1, 1, 5, 5, 2, 2, 8, 8], None, [1, 2, 4, 4.25, 2.75, 3.5, 6.5, 8]),
    (2.0, ZERO, 8, [1, 5, 5, 2, 2, 8, 8, 8], [1, 1, 5, 5, 2, 2, 8, 8], [1, 3, 5, 3.5, 2, 5, 8, 8]),
    (1.5, HALF, 6, [1, 5, 5, 2, 8, 8], [1, 1, 5, 2, 2, 8], [1, 3, 4.5, 2.5, 5, 8]),
    (1.5, ZERO, 6, [1, 5, 5, 2, 8, 8], None, [1, 11 / 3, 4, 2, 6, 8]),
    (0.75, HALF, 3, [1, 2, 8], [1, 5, 8], [5 / 3, 3.5, 7]),
    (0.75, ZERO, 3, [1, 5, 8], None, [1, 4, 6]),
]
HAND_IDS = [f"scale{s}-{'half' if o == HALF else 'zero'}" for s, o, *_ in HAND]


def check_nearest(exp: Expected, ref: np.ndarray, nearest, alternative) -> None:
    """The reference and Expected hold the hand values; the alternative only where it ties."""
    want = np.asarray(nearest, dtype=np.float64).reshape(ref.shape).astype(ref.dtype)
    assert_same_bits(ref, want)
    assert_same_bits(exp.values, want)
    if alternative is None:
        assert exp.kind == "exact"
        return
    other = np.asarray(alternative, dtype=np.float64).reshape(ref.shape).astype(ref.dtype)
    assert exp.kind == "one_of"
    assert len(exp.alternatives) == 1
    assert_same_bits(exp.alternatives[0], other)


def check_linear(exp: Expected, ref: np.ndarray, linear) -> None:
    """Hand value (float64) rounded once to the output type is the reference value."""
    hand = np.asarray(linear, dtype=np.float64).reshape(ref.shape)
    assert exp.kind == "within"
    np.testing.assert_allclose(exp.center, hand, rtol=0, atol=1e-12)
    assert_same_bits(ref, hand.astype(ref.dtype))
    assert not mismatches(hand.astype(ref.dtype), exp).any()


@pytest.mark.parametrize(("scale", "offsets", "size", "nearest", "alternative", "linear"),
                         HAND, ids=HAND_IDS)
@pytest.mark.parametrize("axis", [0, 1, 2, 3], ids=["N", "C", "H", "W"])
def test_resample1_hand_values_on_each_dimension(axis, scale, offsets, size, nearest,
                                                 alternative, linear):
    """Scale only one dimension of a 4-D tensor; another dimension of size 2 with scale 1 must
    be carried through (scale 1 maps o to c = o under both offset pairs). Linear is affine, so
    adding 10 * j along that other dimension adds 10 * j to the hand values."""
    other = (axis + 1) % 4
    x = along(X, axis) + 10 * along([0, 1], other)
    scales = [1.0] * 4
    scales[axis] = scale
    out = list(x.shape)
    out[axis] = size
    shift = 10 * along([0, 1], other)
    for dtype in (np.float32, np.float16):
        xi = x.astype(dtype)
        ref, exp = resample(xi, out, "NEAREST_NEIGHBOR", scales, offsets)
        check_nearest(exp, ref, along(nearest, axis) + shift,
                      None if alternative is None else along(alternative, axis) + shift)
        ref, exp = resample(xi, out, "LINEAR", scales, offsets)
        check_linear(exp, ref, along(linear, axis) + shift)


@pytest.mark.parametrize(("scale", "offsets", "size", "nearest", "alternative", "linear"),
                         HAND, ids=HAND_IDS)
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_resample1_fewer_dimensions(ndim, scale, offsets, size, nearest, alternative, linear):
    """1 to 3 dimensions from feature level 5_1 (RESAMPLE1 newest page, NOTES §4), not before;
    same values as the 4-D form."""
    x = along(X, ndim - 1, ndim).astype(np.float32)
    scales = [1.0] * (ndim - 1) + [scale]
    out = [1] * (ndim - 1) + [size]
    ref, exp = resample(x, out, "NEAREST_NEIGHBOR", scales, offsets, level=FeatureLevel.FL_5_1)
    check_nearest(exp, ref, along(nearest, ndim - 1, ndim),
                  None if alternative is None else along(alternative, ndim - 1, ndim))
    ref, exp = resample(x, out, "LINEAR", scales, offsets, level=FeatureLevel.FL_5_1)
    check_linear(exp, ref, along(linear, ndim - 1, ndim))

    spec = ops.get("RESAMPLE1")
    desc = TensorDesc(DataType.FLOAT32, tuple(x.shape))
    call = spec.make_call({"InputTensor": desc,
                           "OutputTensor": TensorDesc(DataType.FLOAT32, tuple(out))},
                          {"InterpolationMode": "LINEAR", "Scales": scales,
                           "InputPixelOffsets": [offsets[0]] * ndim,
                           "OutputPixelOffsets": [offsets[1]] * ndim})
    rules = {v.rule for v in spec.validate(call, FeatureLevel.FL_5_0)}
    assert "desc.dimension_count" in rules


def test_dxdispatch_hardware_vector():
    """NOTES §4: DxDispatch UPSAMPLE_2D linear, [[1,2],[3,4]], 2x, half-pixel."""
    hw = [1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4]
    x = np.array([[[[1, 2], [3, 4]]]], dtype=np.float32)
    for op in ("RESAMPLE1", "RESAMPLE"):
        ref, exp = resample(x, (1, 1, 4, 4), "LINEAR", [1, 1, 2, 2], op=op)
        check_linear(exp, ref, np.reshape(hw, (1, 1, 4, 4)))
    # the same in 2-D and 3-D (feature level 5_1)
    ref, exp = resample(x[0, 0], (4, 4), "LINEAR", [2, 2], level=FeatureLevel.FL_5_1)
    check_linear(exp, ref, np.reshape(hw, (4, 4)))
    ref, exp = resample(x[0], (1, 4, 4), "LINEAR", [1, 2, 2], level=FeatureLevel.FL_5_1)
    check_linear(exp, ref, np.reshape(hw, (1, 4, 4)))
    # the 2-D interpolation taken across N and W instead of H and W
    ref, exp = resample(x.reshape(2, 1, 1, 2), (4, 1, 1, 4), "LINEAR", [2, 1, 1, 2])
    check_linear(exp, ref, np.reshape(hw, (4, 1, 1, 4)))


def test_scales_that_differ_from_output_over_input():
    """RESAMPLE1 Scales: 'if the input after scaling is smaller than the output bound, the
    output edges are clamped'; larger: cropped."""
    x = along(X, 3).astype(np.float32)
    # larger output than the scaled input (scale 2 -> 8, output 11): c = o/2 - 1/4 clamps at 3
    # for o >= 7; o = 8, 9, 10 repeat the last input element
    ref, exp = resample(x, (1, 1, 1, 11), "LINEAR", [1, 1, 1, 2])
    check_linear(exp, ref, along([1, 2, 4, 4.25, 2.75, 3.5, 6.5, 8, 8, 8, 8], 3))
    ref, exp = resample(x, (1, 1, 1, 11), "NEAREST_NEIGHBOR", [1, 1, 1, 2])
    check_nearest(exp, ref, along([1, 1, 5, 5, 2, 2, 8, 8, 8, 8, 8], 3), None)
    # smaller output (scale 2 -> 8, output 3): the first three of the scale-2 row
    ref, exp = resample(x, (1, 1, 1, 3), "LINEAR", [1, 1, 1, 2])
    check_linear(exp, ref, along([1, 2, 4], 3))
    ref, exp = resample(x, (1, 1, 1, 3), "NEAREST_NEIGHBOR", [1, 1, 1, 2])
    check_nearest(exp, ref, along([1, 1, 5], 3), None)
    # scale 0.5 with output 4 (scaled size 2): c = (o + .5)/.5 - .5 = 2o + .5
    #   = .5, 2.5, 3(4.5), 3(6.5); linear 1+.5*4=3, 2+.5*6=5, 8, 8
    #   nearest ties at .5 and 2.5 -> 5|1, 8|2, then 8, 8
    ref, exp = resample(x, (1, 1, 1, 4), "LINEAR", [1, 1, 1, 0.5])
    check_linear(exp, ref, along([3, 5, 8, 8], 3))
    ref, exp = resample(x, (1, 1, 1, 4), "NEAREST_NEIGHBOR", [1, 1, 1, 0.5])
    check_nearest(exp, ref, along([5, 8, 8, 8], 3), along([1, 2, 8, 8], 3))
    # asymmetric 0/0, scale 2 on a size-4 input with output 5 (crop) and 10 (clamp):
    #   c = o/2 = 0 .. 4.5 clamped at 3: linear 1,3,5,3.5,2,5,8,8,8,8
    ref, exp = resample(x, (1, 1, 1, 10), "LINEAR", [1, 1, 1, 2], ZERO)
    check_linear(exp, ref, along([1, 3, 5, 3.5, 2, 5, 8, 8, 8, 8], 3))


def test_mixed_offsets_per_dimension():
    """Each dimension uses its own offsets: half-pixel along H, 0/0 along W (scale 1.5 both).
    Along H: c = 0, .5, 7/6, ...; along W: c = 0, 2/3, ...  With x[h, w] = 10 h + X[w] linear is
    10 * (H coordinate) + (the 0/0 row of X)."""
    x = (10 * along([0, 1, 2, 3], 2) + along(X, 3)).astype(np.float64)
    ref, exp = resample(x.astype(np.float32), (1, 1, 6, 6), "LINEAR", [1, 1, 1.5, 1.5],
                        [HALF, HALF, HALF, ZERO])
    rows = np.array([0, 0.5, 7 / 6, 11 / 6, 2.5, 3]) * 10
    check_linear(exp, ref, rows.reshape(1, 1, 6, 1) + along([1, 11 / 3, 4, 2, 6, 8], 3))


# == The tie rule in expected() =================================================================

def test_tie_accepts_either_neighbour_and_nothing_else():
    x = np.array(X, dtype=np.float32).reshape(1, 1, 1, 4)
    ref, exp = resample(x, (1, 1, 1, 6), "NEAREST_NEIGHBOR", [1, 1, 1, 1.5])
    assert exp.kind == "one_of"
    primary = np.array([1, 5, 5, 2, 8, 8], dtype=np.float32).reshape(ref.shape)
    other = np.array([1, 1, 5, 2, 2, 8], dtype=np.float32).reshape(ref.shape)
    assert not mismatches(primary, exp).any()
    assert not mismatches(other, exp).any()
    mixed = primary.copy()
    mixed[..., 1] = 1  # lower neighbour at the tie o=1, upper one at the tie o=4
    assert not mismatches(mixed, exp).any()
    # the ties are o = 1 and o = 4 and only there
    differ = np.flatnonzero(bits(exp.alternatives[0]) != bits(exp.values))
    assert differ.tolist() == [1, 4]
    # off a tie the wrong neighbour is rejected: o=2 (c = 7/6 -> 1) given input[2];
    # o=3 (c = 11/6 -> 2) given input[1]
    wrong = primary.copy()
    wrong[..., 2] = 2
    wrong[..., 3] = 5
    assert np.flatnonzero(mismatches(wrong, exp)).tolist() == [2, 3]
    # at a tie a value that is neither neighbour is rejected
    far = primary.copy()
    far[..., 1] = 2
    far[..., 4] = 5
    assert np.flatnonzero(mismatches(far, exp)).tolist() == [1, 4]
    # a -0.0 for +0.0 is a different element (bit-exact)
    z = np.zeros((1, 1, 1, 4), dtype=np.float32)
    _, ez = resample(z, (1, 1, 1, 6), "NEAREST_NEIGHBOR", [1, 1, 1, 1.5])
    assert mismatches(np.full((1, 1, 1, 6), -0.0, np.float32), ez).all()


def test_tie_in_two_dimensions_allows_all_four_neighbours():
    # scale 1.5 half-pixel on H and W: o = 1 ties between rows 0|1 and columns 0|1
    x = np.array([[1, 2, 3, 4], [10, 20, 30, 40], [100, 200, 300, 400], [7, 8, 9, 6]],
                 dtype=np.float32).reshape(1, 1, 4, 4)
    _, exp = resample(x, (1, 1, 6, 6), "NEAREST_NEIGHBOR", [1, 1, 1.5, 1.5])
    assert exp.kind == "one_of"
    accepted = {float(exp.values[0, 0, 1, 1])} | {float(a[0, 0, 1, 1]) for a in exp.alternatives}
    assert accepted == {1, 2, 10, 20}
    # off-tie (o = 2 in both: c = 7/6 -> 1) one value only
    assert {float(a[0, 0, 2, 2]) for a in exp.alternatives} == {20}
    got = exp.values.copy()
    got[0, 0, 2, 2] = 30
    assert np.argwhere(mismatches(got, exp)).tolist() == [[0, 0, 2, 2]]


def test_near_tie_within_float32_rounding_accepts_both():
    """NOTES §4: a coordinate within float32 rounding of a half accepts either neighbour.
    Scale 0.32 is 0.3199999928474426 as float32; offsets 0/0: c = o / 0.3199999928...
    = 0, 3.1250000698, 6.2500001, 9.3750002, 12.5000002794: o = 4 is a float32 near-tie."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 1, 16) * 3
    _, exp = resample(x, (1, 1, 1, 5), "NEAREST_NEIGHBOR", [1, 1, 1, 0.32], ZERO)
    assert exp.kind == "one_of"
    np.testing.assert_array_equal(exp.values.ravel(), [0, 9, 18, 27, 39])  # 3 * (0,3,6,9,13)
    np.testing.assert_array_equal(exp.alternatives[0].ravel(), [0, 9, 18, 27, 36])


def test_resample_equals_resample1_with_half_pixel_offsets():
    rng = np.random.default_rng(5)
    for scales, out in [([1, 1, 2, 2], (2, 3, 6, 8)), ([1.5, 0.75, 1.3, 0.6], (3, 2, 4, 2)),
                        ([2, 1, 1.5, 3], (4, 3, 5, 12))]:
        x = rng.standard_normal((2, 3, 3, 4)).astype(np.float32)
        for mode in ("NEAREST_NEIGHBOR", "LINEAR"):
            r1, e1 = resample(x, out, mode, scales, HALF, op="RESAMPLE1")
            r0, e0 = resample(x, out, mode, scales, op="RESAMPLE")
            assert_same_bits(r0, r1)
            assert e0.kind == e1.kind
            if e1.kind == "within":
                np.testing.assert_array_equal(e0.center, e1.center)
                np.testing.assert_array_equal(e0.bound, e1.bound)
            assert len(e0.alternatives) == len(e1.alternatives)
            for a0, a1 in zip(e0.alternatives, e1.alternatives, strict=True):
                assert_same_bits(a0, a1)
            # and differs from RESAMPLE1 with offsets 0/0 (the offsets matter)
            rz, _ = resample(x, out, mode, scales, ZERO, op="RESAMPLE1")
            assert not np.array_equal(rz, r1)


# == Linear on integer and float16 outputs ======================================================

# X8 = [0, 255, 100, 7] (UINT8) and [-128, 127, -3, 50] (INT8), scale 1.5 half-pixel:
#   c = 0, 1/2, 7/6, 11/6, 5/2, 3
#   UINT8: 0, 127.5, 255 - 155/6 = 229.1667, 255 - 5*155/6 = 125.8333, 100 - 93/2 = 53.5, 7
#   INT8: -128, -0.5, 127 - 130/6 = 105.3333, 127 - 5*130/6 = 18.6667, -3 + 53/2 = 23.5, 50
INT_CASES = [
    (np.uint8, [0, 255, 100, 7], [[0], [127, 128], [229, 230], [125, 126], [53, 54], [7]]),
    (np.int8, [-128, 127, -3, 50], [[-128], [-1, 0], [105, 106], [18, 19], [23, 24], [50]]),
]


@pytest.mark.parametrize(("dtype", "values", "accepted"), INT_CASES, ids=["UINT8", "INT8"])
def test_linear_integer_accepts_floor_and_ceil(dtype, values, accepted):
    x = np.array(values, dtype=dtype).reshape(1, 1, 1, 4)
    ref, exp = resample(x, (1, 1, 1, 6), "LINEAR", [1, 1, 1, 1.5], level=FeatureLevel.FL_6_2)
    assert ref.dtype == dtype and exp.kind == "within"
    info = np.iinfo(dtype)
    for k, ok in enumerate(accepted):
        assert int(ref[0, 0, 0, k]) in ok
        for v in range(min(ok) - 2, max(ok) + 3):
            if not info.min <= v <= info.max:
                continue
            got = ref.copy()
            got[0, 0, 0, k] = v
            bad = bool(mismatches(got, exp)[0, 0, 0, k])
            if v in ok:
                assert not bad, (k, v)
            elif min(abs(v - a) for a in ok) > 1 or len(ok) == 2:
                # Beyond the neighbours of the exact value: rejected. (Next to an exact whole
                # number, the float32 error allowance also admits the adjacent integer: a
                # float32 2.9999998 for an exact 3 may truncate to 2; docs/tolerances.md.)
                assert bad, (k, v)
    # INT8 and UINT8 need feature level 6_2
    spec = ops.get("RESAMPLE1")
    dt = DTYPE_OF[np.dtype(dtype)]
    call = spec.make_call({"InputTensor": TensorDesc(dt, (1, 1, 1, 4)),
                           "OutputTensor": TensorDesc(dt, (1, 1, 1, 6))},
                          {"InterpolationMode": "LINEAR", "Scales": [1, 1, 1, 1.5],
                           "InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4})
    assert "operator.data_type" in {v.rule for v in spec.validate(call, FeatureLevel.FL_6_1)}


def test_linear_float16_rounds_once_from_float64():
    # [1, 5, 2, 8] at scale 0.75 half-pixel: 5/3, 3.5, 7 (see the table above)
    x = np.array(X, dtype=np.float16).reshape(1, 1, 1, 4)
    ref, exp = resample(x, (1, 1, 1, 3), "LINEAR", [1, 1, 1, 0.75])
    assert_same_bits(ref, np.array([5 / 3, 3.5, 7], dtype=np.float64).astype(np.float16)
                     .reshape(ref.shape))
    # A value where rounding through float32 first differs (double rounding): scale 0.32 is
    # float32 0.3199999928474426; offsets 0/0: o = 1 reads c = 1 / 0.3199999928474426
    # = 3.12500006985, between input[3] = 1 and input[4] = 1.00390625 (0x3c04):
    # 1 + 0.12500006985 * 2^-8 = 1.000488281523, just above the float16 midpoint 1 + 2^-11:
    # once rounded it is 1.0009765625 (0x3c01); through float32 it is the midpoint, then 1.0.
    c = 1 / 0.3199999928474426
    hand = 1.0 + (c - 3) * (1.00390625 - 1.0)
    assert bits(np.array([hand]).astype(np.float16))[0] == 0x3C01
    assert bits(np.array([hand]).astype(np.float32).astype(np.float16))[0] == 0x3C00
    x = np.array([0, 0, 0, 1.0, 1.00390625, 0], dtype=np.float16).reshape(1, 1, 1, 6)
    ref, exp = resample(x, (1, 1, 1, 2), "LINEAR", [1, 1, 1, 0.32], ZERO)
    assert bits(ref)[0, 0, 0, 1] == 0x3C01
    # a backend that computes in float32 and then narrows is still within the bound
    got = ref.copy()
    got[0, 0, 0, 1] = np.float16(1.0)
    assert not mismatches(got, exp).any()


# == The linear tolerance against an independent float32 implementation ========================

def linear_float32(x: np.ndarray, out_shape, scales, offsets, *, shift_axis: int | None = None
                   ) -> np.ndarray:
    """RESAMPLE1 LINEAR as a GPU might compute it: float32 throughout, the reciprocal of the
    scale multiplied in, one dimension at a time. shift_axis: move the coordinates along that
    dimension by one input pixel (a deliberately wrong implementation)."""
    f = np.float32
    y = x.astype(f)
    for d, (size_out, scale, (in_off, out_off)) in enumerate(
            zip(out_shape, scales, offsets, strict=True)):
        size = y.shape[d]
        inv = f(1) / f(scale)
        o = np.arange(size_out, dtype=f)
        c = (o - f(out_off)) * inv - f(in_off) + f(1 if d == shift_axis else 0)
        c = np.clip(c, f(0), f(size - 1))
        i0 = np.floor(c)
        t = (c - i0).reshape([-1 if k == d else 1 for k in range(y.ndim)])
        i0 = i0.astype(np.int64)
        i1 = np.minimum(i0 + 1, size - 1)
        y = np.take(y, i0, axis=d) * (f(1) - t) + np.take(y, i1, axis=d) * t
        assert y.dtype == f
    return y.astype(x.dtype)


TOLERANCE_CASES = [
    # (input shape, scales, per-dimension offsets, output shape)
    ((2, 3, 5, 4), [1.5, 0.7, 2.3, 1.3], [HALF] * 4, (3, 2, 11, 5)),
    ((3, 2, 4, 6), [1.7, 2.0, 0.6, 2.9], [ZERO] * 4, (5, 4, 2, 17)),
    ((2, 2, 6, 5), [1.0, 1.0, 3.1, 0.45],
     [HALF, HALF, (0.25, -0.3), (0.5, 0.2)], (2, 2, 18, 3)),
    ((1, 4, 7, 7), [1, 1.25, 1.5, 1.5], [ZERO, HALF, HALF, HALF], (1, 6, 12, 9)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("case", range(len(TOLERANCE_CASES)))
def test_linear_tolerance_accepts_float32_and_rejects_wrong(case, dtype):
    shape, scales, offsets, out = TOLERANCE_CASES[case]
    rng = np.random.default_rng(1000 + case)
    for _ in range(3):
        x = (rng.standard_normal(shape) * rng.choice([1.0, 100.0])).astype(dtype)
        _, exp = resample(x, out, "LINEAR", scales, offsets)
        assert exp.kind == "within"
        good = linear_float32(x, out, scales, offsets)
        bad = mismatches(good, exp)
        assert not bad.any(), np.argwhere(bad)[:5]
        # off by one input pixel along any one dimension (of more than one element)
        for axis in range(len(shape)):
            if shape[axis] > 1:
                wrong = linear_float32(x, out, scales, offsets, shift_axis=axis)
                assert mismatches(wrong, exp).any(), axis
        # the input offsets ignored (and only those)
        no_in = [(0.0, o) for _, o in offsets]
        if any(i != 0 for i, _ in offsets):
            assert mismatches(linear_float32(x, out, scales, no_in), exp).any()


def test_float32_implementation_agrees_with_hand_values():
    """The independent float32 implementation above is itself right (hardware vector)."""
    x = np.array([[[[1, 2], [3, 4]]]], dtype=np.float32)
    got = linear_float32(x, (1, 1, 4, 4), [1, 1, 2, 2], [HALF] * 4)
    hw = [1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4]
    np.testing.assert_array_equal(got.ravel(), hw)
