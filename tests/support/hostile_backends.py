"""Backends that crash, hang or exhaust memory: TEST DOUBLES ONLY, for the isolation of
`dmlconf run` (conformance/session/workers.py).

Each is the NumPy reference, except on the original DEPTH_TO_SPACE and SPACE_TO_DEPTH
operators (two of the documented cases, the 1st and the 9th), where it:

- SegfaultBackend    writes through a null pointer (ctypes): SIGSEGV
- AbortBackend       calls abort(): SIGABRT
- ExitBackend        prints a line, then exits the process with code 3
- HangBackend        spins forever
- HogBackend         allocates memory without bound (each block touched, so it is real)
- LeakyBackend       raises MemoryError at once (as an allocation the OS refuses does, on
                     any OS: the retiring of the worker without depending on its cap)
- SegfaultAtBuild    crashes while it is being built
- InterruptingBackend raises KeyboardInterrupt (a Ctrl-C) at its 6th call, once per marker
                     file named by $DMLCONF_TEST_MARKER: the test of an interrupted run
- SlowBackend        sleeps 0.2 s per call (a run long enough to interrupt from outside)
- FlakyBackend       writes one byte wrong in every second call of its process
- StickyBackend      correct in the first call of its process only: later calls write one
                     byte wrong, as a backend whose earlier call left its state corrupted
"""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from backends.numpy_reference import NumpyReferenceBackend
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall

HOSTILE_OPERATORS = ("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")


class _Hostile(NumpyReferenceBackend):
    native = True

    def misbehave(self) -> None:
        raise NotImplementedError

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if call.operator in HOSTILE_OPERATORS:
            self.misbehave()
        super().execute(call, bindings)


class SegfaultBackend(_Hostile):
    name = "hostile-segfault"

    def misbehave(self) -> None:
        print("about to write through a null pointer", flush=True)
        ctypes.memset(0, 0xEE, 16)


class AbortBackend(_Hostile):
    name = "hostile-abort"

    def misbehave(self) -> None:
        os.abort()


class ExitBackend(_Hostile):
    name = "hostile-exit"

    def misbehave(self) -> None:
        print("giving up on this one", flush=True)
        os._exit(3)


class HangBackend(_Hostile):
    name = "hostile-hang"

    def misbehave(self) -> None:
        while True:
            pass


class HogBackend(_Hostile):
    name = "hostile-hog"

    def misbehave(self) -> None:
        hog = []
        while True:
            hog.append(np.ones(32 << 20, dtype=np.uint8))


class LeakyBackend(_Hostile):
    name = "hostile-leaky"

    def misbehave(self) -> None:
        raise MemoryError("cannot allocate 64 MiB")


class SegfaultAtBuild(NumpyReferenceBackend):
    name = "hostile-segfault-at-build"
    native = True

    def __init__(self, feature_level: FeatureLevel | None = None) -> None:
        ctypes.memset(0, 0xEE, 16)


class InterruptingBackend(NumpyReferenceBackend):
    name = "hostile-interrupting"
    calls = 0

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        marker = Path(os.environ["DMLCONF_TEST_MARKER"])
        InterruptingBackend.calls += 1
        if InterruptingBackend.calls == 6 and not marker.exists():
            marker.touch()
            raise KeyboardInterrupt
        super().execute(call, bindings)


class SlowBackend(NumpyReferenceBackend):
    """Sleeps 0.2 s a call ($DMLCONF_TEST_SLOW_S where set), then computes."""

    name = "hostile-slow"

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        time.sleep(float(os.environ.get("DMLCONF_TEST_SLOW_S", "0.2")))
        super().execute(call, bindings)


class StickyBackend(NumpyReferenceBackend):
    name = "hostile-sticky"
    native = True
    calls = 0

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super().execute(call, bindings)
        StickyBackend.calls += 1
        if StickyBackend.calls > 1:
            bindings["OutputTensor"][0] ^= 0x01


class FlakyBackend(NumpyReferenceBackend):
    name = "hostile-flaky"
    calls = 0

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super().execute(call, bindings)
        FlakyBackend.calls += 1
        if FlakyBackend.calls % 2 == 0:
            bindings["OutputTensor"][0] ^= 0x01
