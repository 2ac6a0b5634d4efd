"""A stand-in for a backend with real work per call (bench_workers.py): the NumPy reference,
plus 2 ms of CPU-bound spinning in every execute. The suite's cases cost the NumPy reference
about 0.6 ms each, less than the harness's own per-case work in a worker (pickling the case
and loading it, ~0.1 ms); a GPU runtime or a JIT spends milliseconds per call."""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

from backends.numpy_reference import NumpyReferenceBackend
from conformance.ops import OperatorCall

SPIN_S = 0.002


class BusyBackend(NumpyReferenceBackend):
    name = "busy"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        until = time.perf_counter() + SPIN_S
        while time.perf_counter() < until:
            pass
        super().execute(call, bindings)
