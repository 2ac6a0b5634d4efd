"""DirectML buffer tensors: data types, DML_BUFFER_TENSOR_DESC, sizes and strides.

Facts and their sources:
- DML_TENSOR_DATA_TYPE values: DirectML.h (docs/spec-notes.md §1).
- DMLCalcBufferTensorSize: the helper-functions page (dml-helper-functions), spec-notes §2.
- Validation rules: the DML_BUFFER_TENSOR_DESC page, spec-notes §2.
- Strides, packed strides, broadcasting and padding: the dml-strides page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property
from itertools import combinations
from math import gcd, prod
from typing import Any

import numpy as np

from conformance.spec import Citation, Violation

DESC_PAGE = "DML_BUFFER_TENSOR_DESC"
MAX_ELEMENTS = 2**32 - 1
#: DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT (directml-constants): bound buffers start 16-aligned.
MINIMUM_BUFFER_TENSOR_ALIGNMENT = 16
#: The largest buffer the harness materialises (a rejected desc may describe a huge tensor):
#: the session's runner binds nothing larger, and a backend that must refuse what cannot be
#: bound (DxDispatch) refuses the same.
MAX_BUFFER_BYTES = 1 << 30


class DataType(IntEnum):
    """DML_TENSOR_DATA_TYPE (DirectML.h values, spec-notes §1). UNKNOWN is never valid."""

    FLOAT32 = 1
    FLOAT16 = 2
    UINT32 = 3
    UINT16 = 4
    UINT8 = 5
    INT32 = 6
    INT16 = 7
    INT8 = 8
    FLOAT64 = 9
    UINT64 = 10
    INT64 = 11

    @property
    def numpy_dtype(self) -> np.dtype:
        """The little-endian NumPy dtype with the same bit layout."""
        return _DTYPES[self]

    @property
    def size(self) -> int:
        """Element size in bytes, as DMLCalcBufferTensorSize's switch gives it."""
        return _DTYPES[self].itemsize

    @property
    def bits_dtype(self) -> np.dtype:
        """The unsigned integer dtype of the same width: compares and moves exact bit patterns."""
        return _BITS[self]

    @property
    def is_float(self) -> bool:
        return self in (DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT64)

    @classmethod
    def parse(cls, text: str | int) -> DataType:
        if isinstance(text, int) and not isinstance(text, bool):
            return cls(text)
        name = str(text).upper().removeprefix("DML_TENSOR_DATA_TYPE_")
        try:
            return cls[name]
        except KeyError:
            known = ", ".join(t.name for t in cls)
            raise ValueError(f"unknown DataType {text!r}; known: {known}") from None


_NUMPY = {
    DataType.FLOAT32: "<f4",
    DataType.FLOAT16: "<f2",
    DataType.UINT32: "<u4",
    DataType.UINT16: "<u2",
    DataType.UINT8: "u1",
    DataType.INT32: "<i4",
    DataType.INT16: "<i2",
    DataType.INT8: "i1",
    DataType.FLOAT64: "<f8",
    DataType.UINT64: "<u8",
    DataType.INT64: "<i8",
}
#: The dtypes made once (asked for every tensor of every case).
_DTYPES = {t: np.dtype(code) for t, code in _NUMPY.items()}
_BITS = {t: np.dtype(f"<u{d.itemsize}") for t, d in _DTYPES.items()}


def packed_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """The packed stride of a dimension is the product of the sizes of the lower-order
    dimensions (dml-strides § Higher dimensions)."""
    strides = []
    step = 1
    for size in reversed(sizes):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def calc_buffer_tensor_size(
    data_type: DataType, sizes: Sequence[int], strides: Sequence[int] | None = None
) -> int:
    """DMLCalcBufferTensorSize, exactly as the helper-functions page lists it.

    Without strides the product of the sizes; with strides 1 + dot(Sizes - 1, Strides); times
    the element size, rounded up to a multiple of 4 bytes (spec-notes §2).
    """
    if strides is None:
        count = prod(sizes)
    else:
        count = 1 + sum((size - 1) * stride for size, stride in zip(sizes, strides, strict=True))
    return (count * DataType(data_type).size + 3) & ~3


@dataclass(frozen=True)
class TensorDesc:
    """DML_BUFFER_TENSOR_DESC. Strides None means packed; TotalTensorSizeInBytes None means the
    minimum (DMLCalcBufferTensorSize). A desc may be invalid: validate_desc says why. Immutable:
    the sizes derived from its fields are worked out once (cached_property), since the runner,
    the validators and the backends ask for them on every call."""

    data_type: DataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    total_tensor_size_in_bytes: int | None = None
    guaranteed_base_offset_alignment: int = 0

    @property
    def dimension_count(self) -> int:
        return len(self.sizes)

    @cached_property
    def element_strides(self) -> tuple[int, ...]:
        """The strides in elements that address the buffer (packed when Strides is omitted)."""
        return self.strides if self.strides is not None else packed_strides(self.sizes)

    @cached_property
    def minimum_size(self) -> int:
        return calc_buffer_tensor_size(self.data_type, self.sizes, self.strides)

    @cached_property
    def total_size(self) -> int:
        """TotalTensorSizeInBytes as bound: the stated value, or the minimum when omitted."""
        if self.total_tensor_size_in_bytes is not None:
            return self.total_tensor_size_in_bytes
        return self.minimum_size

    @cached_property
    def element_count(self) -> int:
        return prod(self.sizes)

    @cached_property
    def is_strided(self) -> bool:
        """True when the strides are stated and differ from the packed ones (padding,
        broadcasting or another dimension order)."""
        return self.strides is not None and tuple(self.strides) != packed_strides(self.sizes)

    @property
    def is_packed(self) -> bool:
        """Packed in the spec's sense (dml-strides § Packed tensors): the buffer holds exactly
        as many elements as the tensor and each element has its own offset. Any dimension
        order can be packed (row-major, column-major, NHWC)."""
        strides = self.element_strides
        if 1 + sum((n - 1) * s for n, s in zip(self.sizes, strides, strict=True)) != prod(
                self.sizes):
            return False
        return find_shared_address(self.sizes, strides) is None

    def offset_of(self, index: Sequence[int]) -> int:
        """Element offset of a logical index: the dot product of index and strides
        (dml-strides § Higher dimensions: the 'H' element example)."""
        return sum(i * s for i, s in zip(index, self.element_strides, strict=True))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"DataType": self.data_type.name, "Sizes": list(self.sizes)}
        if self.strides is not None:
            out["Strides"] = list(self.strides)
        if self.total_tensor_size_in_bytes is not None:
            out["TotalTensorSizeInBytes"] = self.total_tensor_size_in_bytes
        if self.guaranteed_base_offset_alignment:
            out["GuaranteedBaseOffsetAlignment"] = self.guaranteed_base_offset_alignment
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> TensorDesc:
        strides = obj.get("Strides")
        return cls(
            data_type=DataType.parse(obj["DataType"]),
            sizes=tuple(int(s) for s in obj["Sizes"]),
            strides=None if strides is None else tuple(int(s) for s in strides),
            total_tensor_size_in_bytes=None if obj.get("TotalTensorSizeInBytes") is None
            else int(obj["TotalTensorSizeInBytes"]),  # an int even where the file says 8.0
            guaranteed_base_offset_alignment=int(obj.get("GuaranteedBaseOffsetAlignment", 0)),
        )


def _cite(section: str) -> Citation:
    return Citation(DESC_PAGE, section)


def validate_desc(
    desc: TensorDesc, name: str, dimension_counts: Sequence[int], *, is_output: bool
) -> list[Violation]:
    """Check one desc against the DML_BUFFER_TENSOR_DESC rules. One violation per broken rule.

    dimension_counts: the counts the operator takes for this tensor at the feature level.
    """
    out: list[Violation] = []
    n = desc.dimension_count
    if n not in dimension_counts:
        allowed = ", ".join(str(c) for c in sorted(dimension_counts))
        out.append(Violation(
            "desc.dimension_count",
            f"{name} has {n} dimensions; the operator takes {allowed} here",
            _cite("DimensionCount")))
    if any(size == 0 for size in desc.sizes):
        out.append(Violation(
            "desc.zero_size",
            f"{name} Sizes {list(desc.sizes)} contain a zero; a size of zero in any dimension "
            "is invalid",
            _cite("Sizes")))
    if desc.strides is not None and len(desc.strides) != n:
        out.append(Violation(
            "desc.strides_count",
            f"{name} has {len(desc.strides)} Strides for {n} Sizes; DimensionCount sets both",
            _cite("DimensionCount")))
        return out  # the size rules below need matching strides
    if desc.element_count > MAX_ELEMENTS:
        out.append(Violation(
            "desc.too_many_elements",
            f"{name} has {desc.element_count} elements; a buffer tensor may not exceed "
            "2^32 - 1 elements",
            _cite("TotalTensorSizeInBytes")))
    minimum = desc.minimum_size
    total = desc.total_size
    if total < minimum:
        out.append(Violation(
            "desc.total_size_below_minimum",
            f"{name} TotalTensorSizeInBytes {total} is below the minimum implied size {minimum} "
            "(DMLCalcBufferTensorSize)",
            _cite("TotalTensorSizeInBytes")))
    if total % 4:
        out.append(Violation(
            "desc.total_size_not_dword_multiple",
            f"{name} TotalTensorSizeInBytes {total} is not a multiple of 4; bound buffers must be "
            "DWORD-aligned in size",
            Citation("dml-helper-functions", "DMLCalcBufferTensorSize")))
    align = desc.guaranteed_base_offset_alignment
    if align != 0 and (align & (align - 1) or align < desc.data_type.size):
        out.append(Violation(
            "desc.alignment",
            f"{name} GuaranteedBaseOffsetAlignment {align} must be 0 or a power of two at least "
            f"the element size {desc.data_type.size}",
            _cite("GuaranteedBaseOffsetAlignment")))
    if is_output and desc.strides is not None and not any(s == 0 for s in desc.sizes):
        clash = find_shared_address(desc.sizes, desc.strides)
        if clash is not None:
            a, b = clash
            out.append(Violation(
                "desc.output_overlap",
                f"{name} Strides {list(desc.strides)} map output elements {list(a)} and "
                f"{list(b)} to the same address; an output's elements must be distinct "
                "(reading of spec-notes §2: a packed or padded output has unique offsets)",
                Citation("dml-strides", "Packed tensors")))
    return out


#: Beyond this many elements the exact overlap search is replaced by the sufficient test alone.
_EXACT_OVERLAP_LIMIT = 1 << 22


def find_shared_address(
    sizes: Sequence[int], strides: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Two distinct logical indices with the same element offset, or None if all are distinct.

    Fast path: with dimensions sorted by stride, if every stride exceeds the largest offset the
    smaller-stride dimensions reach, offsets are unique. Otherwise the offsets are enumerated,
    which is exact, up to _EXACT_OVERLAP_LIMIT elements. Beyond that, clashes between two
    dimensions are found exactly (a * s_i == b * s_j with a < n_i, b < n_j), and clashes that
    need three or more dimensions are searched among the leading indices only (bounded work).
    """
    dims = [(st, sz) for st, sz in zip(strides, sizes, strict=True) if sz > 1]
    reach = 0
    for stride, size in sorted(dims):
        if stride <= reach:
            break
        reach += (size - 1) * stride
    else:
        return None
    if prod(sizes) <= _EXACT_OVERLAP_LIMIT:
        return _enumerate_clash(sizes, strides)
    for i, j in combinations(range(len(sizes)), 2):
        si, sj = strides[i], strides[j]
        if sizes[i] < 2 or sizes[j] < 2:
            continue
        if si == 0 or sj == 0:  # a broadcast dimension: index 0 and 1 share an address
            k = i if si == 0 else j
            return _pair(len(sizes), {}, {k: 1})
        g = gcd(si, sj)
        a, b = sj // g, si // g  # a * si == b * sj, the smallest such step
        if a < sizes[i] and b < sizes[j]:
            return _pair(len(sizes), {i: a}, {j: b})
    capped = list(sizes)
    while prod(capped) > _EXACT_OVERLAP_LIMIT:
        k = capped.index(max(capped))
        capped[k] = max(2, capped[k] // 2)
    return _enumerate_clash(capped, strides)


def _pair(n: int, a: dict[int, int], b: dict[int, int]
          ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return (tuple(a.get(k, 0) for k in range(n)), tuple(b.get(k, 0) for k in range(n)))


def element_offsets(sizes: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """The element offset of every logical index, in row-major order (a flat int64 array)."""
    offsets = np.zeros(1, dtype=np.int64)
    for size, stride in zip(sizes, strides, strict=True):
        offsets = (offsets[:, None] + np.arange(size, dtype=np.int64)[None, :] * stride).ravel()
    return offsets


def sharers(desc: TensorDesc) -> np.ndarray | None:
    """For each logical element (row-major), the flat indices of every logical element at its
    address, as an (elements, K) array (a smaller group repeats its last member); None where
    every element has an address of its own."""
    flat = element_offsets(desc.sizes, desc.element_strides)
    order = np.argsort(flat, kind="stable")
    starts = np.r_[True, flat[order][1:] != flat[order][:-1]]
    group = np.empty_like(order)
    group[order] = np.cumsum(starts) - 1
    counts = np.bincount(group)
    widest = int(counts.max())
    if widest == 1:
        return None
    first = np.flatnonzero(starts)[group]
    step = np.minimum(np.arange(widest)[None, :], (counts[group] - 1)[:, None])
    return order[first[:, None] + step]


def _enumerate_clash(sizes: Sequence[int], strides: Sequence[int]
                     ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    offsets = element_offsets(sizes, strides)
    order = np.argsort(offsets, kind="stable")
    same = np.nonzero(offsets[order][1:] == offsets[order][:-1])[0]
    if same.size == 0:
        return None
    first, second = order[same[0]], order[same[0] + 1]
    return (
        tuple(int(i) for i in np.unravel_index(first, sizes)),
        tuple(int(i) for i in np.unravel_index(second, sizes)),
    )


def strided_view(desc: TensorDesc, buffer: np.ndarray) -> np.ndarray:
    """A NumPy view of the logical tensor inside a byte buffer, through the desc's strides.

    buffer: 1-D uint8 array holding at least TotalTensorSizeInBytes bytes. The view aliases the
    buffer: reading it reads the bound bytes, assigning to it writes them.
    """
    dtype = desc.data_type.numpy_dtype
    byte_strides = tuple(s * dtype.itemsize for s in desc.element_strides)
    return np.ndarray(desc.sizes, dtype=dtype, buffer=buffer, offset=0, strides=byte_strides)


def read_tensor(desc: TensorDesc, buffer: np.ndarray) -> np.ndarray:
    """The logical tensor read out of a byte buffer through strides (a packed copy)."""
    return strided_view(desc, buffer).copy()


def write_tensor(desc: TensorDesc, buffer: np.ndarray, values: np.ndarray) -> None:
    """Write a logical tensor into a byte buffer through strides, bits unchanged. Only the
    logical elements' bytes are written; padding is left as it is."""
    view = strided_view(desc, buffer)
    bits = desc.data_type.bits_dtype
    view.view(bits)[...] = np.asarray(values, dtype=desc.data_type.numpy_dtype).view(bits)


def footprint_mask(desc: TensorDesc, size: int | None = None) -> np.ndarray:
    """Boolean mask over the buffer's bytes: True where a logical element lives."""
    mask = np.zeros(desc.total_size if size is None else size, dtype=np.uint8)
    view = strided_view(desc, mask)
    view.view(desc.data_type.bits_dtype)[...] = np.iinfo(desc.data_type.bits_dtype).max
    return mask.astype(bool)
