"""A narrow backend: TEST DOUBLE ONLY, never an implementation to certify.

NarrowBackend claims one operator, DEPTH_TO_SPACE1, with three data types (FLOAT16, FLOAT32,
UINT8), and runs it with the two DML_DEPTH_SPACE_ORDER values swapped (broken_backends'
SwappedOrderBackend). A run of it is what a backend implementing a slice of DirectML gives:
mostly NOT_SUPPORTED, for several reasons ("the backend does not implement RESAMPLE", "the
backend does not run DEPTH_TO_SPACE1 with INT64 ..."), with FAILs among them, and feature levels
whose every mandatory case is NOT_SUPPORTED (1_0 and 2_0: no DEPTH_TO_SPACE1 there). The report
tests render such runs (`dmlconf run --backend tests/support/narrow_backends.py:NarrowBackend`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conformance.backend import Capabilities, backend_class
from conformance.tensors import DataType

#: The broken backend this one narrows, loaded the way `--backend FILE:Class` loads it (the same
#: module in every process).
SwappedOrderBackend = backend_class(
    f"{Path(__file__).with_name('broken_backends.py')}:SwappedOrderBackend")

OPERATOR = "DEPTH_TO_SPACE1"
TYPES = frozenset({DataType.FLOAT16, DataType.FLOAT32, DataType.UINT8, DataType.UINT32})


class NarrowBackend(SwappedOrderBackend):  # type: ignore[misc,valid-type]
    name = "narrow-one-operator"

    @property
    def capabilities(self) -> Capabilities:
        return replace(super().capabilities, operators={OPERATOR: TYPES})
