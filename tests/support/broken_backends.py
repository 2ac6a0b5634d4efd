"""Deliberately broken backends: TEST DOUBLES ONLY, never implementations to certify.

Each class below is the NumPy reference backend with exactly one fault built in, so that a test
can run it through the runner (or `dmlconf run --backend tests/support/broken_backends.py:Class`)
and check that the fault is caught with the right status and a message a reader understands:

- OverrunBackend          writes a few bytes past the end of its output buffer  -> FAIL (guard)
- InputWriterBackend      changes a byte of its input buffer                     -> FAIL (input)
- RaisingBackend          raises RuntimeError in execute                         -> ERROR
- AcceptAllBackend        validates nothing: every desc is accepted              -> FAIL on
                          the cases that must be rejected
- SwappedOrderBackend     runs DEPTH_COLUMN_ROW as COLUMN_ROW_DEPTH and back     -> FAIL
- UnwrittenElementBackend leaves one output element as it found it               -> FAIL
- PaddingWriterBackend    also writes the output's padding bytes inside
                          TotalTensorSizeInBytes: LEGAL (spec-notes §2)          -> PASS + info
- RejectAllBackend        raises DescRejected for every desc                     -> FAIL on
                          valid cases, PASS on the cases that must be rejected
- LateRejectBackend       accepts at create_operator, validates at execute: not broken, the
                          other place a rejection is allowed                     -> PASS
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import ClassVar

import numpy as np

from backends.numpy_reference import NumpyReferenceBackend
from conformance import ops
from conformance.backend import DescRejected
from conformance.ops import OperatorCall
from conformance.tensors import footprint_mask, read_tensor, strided_view, write_tensor

#: The byte the broken backends write where they must not (differs from every fill and guard
#: byte the runner uses: 0xA5, 0x5A, 0xCD, 0x32).
BAD_BYTE = 0xEE


def _offset_in_base(buffer: np.ndarray) -> tuple[np.ndarray, int]:
    """The array a bound buffer is a view of, and where the buffer starts inside it."""
    base = buffer.base
    if not isinstance(base, np.ndarray) or base.ndim != 1 or base.dtype != np.uint8:
        raise AssertionError("test double: the bound buffer is not a view of a byte array")
    return base, buffer.ctypes.data - base.ctypes.data


class OverrunBackend(NumpyReferenceBackend):
    """Correct outputs, then OVERRUN bytes written just past the end of OutputTensor's buffer
    (through the buffer's .base array): an out-of-bounds write the guard bytes must catch."""

    name = "broken-overrun"
    OVERRUN = 3

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super().execute(call, bindings)
        out = bindings["OutputTensor"]
        base, start = _offset_in_base(out)
        end = start + out.size
        base[end:end + self.OVERRUN] = BAD_BYTE


class InputWriterBackend(NumpyReferenceBackend):
    """Correct outputs, then byte 0 of InputTensor's buffer flipped: inputs are read-only."""

    name = "broken-input-writer"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super().execute(call, bindings)
        bindings["InputTensor"][0] ^= 0xFF


class RaisingBackend(NumpyReferenceBackend):
    """Accepts valid descs, then crashes in execute with a RuntimeError."""

    name = "broken-raising"
    MESSAGE = "simulated device removal"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        raise RuntimeError(self.MESSAGE)


class AcceptAllBackend(NumpyReferenceBackend):
    """No validation at all: create_operator and execute accept every desc. On a desc the
    reference cannot compute (an invalid one) execute writes nothing, like a driver that
    silently skips the dispatch. Its capabilities still claim rejects_invalid."""

    name = "broken-accept-all"

    def create_operator(self, call: OperatorCall) -> None:
        return None

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        spec = ops.get(call.operator)
        try:
            inputs = {n: read_tensor(call.tensors[n], bindings[n]) for n in spec.inputs}
            outputs = spec.reference(call, inputs)
            for name, values in outputs.items():
                write_tensor(call.tensors[name], bindings[name], values)
        except Exception:  # the fault being modelled: no error raised, no output written
            return


class SwappedOrderBackend(NumpyReferenceBackend):
    """DEPTH_TO_SPACE1 / SPACE_TO_DEPTH1 with the two DML_DEPTH_SPACE_ORDER values swapped
    (DEPTH_COLUMN_ROW run as COLUMN_ROW_DEPTH and back). Invisible with BlockSize 1 or one
    output channel; wrong otherwise."""

    name = "broken-swapped-order"
    SWAP: ClassVar[dict[str, str]] = {"DEPTH_COLUMN_ROW": "COLUMN_ROW_DEPTH",
                                      "COLUMN_ROW_DEPTH": "DEPTH_COLUMN_ROW"}

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        order = call.attributes.get("Order")
        if order in self.SWAP:
            call = replace(call, attributes={**call.attributes, "Order": self.SWAP[order]})
        super().execute(call, bindings)


class UnwrittenElementBackend(NumpyReferenceBackend):
    """Correct outputs except one element of OutputTensor, left holding whatever bytes were
    there before execute (the runner's fill pattern). SKIP is its flat index in the logical
    (C-order) tensor; subclasses move it."""

    name = "broken-unwritten"
    SKIP = 0

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        desc = call.tensors["OutputTensor"]
        buffer = bindings["OutputTensor"]
        before = read_tensor(desc, buffer)
        super().execute(call, bindings)
        index = np.unravel_index(self.SKIP, desc.sizes)
        strided_view(desc, buffer)[index] = before[index]


class PaddingWriterBackend(NumpyReferenceBackend):
    """Correct outputs, then BAD_BYTE in every byte of OutputTensor's buffer that holds no
    logical element (stride padding, the round-up to 4 bytes). LEGAL: a DirectML operator may
    write anywhere inside TotalTensorSizeInBytes (spec-notes §2); the runner notes it in `info`
    and still PASSes the case."""

    name = "padding-writer"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super().execute(call, bindings)
        desc = call.tensors["OutputTensor"]
        buffer = bindings["OutputTensor"]
        buffer[~footprint_mask(desc, buffer.size)] = BAD_BYTE


class RejectAllBackend(NumpyReferenceBackend):
    """Raises DescRejected for every desc, valid or not, at create_operator and at execute."""

    name = "broken-reject-all"
    MESSAGE = "E_INVALIDARG (rejects everything)"

    def create_operator(self, call: OperatorCall) -> None:
        raise DescRejected(self.MESSAGE)

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        raise DescRejected(self.MESSAGE)


class LateRejectBackend(NumpyReferenceBackend):
    """Accepts every desc at create_operator and refuses invalid ones in execute. A backend
    may refuse in either step (conformance/backend.py), except descs whose buffers cannot be
    bound at all (a Strides count that differs from Sizes, a tensor too large to allocate):
    those must be refused at create_operator, so this backend fails the invalid family's
    strides-count and too-many-elements cases."""

    name = "late-reject"

    def create_operator(self, call: OperatorCall) -> None:
        return None

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super().create_operator(call)
        super().execute(call, bindings)
