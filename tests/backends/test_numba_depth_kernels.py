"""The Numba depth/space kernels' fast paths forced on small tensors: space-to-depth's 64-byte
splits at every offset within a line, and the NHWC transposing depth-to-space kernel (8x8
register tiles, scalar ragged edges, tiles narrower than the row, non-temporal stores) at
awkward sizes, every element size, both orders, blocks 1-4, every element offset: bit for bit
the NumPy reference, and no byte outside the output's logical elements written."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from conformance import ops
from conformance.backend import load_backend
from conformance.tensors import DataType, TensorDesc, read_tensor
from tests.support import execute_at

SIZES = {1: DataType.UINT8, 2: DataType.FLOAT16, 4: DataType.FLOAT32, 8: DataType.UINT64}
#: Each element size is a JIT compile of every kernel a test takes (several seconds each with an
#: empty Numba cache, as in CI): the default run checks 4 bytes (the benchmark's float32), the
#: certification step (`pytest -m certification`) every other size too.
ITEMSIZES = [size if size == 4 else pytest.param(size, marks=pytest.mark.certification)
             for size in sorted(SIZES)]


def nhwc_strides(sizes: tuple[int, ...], pad: int = 0) -> tuple[int, ...]:
    """Channels innermost, each pixel's channels padded by `pad` elements."""
    _, c, h, w = sizes
    pixel = c + pad
    return (pixel * w * h, 1, pixel * w, pixel)


def run_d2s(call, rng: np.random.Generator, offset: int, line: bool = False
            ) -> tuple[bytes, bytes]:
    """The call on random input bits, its output buffer starting `offset` bytes into a larger
    one (a 64-byte aligned one when `line`): (what numba wrote, what the reference expects),
    after checking no byte outside the output's elements changed."""
    spec = ops.get(call.operator)
    src, dst = call.tensors["InputTensor"], call.tensors["OutputTensor"]
    inp = rng.integers(0, 256, src.total_size).astype(np.uint8)
    out = execute_at(load_backend("numba"), call, inp, offset, line)
    expected = spec.expected(call, {"InputTensor": read_tensor(src, inp)},
                             strict=True)["OutputTensor"]
    return read_tensor(dst, out).tobytes(), expected.values.tobytes()


def test_the_nhwc_dispatch_takes_the_transposing_kernel(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """NHWC input with contiguous output rows runs depth_to_space_nhwc, nothing else."""
    from backends import numba_kernels as k

    called = []
    real = k.depth_to_space_nhwc
    monkeypatch.setattr(k, "depth_to_space_nhwc",
                        lambda *a: called.append(a) or real(*a))
    monkeypatch.setattr(k, "depth_to_space_blocked", lambda *a: pytest.fail("blocked kernel"))
    sizes = (1, 16, 3, 9)
    call = ops.get("DEPTH_TO_SPACE1").make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, sizes, nhwc_strides(sizes)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 4, 6, 18))},
        {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"})
    got, expected = run_d2s(call, np.random.default_rng(0), 0)
    assert len(called) == 1 and got == expected


@pytest.mark.parametrize("itemsize", ITEMSIZES)
@pytest.mark.parametrize("order", ["DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH"])
def test_nhwc_depth_to_space_is_bit_exact(itemsize: int, order: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Channel counts below, at and past a multiple of 8 (whole 8x8 tiles and ragged
    channels), widths with ragged columns, padded pixels, tiles of 8 columns and of the whole
    row, blocks 1-4, streaming stores on and off, every element offset within 16 bytes."""
    import backends.numba_backend as nb

    data_type = SIZES[itemsize]
    spec = ops.get("DEPTH_TO_SPACE1")
    rng = np.random.default_rng(itemsize * 2 + (order == "DEPTH_COLUMN_ROW"))
    # (block, C', H', W', pad): whole 8x8 tiles and ragged channels / columns, padded pixels
    shapes = [(2, 4, 3, 19, 0), (2, 5, 2, 16, 1), (3, 1, 2, 9, 0), (4, 1, 1, 24, 2),
              (1, 9, 2, 17, 3), (2, 2, 3, 4, 0), (2, 3, 1, 5, 1), (1, 2, 1, 2, 0)]
    for stream, tile in ((0, 32 << 10), (1 << 62, 1), (0, 1)):
        monkeypatch.setattr(nb, "STREAM_BYTES", stream)
        monkeypatch.setattr(nb, "NHWC_TILE_BYTES", tile)  # 1: tiles of 8 columns
        for block, c_out, h, w, pad in shapes:
            sizes_in = (1 + (w % 2), c_out * block * block, h, w)
            sizes_out = (sizes_in[0], c_out, h * block, w * block)
            call = spec.make_call(
                {"InputTensor": TensorDesc(data_type, sizes_in, nhwc_strides(sizes_in, pad)),
                 "OutputTensor": TensorDesc(data_type, sizes_out)},
                {"BlockSize": block, "Order": order})
            for offset in range(0, 16, itemsize):
                got, expected = run_d2s(call, rng, offset)
                assert got == expected, (block, c_out, h, w, pad, stream, tile, offset)


def test_nhwc_depth_to_space_with_padded_output_rows() -> None:
    """Output rows padded (row stride past the row): each output row is written alone."""
    spec = ops.get("DEPTH_TO_SPACE")
    sizes_in, sizes_out = (1, 36, 5, 11), (1, 9, 10, 22)
    call = spec.make_call(
        {"InputTensor": TensorDesc(DataType.FLOAT32, sizes_in, nhwc_strides(sizes_in, 2)),
         "OutputTensor": TensorDesc(DataType.FLOAT32, sizes_out,
                                    (9 * 10 * 25, 10 * 25, 25, 1))},
        {"BlockSize": 2})
    got, expected = run_d2s(call, np.random.default_rng(3), 4)
    assert got == expected


@pytest.mark.parametrize("itemsize", sorted(SIZES))
def test_transpose8_moves_an_8x8_tile(itemsize: int) -> None:
    """The intrinsic alone: dst[j + q * ldd + r] = src[i + r * ld + q], nothing else written."""
    from numba import njit

    from backends.numba_kernels import transpose8

    @njit
    def run(src, i, ld, dst, j, ldd):
        transpose8(src, i, ld, dst, j, ldd)

    dtype = np.dtype(f"u{itemsize}")
    src = np.arange(200, dtype=dtype)
    dst = np.zeros(150, dtype)
    run(src, 3, 21, dst, 5, 13)
    expected = np.zeros(150, dtype)
    for q in range(8):
        for r in range(8):
            expected[5 + q * 13 + r] = src[3 + r * 21 + q]
    assert np.array_equal(dst, expected)


@pytest.mark.parametrize("itemsize", ITEMSIZES)
@pytest.mark.parametrize("order", ["DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH"])
def test_space_to_depth_line_splits_are_bit_exact(itemsize: int, order: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """SPACE_TO_DEPTH1 block 2 on contiguous rows: output rows long enough for the 64-byte
    splits (and their 16-byte and scalar remainders), the output buffer at every element
    offset within a 64-byte line (both rows on a line: the non-temporal splits; elsewhere the
    ordinary ones), streaming on and off, packed and padded output rows."""
    import backends.numba_backend as nb

    data_type = SIZES[itemsize]
    spec = ops.get("SPACE_TO_DEPTH1")
    rng = np.random.default_rng(40 + itemsize)
    per_line = 64 // itemsize
    for stream in (0, 1 << 62):
        monkeypatch.setattr(nb, "STREAM_BYTES", stream)
        for w_out, padded in ((per_line, False), (2 * per_line + 3, False), (per_line + 9, True)):
            sizes_in, sizes_out = (1, 2, 4, 2 * w_out), (1, 8, 2, w_out)
            strides = (8 * 2 * (w_out + 5), 2 * (w_out + 5), w_out + 5, 1) if padded else None
            call = spec.make_call({"InputTensor": TensorDesc(data_type, sizes_in),
                                   "OutputTensor": TensorDesc(data_type, sizes_out, strides)},
                                  {"BlockSize": 2, "Order": order})
            for offset in range(0, 64, itemsize):
                got, expected = run_d2s(call, rng, offset, line=True)
                assert got == expected, (w_out, padded, stream, offset)


@pytest.mark.parametrize("itemsize", ITEMSIZES)
def test_nhwc_banded_depth_to_space_is_bit_exact(itemsize: int,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The banded woven kernel (DCR, blocks 1, 2 and 4, C' a multiple of 8, packed output
    rows): taken where it applies, bands that divide the rows and a ragged last band, padded
    pixels, streaming on and off, every element offset within 16 bytes: bit for bit the
    reference, nothing outside the output written."""
    import backends.numba_backend as nb
    from backends import numba_kernels as k

    called = []
    real = k.depth_to_space_nhwc_bands
    monkeypatch.setattr(k, "depth_to_space_nhwc_bands", lambda *a: called.append(a) or real(*a))
    data_type = SIZES[itemsize]
    spec = ops.get("DEPTH_TO_SPACE1")
    rng = np.random.default_rng(70 + itemsize)
    per = max(8, 64 // itemsize)  # output columns per woven call
    for stream, band in ((0, 4), (1 << 62, 2), (0, 1), (0, 3)):
        monkeypatch.setattr(nb, "STREAM_BYTES", stream)
        monkeypatch.setattr(nb, "NHWC_BAND", band)
        for block, c_out, h, pad in ((2, 8, 3, 0), (1, 16, 2, 1), (4, 8, 2, 3), (2, 16, 5, 2)):
            w = 2 * per // block
            sizes_in = (2, c_out * block * block, h, w)
            sizes_out = (2, c_out, h * block, w * block)
            call = spec.make_call(
                {"InputTensor": TensorDesc(data_type, sizes_in, nhwc_strides(sizes_in, pad)),
                 "OutputTensor": TensorDesc(data_type, sizes_out)},
                {"BlockSize": block, "Order": "DEPTH_COLUMN_ROW"})
            for offset in range(0, 16, itemsize):
                before = len(called)
                got, expected = run_d2s(call, rng, offset)
                assert len(called) == before + 1, "the banded kernel was not taken"
                assert got == expected, (block, c_out, h, pad, stream, band, offset)
