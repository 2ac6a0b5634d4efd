"""The Numba backend: JIT-compiled kernels (backends/numba_kernels/) working directly on the
bound byte buffers through strides, parallel across cores. DEPTH_TO_SPACE(1), SPACE_TO_DEPTH(1),
RESAMPLE, RESAMPLE1, RESAMPLE2 and RESAMPLE3, every data type of the tables, any strides
(padding, stride-0 broadcast inputs, NHWC and other orders); descs validated as the reference
does; only the outputs' logical elements are written.

Arithmetic: linear resampling computes in float32 (the taps and weights come from the operator
spec's coordinate formula, evaluated in float64 once per call and per dimension); FLOAT16 tensors
are widened to float32 around the kernel. Nearest resampling and depth/space moves bits; the
nearest index is the operator spec's rounding (RESAMPLE2/3's RoundingDirection: floor or ceil).
RESAMPLE3's antialiased linear runs the spec's separable filter (taps and normalised weights per
dimension), one float32 pass per dimension.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import numpy as np

from conformance import ops
from conformance.backend import Backend, Capabilities
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.ops.resample import ResampleFamily, linear_taps, nearest_index
from conformance.ops.resample.antialias import Axis, filter_weights
from conformance.tensors import DataType, TensorDesc, packed_strides, read_tensor, write_tensor


def _kernels() -> ModuleType:
    """Imported on first use: Numba's import and JIT are not free."""
    from backends import numba_kernels

    return numba_kernels


def element_view(desc: TensorDesc, buffer: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The buffer as a flat array of elements (whole elements only; addressed by strides)."""
    usable = buffer.size - buffer.size % dtype.itemsize
    return buffer[:usable].view(dtype)


def _four(desc_sizes: tuple[int, ...], strides: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Sizes and element strides padded to 4 dimensions with leading size-1 dimensions."""
    pad = 4 - len(desc_sizes)
    sizes = np.array((1,) * pad + tuple(desc_sizes), dtype=np.int64)
    return sizes, np.array((0,) * pad + tuple(strides), dtype=np.int64)


def twice_range(lo: np.ndarray, hi: np.ndarray | None = None, w: np.ndarray | None = None
                ) -> np.ndarray:
    """(start, stop): the longest even-length range where lo advances by one every two
    outputs (lo[x + 2] == lo[x] + 1), with hi == lo + 1 and two alternating weights when given:
    the 2x-upscale pattern the kernels walk with contiguous loads. (0, 0) when there is none."""
    n = lo.size
    if n < 6:
        return np.zeros(2, np.int64)
    ok = lo[2:] == lo[:-2] + 1
    if hi is not None and w is not None:
        ok &= (hi[:-2] == lo[:-2] + 1) & (hi[2:] == lo[2:] + 1) & (w[2:] == w[:-2])
    bad = np.flatnonzero(~ok)
    start = int(bad[bad < n // 2].max() + 1) if np.any(bad < n // 2) else 0
    after = bad[bad >= start]
    stop = int(after.min()) + 2 if after.size else n
    stop = start + (stop - start) // 2 * 2
    return np.array([start, stop] if stop - start >= 4 else [0, 0], np.int64)


#: Outputs of at least this many bytes are written with non-temporal stores where a kernel
#: can (nearest, depth/space rows): far larger than the caches, they would only evict what is
#: there, and writing around the cache saves reading every destination line first (np.copyto
#: does the same).
STREAM_BYTES = 32 << 20


#: Input bytes per job of the NHWC depth-to-space kernel: a tile of a depth-form row (every
#: channel of some columns), transposed into channel rows in a buffer that stays in cache while
#: the output rows are written from it.
NHWC_TILE_BYTES = 32 << 10


def nhwc_tile(channels: int, itemsize: int, width: int) -> int:
    """Columns per tile of the NHWC kernel: NHWC_TILE_BYTES of input, a multiple of 8 (the
    transposed tile), at least 8, at most the row."""
    return max(1, min(width, max(8, NHWC_TILE_BYTES // max(1, channels * itemsize) // 8 * 8)))


#: Depth-form rows per job of the banded NHWC kernel: each output channel is then written as
#: one run of NHWC_BAND * block rows (longer runs ran faster: 0.47-0.54 of the copy at 1-4 rows
#: against 0.37-0.43 for the row-tile kernel).
NHWC_BAND = 4


def nhwc_bands(sizes_out: np.ndarray, s_out: np.ndarray, block: int, crd: bool,
               itemsize: int) -> bool:
    """Whether depth_to_space_nhwc_bands takes the call: DCR, block 1, 2 or 4, packed output
    rows, output channels a multiple of 8 and input columns a multiple of its woven call."""
    per = max(8, 64 // itemsize) // block if block in (1, 2, 4) else 0
    return (not crd and per > 0 and s_out[2] == sizes_out[3] and sizes_out[1] % 8 == 0
            and (sizes_out[3] // block) % per == 0)


#: The operators execute dispatches on, by exact name, and the kernels each runs: the backend
#: claims these and no others (an operator the suite adds later is not one the kernels were
#: written for). RESAMPLE2/3 take the resample kernels through the spec's rounding and
#: antialias hooks (module docstring).
KERNELS = {"DEPTH_TO_SPACE": "depth_to_space", "DEPTH_TO_SPACE1": "depth_to_space",
           "SPACE_TO_DEPTH": "space_to_depth", "SPACE_TO_DEPTH1": "space_to_depth",
           "RESAMPLE": "resample", "RESAMPLE1": "resample", "RESAMPLE2": "resample",
           "RESAMPLE3": "resample"}


class NumbaBackend(Backend):
    name = "numba"
    native = True

    def __init__(self, feature_level: FeatureLevel | None = None) -> None:
        try:
            import numba  # noqa: F401 - present or not: say so now, not at the first case
        except ImportError as exc:
            raise RuntimeError("the numba backend needs Numba: "
                               "pip install 'dml-conformance[numba]'") from exc
        super().__init__(feature_level)
        self._tables: dict[str, object] = {}

    def _per_call(self, call: OperatorCall, what: str, make: Callable[[], Any]) -> Any:
        """make(), computed once per operator call object, as a compiled DirectML operator holds
        its tables across dispatches: the resampling index tables cost ~0.5 ms of Python per
        execute (7% of a 2x nearest upscale of 128 MiB). Keyed by identity, one call at a time:
        a new call object, even an equal one, is computed afresh."""
        if self._tables.get("call") is not call:
            self._tables = {"call": call}
        if what not in self._tables:
            self._tables[what] = make()
        return self._tables[what]

    @property
    def environment(self) -> dict[str, str]:
        """The Numba that compiles the kernels (Backend.environment's `version`)."""
        import numba

        return {"version": f"numba {numba.__version__}"}

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities.full(KERNELS, "Numba kernels on the bound buffers; float32 "
                                          "arithmetic for linear resampling")

    def create_operator(self, call: OperatorCall) -> None:
        self.validate(call)

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        kernel = KERNELS.get(call.operator)
        if kernel is None:
            raise NotImplementedError(f"the numba backend has no kernel for {call.operator} "
                                      f"(it runs {', '.join(KERNELS)})")
        self.validate(call)
        if kernel == "resample":
            self._resample(call, bindings, call.tensors["InputTensor"],
                           call.tensors["OutputTensor"], bindings["InputTensor"],
                           bindings["OutputTensor"])
        else:
            self._depth_space(call, bindings, kernel)

    def _depth_space(self, call: OperatorCall, bindings: Mapping[str, np.ndarray],
                     kernel: str) -> None:
        k = _kernels()
        src_desc, dst_desc = call.tensors["InputTensor"], call.tensors["OutputTensor"]
        bits = src_desc.data_type.bits_dtype
        src = element_view(src_desc, bindings["InputTensor"], bits)
        dst = element_view(dst_desc, bindings["OutputTensor"], bits)
        s_in = np.array(src_desc.element_strides, dtype=np.int64)
        s_out = np.array(dst_desc.element_strides, dtype=np.int64)
        block = call.attributes["BlockSize"]
        crd = call.attributes.get("Order", "DEPTH_COLUMN_ROW") == "COLUMN_ROW_DEPTH"
        rows = s_in[3] == 1 and s_out[3] == 1  # contiguous rows: the vectorised kernels
        sizes = np.array((dst_desc if kernel == "depth_to_space" else src_desc).sizes, np.int64)
        stream = dst.nbytes >= STREAM_BYTES
        if rows:
            run = k.depth_to_space_rows if kernel == "depth_to_space" else k.space_to_depth_rows
            run(src, dst, sizes, s_in, s_out, block, crd, dst.ctypes.data % 64, stream)
        elif (kernel == "depth_to_space" and s_in[1] == 1 and s_out[3] == 1
              and nhwc_bands(sizes, s_out, block, crd, src.itemsize)):
            # channels innermost, DCR, packed output rows: woven transposes, banded
            k.depth_to_space_nhwc_bands(src, dst, sizes, s_in, s_out, block, NHWC_BAND,
                                        dst.ctypes.data % 16,
                                        stream and dst.ctypes.data % src.itemsize == 0)
        elif kernel == "depth_to_space" and s_in[1] == 1 and s_out[3] == 1:
            # channels innermost (NHWC): a transposing kernel reads each input row once
            k.depth_to_space_nhwc(src, dst, sizes, s_in, s_out, block, crd,
                                  nhwc_tile(sizes[1] * block * block, src.itemsize,
                                            sizes[3] // block),
                                  dst.ctypes.data % 16, stream)
        else:
            run = (k.depth_to_space_blocked if kernel == "depth_to_space"
                   else k.space_to_depth_blocked)
            run(src, dst, sizes, s_in, s_out, block, crd)

    def _resample(self, call: OperatorCall, bindings: Mapping[str, np.ndarray],
                  src_desc: TensorDesc, dst_desc: TensorDesc, src_buf: np.ndarray,
                  dst_buf: np.ndarray) -> None:
        k = _kernels()
        spec = ops.get(call.operator)
        assert isinstance(spec, ResampleFamily)
        pad = 4 - len(src_desc.sizes)
        in_sizes, s_in = _four(src_desc.sizes, src_desc.element_strides)
        sizes_out, s_out = _four(dst_desc.sizes, dst_desc.element_strides)
        rows = s_in[3] == 1 and s_out[3] == 1
        w_in = int(in_sizes[3])
        if call.attributes["InterpolationMode"] == "NEAREST_NEIGHBOR":
            # floor(c + 0.5) for RESAMPLE(1); RESAMPLE2/3's RoundingDirection floor(c) or ceil(c)
            def nearest_tables() -> tuple[list[np.ndarray], np.ndarray]:
                rounding = spec.nearest_rounding(call)
                index = [np.zeros(1, np.int64)] * pad + [
                    nearest_index(c + rounding.shift, rounding.halves_up)
                    for c, _ in spec.axes(call, src_desc.sizes)]
                return index, twice_range(index[3])

            index, pair = self._per_call(call, "nearest", nearest_tables)
            bits = src_desc.data_type.bits_dtype
            src, dst = element_view(src_desc, src_buf, bits), element_view(dst_desc, dst_buf, bits)
            if rows:
                k.nearest_planes(src, dst, sizes_out, w_in, s_in, s_out, *index, pair,
                                 dst.ctypes.data % 64,
                                 dst.nbytes >= STREAM_BYTES)
            else:
                k.nearest(src, dst, sizes_out, s_in, s_out, *index)
            return
        if src_desc.data_type == DataType.FLOAT16:  # no float16 arithmetic: widen around it
            packed_in = TensorDesc(DataType.FLOAT32, src_desc.sizes)
            packed_out = TensorDesc(DataType.FLOAT32, dst_desc.sizes)
            wide_in = np.empty(packed_in.total_size, np.uint8)
            wide_out = np.empty(packed_out.total_size, np.uint8)
            write_tensor(packed_in, wide_in, read_tensor(src_desc, src_buf).astype(np.float32))
            self._resample(call, bindings, packed_in, packed_out, wide_in, wide_out)
            write_tensor(dst_desc, dst_buf, read_tensor(packed_out, wide_out).astype(np.float16))
            return
        filters = spec.antialias_axes(call) if call.operator == "RESAMPLE3" else None
        if filters is not None:
            self._antialiased(filters, src_desc, dst_desc, src_buf, dst_buf)
            return
        taps = self._per_call(call, "linear", lambda: [
            ((np.zeros(1, np.int64),) * 2 + (np.zeros(1),))] * pad + [
            linear_taps(c, size) for (c, _), size in zip(spec.axes(call, src_desc.sizes),
                                                          src_desc.sizes, strict=True)])
        dtype = src_desc.data_type.numpy_dtype
        src, dst = element_view(src_desc, src_buf, dtype), element_view(dst_desc, dst_buf, dtype)
        integer = not src_desc.data_type.is_float
        low, high = (np.iinfo(dtype).min, np.iinfo(dtype).max) if integer else (0, 0)
        low, high = np.float32(low), np.float32(high)
        if rows and not taps[0][2].any() and not taps[1][2].any():
            (pn, _, _), (pc, _, _), (lo2, hi2, w2), (lo3, hi3, w3) = taps
            w2, w3, pair = self._per_call(call, "planes", lambda: (
                w2.astype(np.float32), w3.astype(np.float32),
                twice_range(lo3, hi3, w3.astype(np.float32))))
            if dtype == np.float32:  # 8-wide horizontal pairs and vertical blends, same bits
                k.linear_planes_f32(src, dst, sizes_out, w_in, s_in, s_out, pn, pc, lo2, hi2,
                                    w2, lo3, hi3, w3, pair)
            else:
                k.linear_planes(src, dst, sizes_out, w_in, s_in, s_out, pn, pc, lo2, hi2, w2,
                                lo3, hi3, w3, pair, integer, low, high)
            return
        longest = int(sizes_out.max())
        lo = np.zeros((4, longest), np.int64)
        hi = np.zeros((4, longest), np.int64)
        wt = np.zeros((4, longest), np.float32)
        for d, (i0, i1, t) in enumerate(taps):
            lo[d, :i0.size], hi[d, :i0.size], wt[d, :i0.size] = i0, i1, t
        k.linear(src, dst, sizes_out, s_in, s_out, lo, hi, wt, integer, low, high)

    def _antialiased(self, axes: list[Axis], src_desc: TensorDesc, dst_desc: TensorDesc,
                     src_buf: np.ndarray, dst_buf: np.ndarray) -> None:
        """RESAMPLE3's antialiased linear: the spec's separable filter (taps and normalised
        weights per dimension, antialias.py), one float32 pass per dimension that changes
        (packed float32 between passes), the last pass writing the output through its
        strides."""
        k = _kernels()
        pad = 4 - len(axes)
        none = (np.zeros((1, 1), np.int64), np.ones((1, 1), np.float32))
        filters = [none] * pad + [(t, w.astype(np.float32))
                                  for t, w, _, _ in map(filter_weights, axes)]
        in_sizes, s_in = _four(src_desc.sizes, src_desc.element_strides)
        out_sizes, s_out = _four(dst_desc.sizes, dst_desc.element_strides)
        passes = [d for d, (taps, weights) in enumerate(filters)
                  if not (in_sizes[d] == out_sizes[d]
                          and np.array_equal(taps[:, 0], np.arange(out_sizes[d]))
                          and np.all(weights[:, 0] == 1))]
        dtype = src_desc.data_type.numpy_dtype
        integer = not src_desc.data_type.is_float
        low, high = (np.iinfo(dtype).min, np.iinfo(dtype).max) if integer else (0, 0)
        current, strides, sizes = element_view(src_desc, src_buf, dtype), s_in, in_sizes
        for i, d in enumerate(passes):
            sizes = sizes.copy()
            sizes[d] = out_sizes[d]
            last = i == len(passes) - 1
            if last:
                out, out_strides = element_view(dst_desc, dst_buf, dtype), s_out
            else:
                out = np.empty(int(np.prod(sizes)), np.float32)
                out_strides = np.array(packed_strides(tuple(sizes)), np.int64)
            k.filter_pass(current, out, sizes, strides, out_strides, d, *filters[d],
                          integer and last, np.float32(low), np.float32(high))
            current, strides = out, out_strides
