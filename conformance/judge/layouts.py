"""Misreadings of DML_BUFFER_TENSOR_DESC, for every operator.

Each reading is an implementation that is right about the operator and wrong about where the
elements of a buffer live: it addresses every tensor through the byte strides it believes in,
reads the inputs there, runs the operator spec's own reference, and writes the outputs there.
Where the believed addresses run past the bound buffer, reads give 0 and writes are dropped, as
robust buffer access does on a GPU; nothing outside the binding is touched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from math import prod

import numpy as np

from conformance import ops
from conformance.kit.misreading import Misreading, Run
from conformance.ops import OperatorCall
from conformance.spec import Citation
from conformance.tensors import DataType, TensorDesc, packed_strides

#: desc -> the strides, in bytes, the implementation addresses it with.
Believed = Callable[[TensorDesc], tuple[int, ...]]


def _bytes(desc: TensorDesc, element_strides: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(s * desc.data_type.size for s in element_strides)


def _view(desc: TensorDesc, image: np.ndarray, byte_strides: tuple[int, ...]) -> np.ndarray:
    return np.ndarray(desc.sizes, dtype=desc.data_type.bits_dtype, buffer=image,
                      strides=byte_strides)


def _image(desc: TensorDesc, buffer: np.ndarray, byte_strides: tuple[int, ...]) -> np.ndarray:
    """A copy of the buffer, zero-extended to every byte the believed strides reach."""
    reach = sum((n - 1) * s for n, s in zip(desc.sizes, byte_strides, strict=True))
    image = np.zeros(max(buffer.size, reach + desc.data_type.size), dtype=np.uint8)
    image[:buffer.size] = buffer
    return image


def _misaddressed(believed: Believed) -> Run:
    def run(call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        spec = ops.get(call.operator)
        inputs = {}
        for name in spec.inputs:
            desc, strides = call.tensors[name], believed(call.tensors[name])
            bits = _view(desc, _image(desc, bindings[name], strides), strides).copy()
            inputs[name] = bits.view(desc.data_type.numpy_dtype)
        for name, values in spec.reference(call, inputs).items():
            desc, strides, buffer = call.tensors[name], believed(call.tensors[name]), \
                bindings[name]
            image = _image(desc, buffer, strides)
            _view(desc, image, strides)[...] = values.view(desc.data_type.bits_dtype)
            buffer[:] = image[:buffer.size]
    return run


def _any(test: Callable[[TensorDesc], bool]) -> Callable[[OperatorCall], bool]:
    return lambda call: any(test(d) for d in call.tensors.values())


def _spans(desc: TensorDesc) -> list[tuple[int, int]]:
    """(size, stride) of the dimensions that hold more than one element."""
    return [(n, s) for n, s in zip(desc.sizes, desc.element_strides, strict=True) if n > 1]


# -- the believed strides -----------------------------------------------------------------------
def _packed(desc: TensorDesc) -> tuple[int, ...]:
    return _bytes(desc, packed_strides(desc.sizes))


def _in_bytes(desc: TensorDesc) -> tuple[int, ...]:
    return tuple(desc.element_strides) if desc.strides is not None else _packed(desc)


def _innermost_one(desc: TensorDesc) -> tuple[int, ...]:
    if desc.strides is None:
        return _packed(desc)
    return _bytes(desc, (*desc.strides[:-1], 1))


def _has_zero_stride(desc: TensorDesc) -> bool:
    return any(s == 0 for _, s in _spans(desc))


def _zero_as_packed(desc: TensorDesc) -> tuple[int, ...]:
    return _packed(desc) if _has_zero_stride(desc) else _bytes(desc, desc.element_strides)


def _zero_as_one(desc: TensorDesc) -> tuple[int, ...]:
    return _bytes(desc, tuple(s or 1 for s in desc.element_strides))


def _column_major(desc: TensorDesc) -> tuple[int, ...]:
    if desc.strides is not None:
        return _bytes(desc, desc.strides)
    return _bytes(desc, tuple(reversed(packed_strides(tuple(reversed(desc.sizes))))))


def _reversed_strides(desc: TensorDesc) -> tuple[int, ...]:
    if desc.strides is None:
        return _packed(desc)
    return _bytes(desc, tuple(reversed(desc.strides)))


def _row_pitch(desc: TensorDesc) -> int:
    """The row length a reader of TotalTensorSizeInBytes as 'rows times a pitch' takes."""
    rows = prod(desc.sizes[:-1])
    return (desc.total_size // desc.data_type.size) // rows


def _pitch_from_total(desc: TensorDesc) -> tuple[int, ...]:
    if desc.strides is not None:
        return _bytes(desc, desc.strides)
    pitch = _row_pitch(desc)
    return _bytes(desc, tuple(s // desc.sizes[-1] * pitch if i < len(desc.sizes) - 1 else 1
                              for i, s in enumerate(packed_strides(desc.sizes))))


_BUFFER = "DML_BUFFER_TENSOR_DESC"
_WIDE = frozenset(t for t in DataType if t.size > 1)
_ALL = frozenset(ops.OPERATORS)

MISREADINGS = (
    Misreading(
        key="strides-ignored",
        reading="every tensor read and written as packed (row-major), its Strides ignored",
        operators=_ALL,
        contradicts=Citation(_BUFFER, "Strides (padding, broadcasting and other layouts are "
                                      "expressed by Strides)"),
        run=_misaddressed(_packed),
        applies=_any(lambda d: d.is_strided)),
    Misreading(
        key="strides-in-bytes",
        reading="Strides taken as byte distances instead of element counts",
        operators=_ALL,
        contradicts=Citation(_BUFFER, "Strides (\"the number of elements (not bytes)\")"),
        run=_misaddressed(_in_bytes),
        data_types=_WIDE,
        applies=_any(lambda d: d.strides is not None and d.data_type.size > 1
                     and any(s for _, s in _spans(d)))),
    Misreading(
        key="innermost-stride-one",
        reading="the last dimension assumed contiguous (its stride taken as 1)",
        operators=_ALL,
        contradicts=Citation("dml-strides", "DirectML buffer tensor descriptions (Packed NHWC: "
                                            "W-stride = C-size)"),
        run=_misaddressed(_innermost_one),
        applies=_any(lambda d: d.strides is not None and d.sizes[-1] > 1
                     and d.strides[-1] != 1)),
    Misreading(
        key="stride-zero-as-packed",
        reading="a broadcast (stride 0) tensor read as packed, its Strides dropped",
        operators=_ALL,
        contradicts=Citation("dml-strides", "Broadcasting with strides (a stride of 0 repeats "
                                            "the lower-order dimensions)"),
        run=_misaddressed(_zero_as_packed),
        applies=_any(_has_zero_stride)),
    Misreading(
        key="stride-zero-as-one",
        reading="a stride of 0 (broadcast) taken as 1",
        operators=_ALL,
        contradicts=Citation("dml-strides", "Broadcasting with strides (a stride of 0 repeats "
                                            "the lower-order dimensions)"),
        run=_misaddressed(_zero_as_one),
        applies=_any(_has_zero_stride)),
    Misreading(
        key="packed-column-major",
        reading="a tensor without Strides taken as packed with the first dimension fastest "
                "(column-major) instead of the last",
        operators=_ALL,
        contradicts=Citation("dml-strides", "Higher dimensions (the packed stride of a "
                                            "dimension is the product of the sizes of the "
                                            "lower-order dimensions)"),
        run=_misaddressed(_column_major),
        applies=_any(lambda d: d.strides is None and sum(n > 1 for n in d.sizes) > 1)),
    Misreading(
        key="strides-reversed",
        reading="the Strides array read in reverse dimension order ({W, H, C, N} for "
                "{N, C, H, W})",
        operators=_ALL,
        contradicts=Citation(_BUFFER, "Strides (\"always specified in the order {N, C, H, W}\")"),
        run=_misaddressed(_reversed_strides),
        applies=_any(lambda d: d.strides is not None
                     and tuple(reversed(d.strides)) != tuple(d.strides))),
    Misreading(
        key="pitch-from-total-size",
        reading="the row pitch of a tensor without Strides taken from TotalTensorSizeInBytes "
                "(the bytes beyond the minimum read as row padding)",
        operators=_ALL,
        contradicts=Citation(_BUFFER, "Strides (\"If Strides is not specified, each dimension "
                                      "in the tensor is considered to be contiguously packed, "
                                      "with no additional padding\")"),
        run=_misaddressed(_pitch_from_total),
        applies=_any(lambda d: d.strides is None and len(d.sizes) > 1
                     and prod(d.sizes[:-1]) > 1 and _row_pitch(d) != d.sizes[-1])),
)
