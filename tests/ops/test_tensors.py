"""Buffer-tensor maths: DMLCalcBufferTensorSize, strides, overlap, strided reads and writes, data
types and feature levels.

Expected values are copied from the spec pages (docs/spec-notes.md = shared/spec/NOTES.md §1-2,
the dml-strides page, the DML_BUFFER_TENSOR_DESC page, the dml-helper-functions page) or worked
out by hand in the comments; none is computed with the code under test.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.levels import HIGHEST, FeatureLevel
from conformance.tensors import (
    MAX_ELEMENTS,
    DataType,
    TensorDesc,
    calc_buffer_tensor_size,
    find_shared_address,
    footprint_mask,
    packed_strides,
    read_tensor,
    strided_view,
    write_tensor,
)

F32, F16, U8 = DataType.FLOAT32, DataType.FLOAT16, DataType.UINT8

# NOTES §1 (DirectML.h): name, enum value, element size in bytes (helper-functions page switch),
# NumPy dtype string (little-endian; one-byte types have no byte order).
DATA_TYPES = [
    ("FLOAT32", 1, 4, "<f4"),
    ("FLOAT16", 2, 2, "<f2"),
    ("UINT32", 3, 4, "<u4"),
    ("UINT16", 4, 2, "<u2"),
    ("UINT8", 5, 1, "|u1"),
    ("INT32", 6, 4, "<i4"),
    ("INT16", 7, 2, "<i2"),
    ("INT8", 8, 1, "|i1"),
    ("FLOAT64", 9, 8, "<f8"),
    ("UINT64", 10, 8, "<u8"),
    ("INT64", 11, 8, "<i8"),
]


def offsets_of(sizes, strides):
    """Brute force: the element offset of every logical index."""
    return [sum(i * s for i, s in zip(index, strides, strict=True))
            for index in itertools.product(*(range(n) for n in sizes))]


def buffer_of(nbytes: int, fill: int = 0xAA) -> np.ndarray:
    return np.full(nbytes, fill, dtype=np.uint8)


# -- DMLCalcBufferTensorSize ----------------------------------------------------------------------

@pytest.mark.parametrize(("data_type", "sizes", "strides", "expected"), [
    # The five checks of NOTES §2.
    (F32, (1, 1, 2, 3), None, 24),
    (F16, (1, 1, 1, 3), None, 8),
    (U8, (1, 1, 1, 5), None, 8),
    (F32, (1, 3, 4, 4), (0, 1, 0, 0), 12),
    (F32, (1, 2, 3, 3), (18, 1, 6, 2), 72),
])
def test_calc_buffer_tensor_size_notes_checks(data_type, sizes, strides, expected):
    assert calc_buffer_tensor_size(data_type, sizes, strides) == expected


@pytest.mark.parametrize(("name", "value", "size", "dtype"), DATA_TYPES)
def test_calc_buffer_tensor_size_element_size_of_every_type(name, value, size, dtype):
    # One element: the element size rounded up to 4; seven elements: 7 * size rounded up to 4.
    dt = DataType[name]
    assert calc_buffer_tensor_size(dt, (1, 1, 1, 1)) == max(4, size)
    assert calc_buffer_tensor_size(dt, (7,)) == {1: 8, 2: 16, 4: 28, 8: 56}[size]
    # Stated packed strides give the same size as omitted ones.
    assert calc_buffer_tensor_size(dt, (1, 1, 1, 7), (7, 7, 7, 1)) == {1: 8, 2: 16, 4: 28,
                                                                       8: 56}[size]


@pytest.mark.parametrize(("data_type", "sizes", "strides", "expected"), [
    (U8, (1,), None, 4),  # 1 byte -> 4
    (U8, (4,), None, 4),  # exactly 4: no rounding
    (U8, (5,), None, 8),
    (DataType.INT8, (2, 3), None, 8),  # 6 -> 8
    (DataType.UINT16, (3,), None, 8),  # 6 -> 8
    (DataType.INT16, (2,), None, 4),
    (F16, (2, 3), (5, 1), 16),  # last index 1*5 + 2*1 = 7, 8 elements * 2 = 16
    (U8, (2, 3), (5, 1), 8),  # the dml-strides padding example: 8 bytes (not 10)
    (F32, (2, 3), (0, 1), 12),  # broadcast rows: 3 elements
    (F32, (1, 4), (1000, 1), 16),  # a size-1 dimension's stride never counts
    (DataType.FLOAT64, (3,), None, 24),  # 64-bit: 8 bytes per element, already a DWORD multiple
    (DataType.UINT64, (2, 2), (0, 1), 16),
    (DataType.INT64, (2, 2, 2), (1, 2, 4), 64),  # reversed order, packed
    (DataType.INT64, (2,), (3,), 32),  # last index 3 -> 4 elements * 8
    (F32, (3, 2), (2, 3), 32),  # interleaved: last index 2*2 + 1*3 = 7 -> 8 elements * 4
])
def test_calc_buffer_tensor_size_hand_computed(data_type, sizes, strides, expected):
    assert calc_buffer_tensor_size(data_type, sizes, strides) == expected


def test_calc_buffer_tensor_size_large_does_not_wrap():
    # 2^32 - 1 FLOAT64 elements: 8 * (2^32 - 1) bytes, far beyond 32 bits, exactly.
    assert calc_buffer_tensor_size(DataType.FLOAT64, (MAX_ELEMENTS,)) == 8 * MAX_ELEMENTS
    assert calc_buffer_tensor_size(F32, (65536, 65536)) == 4 * 2**32


def test_calc_buffer_tensor_size_strides_must_match_sizes():
    with pytest.raises(ValueError):
        calc_buffer_tensor_size(F32, (2, 3), (1,))


# -- strides ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("sizes", "expected"), [
    ((2, 2, 3), (6, 3, 1)),  # dml-strides: DHW, D-stride = H*W = 6, H-stride = W = 3
    ((1, 1, 3, 5), (15, 15, 5, 1)),  # dml-strides: packed NCHW (explicit strides)
    ((2, 3), (3, 1)),
    ((7,), (1,)),
    ((2, 3, 4, 5, 6), (360, 120, 30, 6, 1)),
])
def test_packed_strides(sizes, expected):
    assert packed_strides(sizes) == expected
    assert TensorDesc(F32, sizes).element_strides == expected


def test_offset_of_h_element():
    # dml-strides: the 'H' element (d=1, h=0, w=1) of a DHW {2,2,3} tensor is at offset 7.
    letters = "ABCDEFGHIJKL"
    desc = TensorDesc(U8, (2, 2, 3))
    assert desc.offset_of((1, 0, 1)) == 7
    assert letters[desc.offset_of((1, 0, 1))] == "H"
    assert TensorDesc(U8, (2, 2, 3), (6, 3, 1)).offset_of((1, 1, 2)) == 11
    # Column-major 2x3 ('WH'): D at offset 1, B at offset 2.
    col = TensorDesc(U8, (2, 3), (1, 2))
    assert col.offset_of((1, 0)) == 1
    assert col.offset_of((0, 1)) == 2


@pytest.mark.parametrize(("sizes", "strides"), [
    ((2, 3), None),  # row-major, implicit
    ((2, 3), (3, 1)),  # row-major, explicit
    ((2, 3), (1, 2)),  # column-major (dml-strides)
    ((1, 1, 3, 5), (15, 1, 5, 1)),  # packed NHWC (dml-strides)
    ((1, 2, 3, 5), (30, 1, 10, 2)),  # NHWC with two channels
    ((2, 2, 3), (1, 2, 4)),  # WHD
    ((1, 4), (99, 1)),  # a size-1 dimension may carry any stride
])
def test_is_packed(sizes, strides):
    assert TensorDesc(F32, sizes, strides).is_packed


@pytest.mark.parametrize(("sizes", "strides"), [
    ((2, 3), (0, 1)),  # broadcast rows (dml-strides)
    ((1, 3, 4, 4), (0, 1, 0, 0)),  # broadcast channel vector (NOTES §2)
    ((2, 3), (5, 1)),  # padded rows (dml-strides)
    ((3, 3), (4, 0)),  # 9 elements in 1 + 2*4 = 9 slots, but the columns overlap
    ((2, 3), (2, 1)),  # overlapping rows, fewer slots than elements
])
def test_is_not_packed(sizes, strides):
    assert not TensorDesc(F32, sizes, strides).is_packed


def test_is_strided():
    assert not TensorDesc(F32, (2, 3)).is_strided
    assert not TensorDesc(F32, (2, 3), (3, 1)).is_strided  # explicit packed strides
    assert not TensorDesc(F32, (1, 1, 3, 5), (15, 15, 5, 1)).is_strided
    assert TensorDesc(F32, (2, 3), (1, 2)).is_strided  # column-major
    assert TensorDesc(F32, (2, 3), (5, 1)).is_strided  # padded
    assert TensorDesc(F32, (2, 3), (0, 1)).is_strided  # broadcast
    assert TensorDesc(F32, (1, 1, 3, 5), (15, 1, 5, 1)).is_strided  # NHWC, packed yet strided


def test_total_size_defaults_to_minimum():
    assert TensorDesc(F16, (1, 1, 1, 3)).total_size == 8
    assert TensorDesc(F32, (1, 2, 3, 3), (18, 1, 6, 2)).total_size == 72
    assert TensorDesc(F32, (1, 1, 2, 3), total_tensor_size_in_bytes=64).total_size == 64
    assert TensorDesc(F32, (1, 1, 2, 3), total_tensor_size_in_bytes=64).minimum_size == 24
    assert TensorDesc(F32, (2, 3, 4)).element_count == 24
    assert TensorDesc(F32, (2, 3, 4)).dimension_count == 3


def test_desc_json_round_trip():
    desc = TensorDesc(F16, (1, 2, 3, 4), (24, 1, 8, 2), 64, 16)
    obj = desc.to_json()
    assert obj == {"DataType": "FLOAT16", "Sizes": [1, 2, 3, 4], "Strides": [24, 1, 8, 2],
                   "TotalTensorSizeInBytes": 64, "GuaranteedBaseOffsetAlignment": 16}
    assert TensorDesc.from_json(obj) == desc
    assert TensorDesc(F32, (2,)).to_json() == {"DataType": "FLOAT32", "Sizes": [2]}


# -- find_shared_address ---------------------------------------------------------------------------

@pytest.mark.parametrize(("sizes", "strides"), [
    ((2, 3), (0, 1)),
    ((1, 3, 4, 4), (0, 1, 0, 0)),
    ((3, 1), (0, 7)),
    ((2, 2), (0, 0)),
])
def test_shared_address_for_stride_zero(sizes, strides):
    clash = find_shared_address(sizes, strides)
    assert clash is not None
    a, b = clash
    assert a != b
    assert TensorDesc(F32, sizes, strides).offset_of(a) == TensorDesc(
        F32, sizes, strides).offset_of(b)


@pytest.mark.parametrize(("sizes", "strides"), [
    ((1, 3), (0, 1)),  # stride 0 on a size-1 dimension broadcasts nothing
    ((3, 2), (2, 3)),  # interleaved but unique: offsets 0,3,2,5,4,7 (fast path fails)
    ((2, 3), (3, 1)),
    ((2, 3), (1, 2)),
    ((2, 3), (5, 1)),
    ((2, 2, 2), (1, 4, 2)),
    ((2, 3, 2), (3, 2, 8)),  # {0,2,3,4,5,7} + 0/8: all 12 distinct, interleaved
])
def test_no_shared_address_for_unique_layouts(sizes, strides):
    assert len(set(offsets_of(sizes, strides))) == len(offsets_of(sizes, strides))
    assert find_shared_address(sizes, strides) is None


@pytest.mark.parametrize(("sizes", "strides"), [
    ((3, 3), (2, 1)),  # (0,2) and (1,0) both at 2
    ((2, 2, 2), (3, 2, 1)),  # (0,1,1) and (1,0,0) both at 3
    ((2, 5), (3, 1)),  # rows overlap by two elements
    ((4, 3), (2, 3)),  # interleaved, then a clash: (3,0)=6=(0,2)
])
def test_real_clash_returns_two_indices_with_equal_offsets(sizes, strides):
    clash = find_shared_address(sizes, strides)
    assert clash is not None
    a, b = clash
    assert a != b
    assert all(0 <= i < n for i, n in zip(a, sizes, strict=True))
    assert all(0 <= i < n for i, n in zip(b, sizes, strict=True))
    dot = lambda index: sum(i * s for i, s in zip(index, strides, strict=True))  # noqa: E731
    assert dot(a) == dot(b)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 12)), min_size=1, max_size=4))
def test_find_shared_address_is_exact(dims):
    sizes = tuple(n for n, _ in dims)
    strides = tuple(s for _, s in dims)
    offsets = offsets_of(sizes, strides)
    clash = find_shared_address(sizes, strides)
    if len(set(offsets)) == len(offsets):
        assert clash is None
    else:
        assert clash is not None
        a, b = clash
        assert a != b
        assert sum(i * s for i, s in zip(a, strides, strict=True)) == sum(
            i * s for i, s in zip(b, strides, strict=True))


# -- read_tensor / write_tensor --------------------------------------------------------------------

def test_read_padded_rows():
    # dml-strides: A B C x x D E F x x, height-stride 5.
    buf = np.frombuffer(b"ABCxxDEFxx\0\0", dtype=np.uint8).copy()
    desc = TensorDesc(U8, (2, 3), (5, 1), total_tensor_size_in_bytes=12)
    assert desc.minimum_size == 8
    got = read_tensor(desc, buf)
    assert got.tobytes() == b"ABCDEF"
    assert got.shape == (2, 3)


def test_read_broadcast_rows():
    # dml-strides: A B C stored once, height-stride 0 -> two identical rows.
    buf = np.frombuffer(b"ABC\0", dtype=np.uint8).copy()
    desc = TensorDesc(U8, (2, 3), (0, 1))
    assert desc.total_size == 4
    assert read_tensor(desc, buf).tobytes() == b"ABCABC"


def test_read_broadcast_channel_vector_float32():
    # NOTES §2: f32 {1,3,4,4} strides {0,1,0,0}: one value per channel, 12 bytes.
    desc = TensorDesc(F32, (1, 3, 4, 4), (0, 1, 0, 0))
    buf = np.array([1.5, -2.0, 3.25], dtype="<f4").view(np.uint8).copy()
    got = read_tensor(desc, buf)
    assert got.dtype == np.dtype("<f4")
    assert np.array_equal(got[0, 0], np.full((4, 4), 1.5, dtype=np.float32))
    assert np.array_equal(got[0, 1], np.full((4, 4), -2.0, dtype=np.float32))
    assert np.array_equal(got[0, 2], np.full((4, 4), 3.25, dtype=np.float32))


def test_read_column_major_and_reversed_order():
    # dml-strides column-major: A D B E C F, height-stride 1, width-stride 2.
    buf = np.frombuffer(b"ADBECF\0\0", dtype=np.uint8).copy()
    assert read_tensor(TensorDesc(U8, (2, 3), (1, 2)), buf).tobytes() == b"ABCDEF"
    # WHD for a {2,2,3} DHW-logical tensor: D-stride 1, H-stride 2, W-stride 4.
    logical = np.arange(12, dtype="<i2").reshape(2, 2, 3)
    stored = np.ascontiguousarray(logical.transpose(2, 1, 0)).view(np.uint8).ravel()
    desc = TensorDesc(DataType.INT16, (2, 2, 3), (1, 2, 4))
    assert np.array_equal(read_tensor(desc, stored.copy()), logical)


def test_read_and_write_nhwc():
    # NCHW-ordered Sizes {1,2,3,5}, NHWC memory: strides {30,1,10,2} (CalculateStrides, NHWC).
    nhwc = np.arange(30, dtype="<u4").reshape(1, 3, 5, 2)
    buf = nhwc.view(np.uint8).ravel().copy()
    desc = TensorDesc(DataType.UINT32, (1, 2, 3, 5), (30, 1, 10, 2))
    got = read_tensor(desc, buf)
    assert np.array_equal(got, nhwc.transpose(0, 3, 1, 2))
    assert got[0, 1, 2, 4] == nhwc[0, 2, 4, 1] == 29
    out = buffer_of(desc.total_size)
    write_tensor(desc, out, got)
    assert out.tobytes() == nhwc.tobytes()


def test_write_leaves_padding_untouched():
    desc = TensorDesc(U8, (2, 3), (5, 1), total_tensor_size_in_bytes=12)
    buf = buffer_of(12, 0x78)  # 'x'
    write_tensor(desc, buf, np.frombuffer(b"ABCDEF", dtype=np.uint8).reshape(2, 3))
    assert buf.tobytes() == b"ABCxxDEFxxxx"
    mask = footprint_mask(desc)
    assert mask.tolist() == [True] * 3 + [False] * 2 + [True] * 3 + [False] * 4


def test_write_padded_float32_touches_only_its_bytes():
    desc = TensorDesc(F32, (2, 2), (3, 1), total_tensor_size_in_bytes=32)
    buf = buffer_of(32)
    write_tensor(desc, buf, np.array([[1, 2], [3, 4]], dtype=np.float32))
    words = buf.view("<u4")
    assert words[[0, 1, 3, 4]].view("<f4").tolist() == [1.0, 2.0, 3.0, 4.0]
    assert words[[2, 5, 6, 7]].tolist() == [0xAAAAAAAA] * 4
    assert footprint_mask(desc).sum() == 16


def test_total_size_above_minimum():
    desc = TensorDesc(F32, (2, 3), total_tensor_size_in_bytes=64)
    assert desc.minimum_size == 24
    buf = buffer_of(desc.total_size)
    values = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    write_tensor(desc, buf, values)
    assert np.array_equal(read_tensor(desc, buf), values)
    assert buf[24:].tolist() == [0xAA] * 40  # bytes beyond the tensor untouched
    assert footprint_mask(desc).tolist() == [True] * 24 + [False] * 40


def test_read_is_a_copy_and_view_aliases():
    desc = TensorDesc(U8, (2, 2))
    buf = np.arange(4, dtype=np.uint8)
    copy = read_tensor(desc, buf)
    buf[0] = 99
    assert copy[0, 0] == 0
    strided_view(desc, buf)[1, 1] = 42
    assert buf[3] == 42


# Bit patterns that a value-converting path would change: NaN payloads, signalling NaNs, -0.0,
# subnormals, infinities, the extremes of every integer type.
SPECIAL_BITS = {
    "FLOAT32": [0x7FC00001, 0xFFBFFFFF, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0x80000000,
                0x00000001, 0x807FFFFF, 0x7F800000, 0xFF800000, 0x3F800000],
    "FLOAT16": [0x7C01, 0xFDFF, 0x7E01, 0xFFFF, 0x8000, 0x0001, 0x83FF, 0x7C00, 0xFC00, 0x3C00],
    "FLOAT64": [0x7FF0000000000001, 0xFFF7FFFFFFFFFFFF, 0x7FF8000000000001, 0x8000000000000000,
                0x0000000000000001, 0x800FFFFFFFFFFFFF, 0x7FF0000000000000],
    "UINT32": [0, 1, 0xFFFFFFFF, 0x80000000],
    "UINT16": [0, 1, 0xFFFF, 0x8000],
    "UINT8": [0, 1, 0xFF, 0x80],
    "INT32": [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF],
    "INT16": [0, 1, 0xFFFF, 0x8000, 0x7FFF],
    "INT8": [0, 1, 0xFF, 0x80, 0x7F],
    "UINT64": [0, 1, 0xFFFFFFFFFFFFFFFF, 0x8000000000000000],
    "INT64": [0, 1, 0xFFFFFFFFFFFFFFFF, 0x8000000000000000, 0x7FFFFFFFFFFFFFFF],
}


@pytest.mark.parametrize("name", [row[0] for row in DATA_TYPES])
def test_bits_preserved_through_strides(name):
    dt = DataType[name]
    bits = np.array(SPECIAL_BITS[name], dtype=dt.bits_dtype)
    values = bits.view(dt.numpy_dtype)
    n = len(values)
    # Reversed order with a gap after every element: offset of index i is 2 * (n - 1 - i).
    desc = TensorDesc(dt, (n,), (2,), total_tensor_size_in_bytes=calc_buffer_tensor_size(
        dt, (n,), (2,)) + 8)
    buf = buffer_of(desc.total_size)
    write_tensor(desc, buf, values)
    stored = buf[:2 * n * dt.size].view(dt.bits_dtype)[::2]
    assert stored.tolist() == bits.tolist()
    assert buf[-8:].tolist() == [0xAA] * 8
    got = read_tensor(desc, buf)
    assert got.dtype == dt.numpy_dtype
    assert got.view(dt.bits_dtype).tolist() == bits.tolist()
    # Through a broadcast read: every row the same bits.
    bdesc = TensorDesc(dt, (3, n), (0, 2))
    rows = read_tensor(bdesc, buf).view(dt.bits_dtype)
    assert rows.tolist() == [bits.tolist()] * 3


@st.composite
def strided_layouts(draw):
    """A data type, Sizes, Strides with unique offsets (any order, padding, interleaving), a
    TotalTensorSizeInBytes at or above the minimum, and random bits for every element."""
    dt = draw(st.sampled_from(list(DataType)))
    ndim = draw(st.integers(1, 4))
    sizes = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    strides = tuple(draw(st.lists(st.integers(0, 30), min_size=ndim, max_size=ndim)))
    offsets = offsets_of(sizes, strides)
    if len(set(offsets)) != len(offsets):
        # Make it unique: a packed layout in a random dimension order with random padding.
        order = draw(st.permutations(range(ndim)))
        strides_list = [0] * ndim
        reach = 0
        for d in reversed(order):
            strides_list[d] = reach + 1 + draw(st.integers(0, 3))
            reach += (sizes[d] - 1) * strides_list[d]
        strides = tuple(strides_list)
    minimum = calc_buffer_tensor_size(dt, sizes, strides)
    extra = 4 * draw(st.integers(0, 4))
    count = int(np.prod(sizes))
    raw = draw(st.binary(min_size=count * dt.size, max_size=count * dt.size))
    bits = np.frombuffer(raw, dtype=dt.bits_dtype).reshape(sizes)
    return TensorDesc(dt, sizes, strides, minimum + extra), bits


@settings(max_examples=200, deadline=None)
@given(strided_layouts(), st.integers(0, 255))
def test_write_then_read_round_trips_bits(layout, fill):
    desc, bits = layout
    offsets = offsets_of(desc.sizes, desc.strides)
    assert len(set(offsets)) == len(offsets)
    buf = buffer_of(desc.total_size, fill)
    write_tensor(desc, buf, bits.view(desc.data_type.numpy_dtype))
    got = read_tensor(desc, buf)
    assert got.shape == desc.sizes
    assert got.view(desc.data_type.bits_dtype).tobytes() == bits.tobytes()
    # Every byte outside the elements' own bytes keeps the fill.
    size = desc.data_type.size
    touched = np.zeros(desc.total_size, dtype=bool)
    for off in offsets:
        touched[off * size:(off + 1) * size] = True
    assert np.all(buf[~touched] == fill)
    assert np.array_equal(footprint_mask(desc), touched)


# -- DataType --------------------------------------------------------------------------------------

def test_data_type_names_and_values():
    assert [(t.name, t.value) for t in DataType] == [(n, v) for n, v, _, _ in DATA_TYPES]


@pytest.mark.parametrize(("name", "value", "size", "dtype"), DATA_TYPES)
def test_data_type_numpy_dtype_and_size(name, value, size, dtype):
    dt = DataType[name]
    assert dt.numpy_dtype.str == dtype
    assert dt.numpy_dtype.byteorder in ("<", "=", "|")
    assert dt.numpy_dtype == np.dtype(dtype).newbyteorder("<")
    assert dt.size == size
    assert dt.bits_dtype.str == ("|u1" if size == 1 else f"<u{size}")
    assert dt.is_float == name.startswith("FLOAT")
    kind = "f" if name.startswith("FLOAT") else "u" if name.startswith("UINT") else "i"
    assert dt.numpy_dtype.kind == kind
    # Every spelling parses to the same member.
    assert DataType.parse(name) is dt
    assert DataType.parse(name.lower()) is dt
    assert DataType.parse("DML_TENSOR_DATA_TYPE_" + name) is dt
    assert DataType.parse(value) is dt


@pytest.mark.parametrize("text", ["UNKNOWN", "DML_TENSOR_DATA_TYPE_UNKNOWN", "FLOAT128", "",
                                  "UINT4", "INT4", "float 32", True])
def test_data_type_parse_errors(text):
    with pytest.raises(ValueError, match="unknown DataType") as info:
        DataType.parse(text)
    assert "FLOAT32" in str(info.value)  # lists the known names


@pytest.mark.parametrize("value", [0, 12, 13, -1])
def test_data_type_parse_bad_values(value):
    # 0 is DML_TENSOR_DATA_TYPE_UNKNOWN; 12 and 13 (UINT4, INT4) are outside the suite.
    with pytest.raises(ValueError, match=str(value)):
        DataType.parse(value)


# -- FeatureLevel ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["2_1", "DML_FEATURE_LEVEL_2_1", "dml_feature_level_2_1",
                                  "0x2100", "0X2100", " 2_1 ", 0x2100])
def test_feature_level_parse_forms(text):
    assert FeatureLevel.parse(text) is FeatureLevel.FL_2_1


def test_feature_level_values_and_names():
    # NOTES §1.
    assert {str(level): level.value for level in FeatureLevel} == {
        "1_0": 0x1000, "2_0": 0x2000, "2_1": 0x2100, "3_0": 0x3000, "3_1": 0x3100,
        "4_0": 0x4000, "4_1": 0x4100, "5_0": 0x5000, "5_1": 0x5100, "5_2": 0x5200,
        "6_0": 0x6000, "6_1": 0x6100, "6_2": 0x6200, "6_3": 0x6300, "6_4": 0x6400,
    }
    assert HIGHEST is FeatureLevel.FL_6_4
    assert f"{FeatureLevel.FL_5_1}" == "5_1"
    assert FeatureLevel.parse("0x1000") is FeatureLevel.FL_1_0
    assert FeatureLevel.FL_2_0 < FeatureLevel.FL_2_1 < FeatureLevel.FL_5_0


@pytest.mark.parametrize("text", ["7_0", "2_2", "0x2101", "0xZZ", "", "2", "FL_2_1",
                                  "DML_FEATURE_LEVEL_", "2-1", "2.1", "5.1", "6.4"])
def test_feature_level_parse_errors(text):
    with pytest.raises(ValueError, match="unknown feature level") as info:
        FeatureLevel.parse(text)
    assert "give it as 5_1, 0x5100 or DML_FEATURE_LEVEL_5_1" in str(info.value)
    assert repr(text) in str(info.value)
    assert "2_1" in str(info.value)  # lists the known levels


@pytest.mark.parametrize("value", [2.1, None, b"2_1", 0x2101])
def test_feature_level_parse_non_text(value):
    with pytest.raises(ValueError):
        FeatureLevel.parse(value)
