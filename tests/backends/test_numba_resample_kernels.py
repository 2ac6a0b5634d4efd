"""The Numba backend's vectorised RESAMPLE kernels (issue 16): the float32 linear plane kernel
(8-wide horizontal pairs, 8-wide vertical blends) forced onto small tensors at awkward widths,
scales, offsets, strides and buffer alignments, bit for bit the scalar plane kernel it replaces
and PASS (the strict reading) against the reference."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from conformance import ops
from conformance.backend import load_backend
from conformance.judge.compare import judge
from conformance.kit.build import padded_strides
from conformance.tensors import DataType, TensorDesc, read_tensor, write_tensor
from tests.support import execute_at

F32 = DataType.FLOAT32


def _linear_call(sizes_in: tuple[int, ...], sizes_out: tuple[int, ...], scales: list[float],
                 offsets: tuple[float, float], padded: bool):
    out_desc = TensorDesc(F32, sizes_out, tuple(padded_strides(list(sizes_out))) if padded
                          else None)
    dims = len(sizes_in)
    return ops.get("RESAMPLE1").make_call(
        {"InputTensor": TensorDesc(F32, sizes_in), "OutputTensor": out_desc},
        {"InterpolationMode": "LINEAR", "Scales": scales,
         "InputPixelOffsets": [offsets[0]] * dims, "OutputPixelOffsets": [offsets[1]] * dims})


#: (input sizes, scales, (input offset, output offset)): 2x at half-pixel offsets (the pair
#: range with two different taps per pair), 2x at zero offsets (both outputs of a pair between
#: the same two inputs), widths that leave 0..15 outputs of scalar tail after the 16-wide steps
#: and rows shorter than one step, and scales with no 2x range at all (3x, 1.5x, 0.5x).
SHAPES = [((1, 2, 5, 37), [1, 1, 2, 2], (0.5, -0.5)),
          ((2, 1, 4, 8), [1, 1, 2, 2], (0.5, -0.5)),
          ((1, 1, 3, 9), [1, 1, 2, 2], (0.5, -0.5)),
          ((1, 1, 6, 40), [1, 1, 2, 2], (0.0, 0.0)),
          ((1, 3, 2, 23), [1, 1, 2, 2], (0.0, 0.0)),
          ((1, 1, 4, 3), [1, 1, 2, 2], (0.5, -0.5)),
          ((1, 1, 3, 17), [1, 1, 3, 3], (0.5, -0.5)),
          ((1, 1, 4, 26), [1, 1, 1.5, 1.5], (0.5, -0.5)),
          ((1, 1, 8, 50), [1, 1, 0.5, 0.5], (0.0, 0.0)),
          ((7, 33), [2, 2], (0.5, -0.5))]


@pytest.mark.parametrize("sizes_in, scales, offsets", SHAPES)
def test_linear_float32_planes_match_the_scalar_kernel_bit_for_bit(
        sizes_in: tuple[int, ...], scales: list[float], offsets: tuple[float, float],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call that takes linear_planes_f32 also runs the scalar linear_planes on the same
    arguments into a second buffer: the two agree in every bit (NaN, inf and -0.0 inputs
    included); the output is PASS against the reference, and no byte outside the output's
    elements changes, at every 4-byte buffer offset within 32 bytes and with padded rows."""
    from backends import numba_kernels as k

    fast, calls = k.linear_planes_f32, []

    def both(src, dst, sizes_out, w_in, s_in, s_out, pn, pc, lo2, hi2, w2, lo3, hi3, w3, pair):
        scalar = dst.copy()
        k.linear_planes(src, scalar, sizes_out, w_in, s_in, s_out, pn, pc, lo2, hi2, w2, lo3,
                        hi3, w3, pair, False, np.float32(0), np.float32(0))
        fast(src, dst, sizes_out, w_in, s_in, s_out, pn, pc, lo2, hi2, w2, lo3, hi3, w3, pair)
        assert dst.view(np.uint32).tobytes() == scalar.view(np.uint32).tobytes()
        calls.append(int(pair[1] - pair[0]))

    monkeypatch.setattr(k, "linear_planes_f32", both)
    backend, spec = load_backend("numba"), ops.get("RESAMPLE1")
    rng = np.random.default_rng(16)
    for padded in (False, True):
        sizes_out = tuple(int(np.floor(i * np.float32(s))) for i, s in zip(sizes_in, scales,
                                                                           strict=True))
        call = _linear_call(sizes_in, sizes_out, scales, offsets, padded)
        src, dst = call.tensors["InputTensor"], call.tensors["OutputTensor"]
        for offset in range(0, 32, 4):
            values = (rng.standard_normal(src.sizes) * 10).astype(np.float32)
            special = values.reshape(-1)
            special[rng.integers(special.size, size=3)] = [np.nan, np.inf, -0.0]
            inp = np.zeros(src.total_size, np.uint8)
            write_tensor(src, inp, values)
            out = execute_at(backend, call, inp, offset)
            finite = values.copy()
            finite[~np.isfinite(finite)] = 1.0  # NaN / inf spread by design: judge the rest
            write_tensor(src, inp, finite)
            backend.execute(call, {"InputTensor": inp, "OutputTensor": out})
            expected = spec.expected(call, {"InputTensor": finite})["OutputTensor"]
            verdict = judge(read_tensor(dst, out), expected)
            assert verdict.status == "PASS", (sizes_in, scales, offsets, padded, offset,
                                              verdict.margin)
    assert calls, "the float32 plane kernel was not taken"
    if scales[-1] == 2 and sizes_in[-1] >= 3:  # the 2x pair range was found and walked
        assert max(calls) > 0


def test_linear_other_types_keep_the_scalar_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The float32 kernel is taken for FLOAT32 (and FLOAT16, widened to float32) only: integer
    tensors, which round and clamp, keep linear_planes."""
    from backends import numba_kernels as k

    taken: list[str] = []
    for name in ("linear_planes", "linear_planes_f32"):
        real = getattr(k, name)
        monkeypatch.setattr(k, name, lambda *a, _r=real, _n=name: (taken.append(_n), _r(*a)))
    backend = load_backend("numba")
    for data_type in (DataType.FLOAT32, DataType.FLOAT16, DataType.UINT8):
        call = ops.get("RESAMPLE1").make_call(
            {"InputTensor": TensorDesc(data_type, (1, 1, 4, 20)),
             "OutputTensor": TensorDesc(data_type, (1, 1, 8, 40))},
            {"InterpolationMode": "LINEAR", "Scales": [1, 1, 2, 2],
             "InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4})
        src = call.tensors["InputTensor"]
        inp = np.random.default_rng(3).integers(0, 256, src.total_size).astype(np.uint8)
        backend.execute(call, {"InputTensor": inp,
                               "OutputTensor": np.zeros(call.tensors["OutputTensor"].total_size,
                                                        np.uint8)})
    assert taken == ["linear_planes_f32", "linear_planes_f32", "linear_planes"]


def test_tables_are_kept_per_call_object_and_never_reused_for_another() -> None:
    """The backend keeps a call's index tables while the same call object executes again (as a
    compiled operator), and computes them afresh for any other call: alternating two nearest
    calls of the same shapes but different offsets on one backend gives each its own result,
    bit for bit the reference, every time."""
    backend, spec = load_backend("numba"), ops.get("RESAMPLE1")
    rng = np.random.default_rng(5)
    calls = [spec.make_call({"InputTensor": TensorDesc(F32, (1, 1, 6, 12)),
                             "OutputTensor": TensorDesc(F32, (1, 1, 12, 24))},
                            {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": [1, 1, 2, 2],
                             "InputPixelOffsets": [a] * 4, "OutputPixelOffsets": [b] * 4})
             for a, b in ((0.5, -0.5), (0.0, 1.0))]
    outputs = set()
    for call in calls + calls + calls[::-1]:
        src, dst = call.tensors["InputTensor"], call.tensors["OutputTensor"]
        inp = rng.integers(0, 256, src.total_size).astype(np.uint8)
        out = np.zeros(dst.total_size, np.uint8)
        backend.execute(call, {"InputTensor": inp, "OutputTensor": out})
        expected = spec.expected(call, {"InputTensor": read_tensor(src, inp)},
                                 strict=True)["OutputTensor"]
        assert read_tensor(dst, out).tobytes() == expected.values.tobytes()
        outputs.add(read_tensor(dst, out)[0, 0, 5].tobytes())
    assert len(outputs) > 1


@pytest.mark.parametrize("data_type", [  # other types: other JIT compiles (CI's second step)
    pytest.param(DataType.UINT8, marks=pytest.mark.certification),
    pytest.param(DataType.FLOAT16, marks=pytest.mark.certification), DataType.FLOAT32])
@pytest.mark.parametrize("stream", [False, True])
def test_nearest_2x_rows_are_bit_exact_at_every_alignment(
        data_type: DataType, stream: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The nearest 2x row kernel (scalar head to 16 bytes, 16-byte stores to a 64-byte line,
    whole-line stores, 16-byte and scalar tails), streamed (non-temporal; forced here on small
    outputs) or not, at 1-, 2-, 4- and 8-byte elements, row widths from 1 to past several whole
    lines, packed and padded rows and every element offset of the output buffer within 64
    bytes: the output is bit for bit the strict reference and no byte outside the output's
    elements changes."""
    from backends import numba_backend
    from backends import numba_kernels as k

    monkeypatch.setattr(numba_backend, "STREAM_BYTES", 0 if stream else 1 << 62)
    flags: list[bool] = []
    real = k.nearest_planes
    monkeypatch.setattr(k, "nearest_planes", lambda *a: (flags.append(a[-1]), real(*a)))
    backend, spec = load_backend("numba"), ops.get("RESAMPLE1")
    size = np.dtype(data_type.bits_dtype).itemsize
    rng = np.random.default_rng(size)
    for width in (1, 5, 24, 70):
        for padded in (False, True):
            sizes_out = (1, 2, 6, 2 * width)
            out_desc = TensorDesc(data_type, sizes_out, tuple(padded_strides(list(sizes_out)))
                                  if padded else None)
            call = spec.make_call(
                {"InputTensor": TensorDesc(data_type, (1, 2, 3, width)), "OutputTensor": out_desc},
                {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": [1, 1, 2, 2],
                 "InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4})
            src, dst = call.tensors["InputTensor"], call.tensors["OutputTensor"]
            inp = rng.integers(0, 256, src.total_size).astype(np.uint8)
            expected = spec.expected(call, {"InputTensor": read_tensor(src, inp)},
                                     strict=True)["OutputTensor"].values.tobytes()
            for offset in range(0, 64, size):
                out = execute_at(backend, call, inp, offset)
                assert read_tensor(dst, out).tobytes() == expected, (width, padded, offset)
    assert flags and set(flags) == {stream}, "the row kernel was not taken as intended"


@pytest.mark.parametrize("dtype", [  # other sizes: other JIT compiles (CI's second step)
    pytest.param(np.uint8, marks=pytest.mark.certification),
    pytest.param(np.uint16, marks=pytest.mark.certification), np.uint32,
    pytest.param(np.uint64, marks=pytest.mark.certification)])
def test_nearest_2x_row_kernel_at_every_element_size(dtype: type) -> None:
    """nearest_planes itself, streamed and not, on every element width its stores are built for
    (8-byte elements included, which no RESAMPLE type reaches today) at every element offset
    within 64 bytes: each output row is its input row with every element twice, each input row
    twice, and nothing past the output is written."""
    from backends import numba_kernels as k

    size = np.dtype(dtype).itemsize
    rng = np.random.default_rng(size)
    for width in (1, 3, 9, 40, 77):
        x = rng.integers(0, 1 << 8 * min(size, 4), (2, 3, width)).astype(dtype)
        expected = np.repeat(np.repeat(x, 2, 1), 2, 2).reshape(-1)
        none = np.zeros(1, np.int64)
        index = [none, np.arange(2, dtype=np.int64), np.arange(6, dtype=np.int64) // 2,
                 np.arange(2 * width, dtype=np.int64) // 2]
        pair = np.array([0, 2 * width] if width >= 2 else [0, 0], np.int64)
        for stream in (False, True):
            for offset in range(0, 64 // size):
                whole = np.full(expected.size + 64 // size, 7, dtype)
                out = whole[offset:offset + expected.size]
                k.nearest_planes(x.reshape(-1), out, np.array([1, 2, 6, 2 * width], np.int64),
                                 width, np.array([0, 3 * width, width, 1], np.int64),
                                 np.array([0, 12 * width, 2 * width, 1], np.int64), *index,
                                 pair, out.ctypes.data % 64, stream)
                assert np.array_equal(out, expected), (width, stream, offset)
                assert (whole[:offset] == 7).all() and (whole[offset + out.size:] == 7).all()
