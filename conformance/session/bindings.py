"""A case's buffers as the harness binds them, and where the backend's calls run on them
(conformance.session.case_run materialises them for each case, CaseRun).

Each buffer lies between GUARD guard bytes, at an address aligned as its desc promises, and
counts WORKING_COPIES times against the memory cap. An Executor runs the backend's calls on
the bindings: InProcess, the backend's own methods in this process, or in an isolated run
conformance.session.worker_handle's RemoteBackend. What a run of a case's calls may end in:
CaseError (the case cannot run: ERROR), BindingError (a guard or an input byte changed: FAIL),
BackendError (the backend raised: ERROR).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from conformance.backend import Backend, DescRejected
from conformance.ops import OperatorCall
from conformance.tensors import (
    MAX_BUFFER_BYTES,
    MINIMUM_BUFFER_TENSOR_ALIGNMENT,
    TensorDesc,
    footprint_mask,
    read_tensor,
)

GUARD = 64  # bytes before and after every buffer
GUARD_BYTE = 0xA5
_GUARDS = bytes([GUARD_BYTE]) * GUARD
#: The harness holds about this many working copies of a case's buffers (the guarded
#: bindings, input snapshots, outputs read back, expected values): a case is run only when
#: that much fits the memory cap.
WORKING_COPIES = 4


class CaseError(Exception):
    """The case cannot be run as written (e.g. generated inputs drifted): an ERROR."""


@dataclass
class _Binding:
    desc: TensorDesc
    guarded: np.ndarray  # GUARD + total + GUARD bytes

    @property
    def buffer(self) -> np.ndarray:
        return self.guarded[GUARD:GUARD + self.desc.total_size]

    def guards_intact(self) -> bool:
        g = self.guarded
        return (g[:GUARD].tobytes() == _GUARDS
                and g[GUARD + self.desc.total_size:].tobytes() == _GUARDS)

    def read(self) -> np.ndarray:
        return read_tensor(self.desc, self.buffer)


class Executor(Protocol):
    """Where the backend's code runs, on bindings the harness owns: create_operator(call) is
    the backend's create_operator alone (IDMLDevice::CreateOperator); dispatch(call, bindings)
    is its create_operator then its execute on the bindings (one step for an executor in
    another process). The bindings' bytes (guards included) are the backend's to write during
    dispatch; the runner reads them only after dispatch returns."""

    def create_operator(self, call: OperatorCall) -> None: ...

    def dispatch(self, call: OperatorCall, bindings: Mapping[str, _Binding]) -> None: ...


class InProcess:
    """The executor of an in-process run: the backend's own methods, on views of the bindings
    (TotalTensorSizeInBytes each, between the guards). Not tamper-proof: the backend shares the
    process, and so the modules, of the judge."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def create_operator(self, call: OperatorCall) -> None:
        self.backend.create_operator(call)

    def dispatch(self, call: OperatorCall, bindings: Mapping[str, _Binding]) -> None:
        self.backend.create_operator(call)
        self.backend.execute(call, {t: b.buffer for t, b in bindings.items()})


class OverBudget(CaseError):  # noqa: N818 - reads as what happened: the case is over budget
    """A buffer the runner will not materialise: beyond MAX_BUFFER_BYTES or the memory cap."""


def _allocate(desc: TensorDesc, fill: int, budget: list[int] | None = None) -> _Binding:
    """A guarded binding of desc, its bytes set to fill. budget: [bytes left], charged."""
    total = desc.total_size
    if total > MAX_BUFFER_BYTES:
        raise OverBudget(f"a {total}-byte buffer is beyond what the runner materialises "
                         f"({MAX_BUFFER_BYTES})")
    if budget is not None:
        if total * WORKING_COPIES > budget[0]:
            raise OverBudget(f"a {total}-byte buffer does not fit in what is left of the "
                             f"memory cap ({budget[0] // WORKING_COPIES} bytes per buffer)")
        budget[0] -= total * WORKING_COPIES
    # Bind at an address aligned as DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT and the desc's
    # GuaranteedBaseOffsetAlignment promise.
    align = max(MINIMUM_BUFFER_TENSOR_ALIGNMENT, desc.guaranteed_base_offset_alignment)
    raw = np.empty(GUARD + total + GUARD + align, dtype=np.uint8)
    skip = -(raw.ctypes.data + GUARD) % align
    guarded = raw[skip:skip + GUARD + total + GUARD]
    guarded[:] = GUARD_BYTE
    guarded[GUARD:GUARD + total] = fill
    return _Binding(desc, guarded)


def padding_written(b: _Binding, fill: int) -> int:
    """How many bytes of an output's padding (inside TotalTensorSizeInBytes, outside every
    logical element) no longer hold the fill. A packed desc in row-major order has its padding
    at the end only (the rounding up to 4 bytes and any larger TotalTensorSizeInBytes)."""
    desc, buffer = b.desc, b.buffer
    if not desc.is_strided:
        tail = buffer[desc.element_count * desc.data_type.size:]
        return int(np.count_nonzero(tail != fill)) if tail.size else 0
    return int(np.count_nonzero(~footprint_mask(desc) & (buffer != fill)))


class BindingError(Exception):
    """A FAIL found in the bound buffers: guard bytes or input bytes changed."""


class BackendError(Exception):
    """The backend raised something other than DescRejected: an ERROR. (An executor that runs
    the backend elsewhere raises it with the backend's exception in words.)"""


def _call_backend(method: Callable, *args: object) -> None:
    try:
        method(*args)
    except (DescRejected, BackendError, CaseError):
        raise
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""
        raise BackendError(f"the backend raised {type(exc).__name__}: {exc}{where}") from exc
