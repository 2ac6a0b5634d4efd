"""The Numba backend: JIT-compiled kernels (backends/numba_kernels.py) working directly on the
bound byte buffers through strides, parallel across cores. All six operators, every data type
of the tables, any strides (padding, stride-0 broadcast inputs, NHWC and other orders); descs
validated as the reference does; only the outputs' logical elements are written.

Arithmetic: linear resampling computes in float32 (the taps and weights come from the operator
spec's coordinate formula, evaluated in float64 once per call and per dimension); FLOAT16 tensors
are widened to float32 around the kernel. Nearest resampling and depth/space moves bits.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType

import numpy as np

from backends.base import Backend, Capabilities
from conformance import ops
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.ops.resample import linear_taps, nearest_index
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


class NumbaBackend(Backend):
    name = "numba"

    def __init__(self, feature_level: FeatureLevel | None = None) -> None:
        try:
            import numba  # noqa: F401 - present or not: say so now, not at the first case
        except ImportError as exc:
            raise RuntimeError("the numba backend needs Numba: "
                               "pip install 'dml-conformance[numba]'") from exc
        super().__init__(feature_level)

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities.everything("Numba kernels on the bound buffers; float32 arithmetic "
                                       "for linear resampling")

    def create_operator(self, call: OperatorCall) -> None:
        self.validate(call)

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        self.validate(call)
        if call.operator.startswith("RESAMPLE"):
            self._resample(call, bindings)
        else:
            self._depth_space(call, bindings)

    def _depth_space(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        k = _kernels()
        src_desc, dst_desc = call.tensors["InputTensor"], call.tensors["OutputTensor"]
        bits = src_desc.data_type.bits_dtype
        src = element_view(src_desc, bindings["InputTensor"], bits)
        dst = element_view(dst_desc, bindings["OutputTensor"], bits)
        s_in = np.array(src_desc.element_strides, dtype=np.int64)
        s_out = np.array(dst_desc.element_strides, dtype=np.int64)
        block = call.attributes["BlockSize"]
        crd = call.attributes.get("Order", "DEPTH_COLUMN_ROW") == "COLUMN_ROW_DEPTH"
        if call.operator.startswith("DEPTH"):
            k.depth_to_space(src, dst, np.array(dst_desc.sizes, dtype=np.int64), s_in, s_out,
                             block, crd)
        else:
            k.space_to_depth(src, dst, np.array(src_desc.sizes, dtype=np.int64), s_in, s_out,
                             block, crd)

    def _resample(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        k = _kernels()
        spec = ops.get(call.operator)
        src_desc, dst_desc = call.tensors["InputTensor"], call.tensors["OutputTensor"]
        axes = spec.axes(call, src_desc.sizes)
        pad = 4 - len(axes)
        sizes_out, s_out = _four(dst_desc.sizes, dst_desc.element_strides)
        _, s_in = _four(src_desc.sizes, src_desc.element_strides)
        if call.attributes["InterpolationMode"] == "NEAREST_NEIGHBOR":
            index = [np.zeros(1, np.int64)] * pad + [nearest_index(c) for c, _ in axes]
            bits = src_desc.data_type.bits_dtype
            k.nearest(element_view(src_desc, bindings["InputTensor"], bits),
                      element_view(dst_desc, bindings["OutputTensor"], bits),
                      sizes_out, s_in, s_out, *index)
            return
        longest = int(sizes_out.max())
        lo = np.zeros((4, longest), np.int64)
        hi = np.zeros((4, longest), np.int64)
        wt = np.zeros((4, longest), np.float32)
        for d, ((c, _), size) in enumerate(zip(axes, src_desc.sizes, strict=True)):
            i0, i1, t = linear_taps(c, size)
            lo[pad + d, :c.size], hi[pad + d, :c.size], wt[pad + d, :c.size] = i0, i1, t
        data_type = src_desc.data_type
        if data_type == DataType.FLOAT16:  # no float16 arithmetic here: widen around the kernel
            src = read_tensor(src_desc, bindings["InputTensor"]).astype(np.float32).ravel()
            _, s_in = _four(src_desc.sizes, packed_strides(src_desc.sizes))
            out = np.empty(int(np.prod(dst_desc.sizes)), np.float32)
            _, packed_out = _four(dst_desc.sizes, packed_strides(dst_desc.sizes))
            k.linear(src, out, sizes_out, s_in, packed_out, lo, hi, wt, False, 0.0, 0.0)
            write_tensor(dst_desc, bindings["OutputTensor"],
                         out.reshape(dst_desc.sizes).astype(np.float16))
            return
        dtype = data_type.numpy_dtype
        src = element_view(src_desc, bindings["InputTensor"], dtype)
        dst = element_view(dst_desc, bindings["OutputTensor"], dtype)
        integer = not data_type.is_float
        low, high = (np.iinfo(dtype).min, np.iinfo(dtype).max) if integer else (0, 0)
        k.linear(src, dst, sizes_out, s_in, s_out, lo, hi, wt, integer, np.float32(low),
                 np.float32(high))
