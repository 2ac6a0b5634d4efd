"""Misreadings of DEPTH_TO_SPACE, DEPTH_TO_SPACE1, SPACE_TO_DEPTH and SPACE_TO_DEPTH1.

Each reading runs through the operator spec's own reference (conformance.ops.depth_space) with
a patched attribute, on transposed or reshaped views of the input, on the spec's own source map
(the reference run on an index tensor) with the block arithmetic misread, or with the
reference's output moved through a wrong number format. None copies the reference.

The operators are pure data movement: every output element is a bit-exact copy of one input
element (NOTES §3), so every reading below is judged bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from math import prod
from typing import Any, cast

import numpy as np

from conformance import ops
from conformance.kit.misreading import Misreading, Run
from conformance.kit.rejection import DescRejected
from conformance.ops import OperatorCall
from conformance.ops.depth_space.pages import DEPTH_TO_SPACE1, ORDER_PAGE
from conformance.ops.depth_space.spec import DepthSpaceFamily
from conformance.spec import Citation
from conformance.tensors import DataType, read_tensor, write_tensor

DEPTH_TO_SPACE = frozenset({"DEPTH_TO_SPACE", "DEPTH_TO_SPACE1"})
SPACE_TO_DEPTH = frozenset({"SPACE_TO_DEPTH", "SPACE_TO_DEPTH1"})
ALL = DEPTH_TO_SPACE | SPACE_TO_DEPTH
ORDERED = frozenset({"DEPTH_TO_SPACE1", "SPACE_TO_DEPTH1"})
ORIGINAL = ALL - ORDERED
OTHER_ORDER = {"DEPTH_COLUMN_ROW": "COLUMN_ROW_DEPTH", "COLUMN_ROW_DEPTH": "DEPTH_COLUMN_ROW"}
FLOATS = frozenset({DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT64})

Outputs = dict[str, np.ndarray]
Compute = Callable[[OperatorCall, Mapping[str, np.ndarray]], Outputs]


# -- helpers --------------------------------------------------------------------------------------
def _logical(compute: Compute) -> Run:
    """A Run that reads the inputs through their true strides, computes the logical outputs
    with `compute`, and writes them through the true strides (the reading is of the operator,
    not of the layout)."""
    def run(call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        spec = ops.get(call.operator)
        inputs = {n: read_tensor(call.tensors[n], bindings[n]) for n in spec.inputs}
        for name, values in compute(call, inputs).items():
            write_tensor(call.tensors[name], bindings[name], values)
    return run


def _reference(call: OperatorCall, inputs: Mapping[str, np.ndarray]) -> Outputs:
    return ops.get(call.operator).reference(call, inputs)


def _with(call: OperatorCall, **attributes: Any) -> OperatorCall:
    return replace(call, attributes={**call.attributes, **attributes})


def _block(call: OperatorCall) -> int:
    return int(call.attributes["BlockSize"])


def _space_channels(call: OperatorCall) -> int:
    """The channel count of the space form (C / b^2 of the depth form)."""
    name = "OutputTensor" if call.operator in DEPTH_TO_SPACE else "InputTensor"
    return call.tensors[name].sizes[1]


def _input_plane(call: OperatorCall) -> tuple[int, int]:
    sizes = call.tensors["InputTensor"].sizes
    return sizes[-2], sizes[-1]


def _orders_differ(call: OperatorCall) -> bool:
    """DEPTH_COLUMN_ROW and COLUMN_ROW_DEPTH agree when BlockSize is 1 or the space form has one
    channel (both flatten (block, channel) pairs of which one side has a single value)."""
    return _block(call) > 1 and _space_channels(call) > 1


def _source_map(call: OperatorCall, shape: tuple[int, ...]) -> np.ndarray:
    """The flat input index each output element copies, by the spec: the reference run on an
    index tensor (the reference moves any dtype's bits)."""
    index = np.arange(prod(shape), dtype=np.int64).reshape(shape)
    return _reference(call, {"InputTensor": index})["OutputTensor"]


def _gather(x: np.ndarray, index: tuple[Any, ...]) -> np.ndarray:
    """x at the given multi-indices (an index array per axis); an index outside x reads 0
    (robust buffer access)."""
    valid = np.ones(index[0].shape, dtype=bool)
    for i, size in zip(index, x.shape, strict=True):
        valid &= (i >= 0) & (i < size)
    out = np.zeros(index[0].shape, dtype=x.dtype)
    out.view(f"<u{x.dtype.itemsize}")[valid] = x.view(f"<u{x.dtype.itemsize}")[
        tuple(i[valid] for i in index)]
    return out


# -- the readings -------------------------------------------------------------------------------
def _other_order(call: OperatorCall, inputs: Mapping[str, np.ndarray]) -> Outputs:
    order = cast(DepthSpaceFamily, ops.get(call.operator)).order(call)
    return _reference(_with(call, Order=OTHER_ORDER[order]), inputs)


def _column_row_depth(call: OperatorCall, inputs: Mapping[str, np.ndarray]) -> Outputs:
    return _reference(_with(call, Order="COLUMN_ROW_DEPTH"), inputs)


def _transposed_block(call: OperatorCall, inputs: Mapping[str, np.ndarray]) -> Outputs:
    """Height and width swapped around the spec's operator: T(op(T(x))) with T exchanging the
    last two axes takes block row i and column j from the depth slot of (j, i), with every
    block and every element otherwise where the spec puts it."""
    x = inputs["InputTensor"].swapaxes(-1, -2)
    y = _reference(call, {"InputTensor": x})["OutputTensor"]
    return {"OutputTensor": np.ascontiguousarray(y.swapaxes(-1, -2))}


def _height_width_swapped(call: OperatorCall, inputs: Mapping[str, np.ndarray]) -> Outputs:
    """Height taken from Sizes[3] and width from Sizes[2], addressing the packed planes with
    those: each H x W plane is read as a W x H plane (the same memory, rows cut at the wrong
    length), and the output is written likewise."""
    x = inputs["InputTensor"]
    n, c, h, w = x.shape
    y = _reference(call, {"InputTensor": x.reshape(n, c, w, h)})["OutputTensor"]
    return {"OutputTensor": y.reshape(call.tensors["OutputTensor"].sizes)}


def _power_of_two_block(call: OperatorCall, inputs: Mapping[str, np.ndarray]) -> Outputs:
    """Block offsets and block indices computed with `& (b - 1)` for `% b` and
    `>> floor(log2 b)` for `// b`: exact for powers of two only. The depth slot of each block
    position is the spec's (read off its source map); rows and columns outside the input read
    0, as robust buffer access does."""
    x = inputs["InputTensor"]
    b = _block(call)
    mask, shift = b - 1, b.bit_length() - 1
    source = _source_map(call, x.shape)
    n, ch, yy, xx = np.indices(source.shape)
    if call.operator in DEPTH_TO_SPACE:
        # Output (n, c, y, x) reads depth slot (c, y % b, x % b) at row y // b, column x // b;
        # the spec's own output (n, c, i, j) for i, j < b names that slot's input channel.
        slot = np.unravel_index(source[n, ch, yy & mask, xx & mask], x.shape)[1]
        index = (n, slot, yy >> shift, xx >> shift)
    else:
        # Output (n, k, Y, X) reads input (n, c, Y*b + q // b, X*b + q % b), where the spec
        # gives channel c and block offset q = i*b + j for depth slot k (its element (n,k,0,0)).
        _, c, i, j = np.unravel_index(source[n, ch, 0, 0], x.shape)
        q = i * b + j
        index = (n, c, yy * b + (q >> shift), xx * b + (q & mask))
    return {"OutputTensor": _gather(x, index)}


def _saturate(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float values converted to an integer type as a GPU does: rounded values in range kept,
    values beyond the range saturated to its ends, NaN to 0."""
    info = np.iinfo(dtype)
    f = np.nan_to_num(values.astype(np.float64), nan=0.0)
    top = 2.0 ** (info.bits - (1 if info.min < 0 else 0))  # the first value beyond the range
    out = np.empty(f.shape, dtype=dtype)
    inside = (f >= info.min) & (f < top)
    out[inside] = f[inside].astype(dtype)
    out[f >= top] = info.max
    out[f < info.min] = info.min
    return out


def _through(dtype: str) -> Compute:
    """The spec's output moved through a float register of `dtype` and back."""
    def compute(call: OperatorCall, inputs: Mapping[str, np.ndarray]) -> Outputs:
        out = {}
        for name, values in _reference(call, inputs).items():
            with np.errstate(over="ignore", invalid="ignore"):
                wide = values.astype(dtype)
                out[name] = (wide.astype(values.dtype) if values.dtype.kind == "f"
                             else _saturate(wide, values.dtype))
        return out
    return compute


_QUIET = {2: 0x0200, 4: 0x0040_0000, 8: 0x0008_0000_0000_0000}
_CANONICAL = {2: 0x7E00, 4: 0x7FC0_0000, 8: 0x7FF8_0000_0000_0000}


def _float_bits(change: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Compute:
    """The spec's output with change(values, bits) applied to float outputs' bit patterns."""
    def compute(call: OperatorCall, inputs: Mapping[str, np.ndarray]) -> Outputs:
        out = {}
        for name, values in _reference(call, inputs).items():
            if values.dtype.kind == "f":
                bits = values.view(f"<u{values.dtype.itemsize}")
                values = change(values, bits.copy()).view(values.dtype)
            out[name] = values
        return out
    return compute


def _quieted(values: np.ndarray, bits: np.ndarray) -> np.ndarray:
    quiet = bits.dtype.type(_QUIET[values.dtype.itemsize])
    bits[np.isnan(values)] |= quiet
    return bits


def _canonical(values: np.ndarray, bits: np.ndarray) -> np.ndarray:
    bits[np.isnan(values)] = _CANONICAL[values.dtype.itemsize]
    return bits


def _flushed(values: np.ndarray, bits: np.ndarray) -> np.ndarray:
    tiny = np.finfo(values.dtype).smallest_normal
    with np.errstate(invalid="ignore"):
        subnormal = (values != 0) & (np.abs(values) < tiny)
    sign = bits.dtype.type(1 << (8 * values.dtype.itemsize - 1))
    bits[subnormal] &= sign
    return bits


def _rejects_by_depth_to_space_formula(call: OperatorCall,
                                       bindings: Mapping[str, np.ndarray]) -> None:
    """Validates OutputTensor against the formula the SPACE_TO_DEPTH(1) pages' member text
    states (the depth-to-space one), so rejects every valid desc with BlockSize > 1."""
    n, c, h, w = call.tensors["InputTensor"].sizes
    b = _block(call)
    want = [n, c // (b * b), h * b, w * b]
    if list(call.tensors["OutputTensor"].sizes) != want:
        raise DescRejected(f"OutputTensor Sizes {list(call.tensors['OutputTensor'].sizes)} "
                           f"differ from {want} = {{N, C / (B*B), H * B, W * B}}")
    _logical(_reference)(call, bindings)  # only reached with BlockSize 1: the spec's output


def _cite(page: str, section: str) -> Citation:
    return Citation(page, section)


MISREADINGS = (
    Misreading(
        key="other-order",
        reading="the other Order: DEPTH_COLUMN_ROW and COLUMN_ROW_DEPTH swapped",
        operators=ORDERED,
        contradicts=_cite(ORDER_PAGE,
                          "Constants (depth version: (BlockHeight, BlockWidth, Channels) for "
                          "DEPTH_COLUMN_ROW, (Channels, BlockHeight, BlockWidth) for "
                          "COLUMN_ROW_DEPTH)"),
        run=_logical(_other_order),
        applies=_orders_differ),
    Misreading(
        key="original-as-column-row-depth",
        reading="the COLUMN_ROW_DEPTH reading of an original operator, which is "
                "DEPTH_COLUMN_ROW (as torch's pixel_shuffle / pixel_unshuffle order)",
        operators=ORIGINAL,
        contradicts=_cite(DEPTH_TO_SPACE1,
                          "Remarks (with DEPTH_COLUMN_ROW the *1 operator is equivalent to the "
                          "original one)"),
        run=_logical(_column_row_depth),
        applies=_orders_differ),
    Misreading(
        key="transposed-block",
        reading="the block's row and column swapped: depth slot (x % b) * b + (y % b) "
                "for output row y and column x",
        operators=ALL,
        contradicts=_cite("NOTES", "3"),
        run=_logical(_transposed_block),
        applies=lambda call: _block(call) > 1),
    Misreading(
        key="power-of-two-block",
        reading="block arithmetic for powers of two only: % b computed as & (b - 1) and "
                "// b as >> floor(log2 b)",
        operators=ALL,
        contradicts=_cite("NOTES", "3"),
        run=_logical(_power_of_two_block),
        applies=lambda call: _block(call) & (_block(call) - 1) != 0),
    Misreading(
        key="height-width-swapped",
        reading="height and width swapped: Sizes[3] taken as the height and Sizes[2] as the "
                "width, each H x W plane addressed as a W x H one",
        operators=ALL,
        contradicts=_cite("dml-strides", "DirectML buffer tensor descriptions "
                          "(Sizes = { N-size, C-size, H-size, W-size })"),
        run=_logical(_height_width_swapped),
        applies=lambda call: _block(call) > 1 and _input_plane(call)[0] != _input_plane(call)[1]),
    Misreading(
        key="through-float32",
        reading="the values moved through float32 registers (integers beyond 2^24 and "
                "doubles rounded to float32's 24-bit significand; out-of-range saturated)",
        operators=ALL,
        contradicts=_cite("NOTES", "3"),
        run=_logical(_through("<f4")),
        data_types=frozenset({DataType.INT32, DataType.UINT32, DataType.INT64,
                              DataType.UINT64, DataType.FLOAT64})),
    Misreading(
        key="through-float64",
        reading="the values moved through float64 registers (64-bit integers beyond 2^53 "
                "rounded to 53 bits; out-of-range saturated)",
        operators=ALL,
        contradicts=_cite("NOTES", "3"),
        run=_logical(_through("<f8")),
        data_types=frozenset({DataType.INT64, DataType.UINT64})),
    Misreading(
        key="nan-quieted",
        reading="signalling NaNs quieted (the quiet bit set, payload kept), as moving float16 "
                "through float32 registers (F16C, GPU conversions) or float32 through float64 "
                "does",
        operators=ALL,
        contradicts=_cite("NOTES", "3"),
        run=_logical(_float_bits(_quieted)),
        data_types=FLOATS),
    Misreading(
        key="nan-canonical",
        reading="every NaN replaced by the canonical quiet NaN (sign and payload lost)",
        operators=ALL,
        contradicts=_cite("NOTES", "3"),
        run=_logical(_float_bits(_canonical)),
        data_types=FLOATS),
    Misreading(
        key="subnormals-flushed",
        reading="subnormal values flushed to zero of the same sign, as float arithmetic with "
                "denormals off does (a copy must not)",
        operators=ALL,
        contradicts=_cite("NOTES", "3"),
        run=_logical(_float_bits(_flushed)),
        data_types=FLOATS),
    Misreading(
        key="space-to-depth-output-formula",
        reading="the SPACE_TO_DEPTH output Sizes taken from the page's member text "
                "{N, C / (B*B), H * B, W * B} (a doc error): every valid desc with "
                "BlockSize > 1 rejected",
        operators=SPACE_TO_DEPTH,
        contradicts=_cite("NOTES", "3"),
        run=_rejects_by_depth_to_space_formula,
        applies=lambda call: _block(call) > 1),
)
