"""Backends that try to pass without computing, forge the harness's channel, or break the fds and
processes of their worker: TEST DOUBLES ONLY, for tests/session/test_session_tamper_proof.py
(issue 13). All declare native = True, so that dmlconf run isolates them by default.

Cheats, on every case: each would pass if the judge shared its process (an in-process run), by
replacing the one function of the judge that would catch it:

- PatchesMismatches  computes nothing; replaces conformance.judge.compare.mismatches, with which the
                     judge compares every output, by a function that finds no mismatch
- PatchesInputCheck  computes the outputs, then uses its inputs as scratch (inverts their
                     bytes); replaces runner._same, with which the runner finds whether an
                     input's bytes changed, by a function that finds them unchanged (in-process
                     it then passes every case but the chain whose second call reads the first
                     one's input: the relation between their outputs fails)
- PatchesGuards      computes the outputs, then writes 8 bytes past the end of each output;
                     replaces runner._Binding.guards_intact by a method that always says yes

The others are the NumPy reference, except on the original DEPTH_TO_SPACE and SPACE_TO_DEPTH
operators (the 1st and the 9th of the documented cases, "victims"; the "1st victim" below is
any DEPTH_TO_SPACE call, the "2nd" any SPACE_TO_DEPTH call, whichever worker runs it):

- GarbageAnswer      writes bytes that are no frame to its worker's channel; computes nothing
- ForgedAnswer       writes a well-formed "ok" answer to the request it serves, before the
                     worker does; computes nothing
- ClosesStdio        1st victim: closes fds 0, 1 and 2, then prints (OSError: the reason);
                     2nd victim: prints "still heard" and exits with code 7 (its crash output
                     shows whether the worker's log survived)
- NullStdio          1st victim: dup2s /dev/null over fds 0, 1 and 2, computes nothing;
                     2nd victim: as ClosesStdio's
- FloodsStdout       1st victim: writes 100 MB to fd 1, computes nothing; 2nd: as ClosesStdio's
- ClosesEveryFd      1st victim: closes every fd of the process, its channel included
- TruncatesArena     each victim: truncates the file its buffers live in, computes nothing
- Forks              each victim: forks a child that sleeps 300 s (its pid appended to the file
                     $DMLCONF_TEST_PIDS), then computes
- ForksAndHangs      as Forks, but the 2nd victim then spins forever (a TIMEOUT)
- ForksSlowly        every call: sleeps 0.2 s; the first call of a worker also forks a sleeping
                     child (a run to interrupt with SIGTERM)
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import struct
import sys
import time
from collections.abc import Mapping

import numpy as np

import conformance.judge.compare
import conformance.session.case_run
from backends.numpy_reference import NumpyReferenceBackend
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall

VICTIMS = ("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")


class _Native(NumpyReferenceBackend):
    native = True


# -- cheats ---------------------------------------------------------------------------------------
class _Cheat(_Native):
    def __init__(self, feature_level: FeatureLevel | None = None, *args: object) -> None:
        super().__init__(feature_level, *args)  # type: ignore[arg-type]
        self.patch()

    def patch(self) -> None:
        raise NotImplementedError

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        self.patch()  # again, in case anything restored it
        self.cheat(call, bindings)

    def cheat(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        raise NotImplementedError


class PatchesMismatches(_Cheat):
    name = "cheat-mismatches"

    def patch(self) -> None:
        conformance.judge.compare.mismatches = (
            lambda got, exp: np.zeros(np.shape(got), dtype=bool))
        conformance.session.case_run.compare.mismatches = conformance.judge.compare.mismatches

    def cheat(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        pass  # computes nothing


class PatchesInputCheck(_Cheat):
    name = "cheat-input-check"

    def patch(self) -> None:
        conformance.session.case_run._same = lambda now, before: True

    def cheat(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super(_Cheat, self).execute(call, bindings)
        for name, buffer in bindings.items():
            if "Input" in name:
                np.invert(buffer, out=buffer)


class PatchesGuards(_Cheat):
    name = "cheat-guards"

    def patch(self) -> None:
        conformance.session.case_run._Binding.guards_intact = lambda self: True

    def cheat(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        super(_Cheat, self).execute(call, bindings)
        for name, buffer in bindings.items():
            if "Output" in name:
                ctypes.memset(buffer.ctypes.data + buffer.size, 0xEE, 8)


# -- victims --------------------------------------------------------------------------------------
class _Victims(_Native):
    """The reference, except on VICTIMS: first() on DEPTH_TO_SPACE, second() on
    SPACE_TO_DEPTH."""

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if call.operator in VICTIMS:
            act = self.first if call.operator == VICTIMS[0] else self.second
            if act(call, bindings):
                return
        super().execute(call, bindings)

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        """Misbehave; True: computing nothing."""
        raise NotImplementedError

    def second(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        return self.first(call, bindings)


def _channel_socket() -> object:
    """The worker's channel to the harness, found as a backend would: among the live objects."""
    from conformance.session import remote

    (channel,) = [o for o in gc.get_objects() if isinstance(o, remote._Channel)]
    return channel.sock


class GarbageAnswer(_Victims):
    name = "forge-garbage"

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        _channel_socket().sendall(b"PASS PASS PASS PASS")  # type: ignore[attr-defined]
        return True


class ForgedAnswer(_Victims):
    name = "forge-ok"

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        frame = sys._getframe(1)
        while "request" not in frame.f_locals:  # the worker's frame serving the request
            frame = frame.f_back  # type: ignore[assignment]
        seq = frame.f_locals["request"][1]
        answer = json.dumps(["ok", seq, None]).encode()
        _channel_socket().sendall(struct.pack(">I", len(answer)) + answer)  # type: ignore
        return True


class LateAnswer(_Victims):
    """Computes every output right, but on each victim notes the request it serves and, in the
    next case, first sends an answer to that old request: something unasked, left by an earlier
    case (what a forged answer's real one is when it comes late)."""

    name = "late-answer"
    owed: int | None = None

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        frame = sys._getframe(1)
        while "request" not in frame.f_locals:  # the worker's frame serving the request
            frame = frame.f_back  # type: ignore[assignment]
        LateAnswer.owed = frame.f_locals["request"][1]
        return False

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        if LateAnswer.owed is not None and call.operator not in VICTIMS:
            answer = json.dumps(["ok", LateAnswer.owed, None]).encode()
            LateAnswer.owed = None
            _channel_socket().sendall(struct.pack(">I", len(answer)) + answer)  # type: ignore
        super().execute(call, bindings)


def _still_heard() -> None:
    print("still heard", flush=True)
    os._exit(7)


class ClosesStdio(_Victims):
    name = "stdio-closed"

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        for fd in (0, 1, 2):
            os.close(fd)
        print("into a closed fd", flush=True)  # OSError EBADF
        return True

    def second(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        _still_heard()
        return True


class NullStdio(ClosesStdio):
    name = "stdio-null"

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        print("into /dev/null", flush=True)
        return True


class FloodsStdout(ClosesStdio):
    name = "stdio-flood"

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        block = b"flood " * (1 << 20)
        for _ in range((100 << 20) // len(block) + 1):
            os.write(1, block)
        return True


class ClosesEveryFd(_Victims):
    name = "every-fd-closed"

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        os.closerange(0, 1 << 16)
        return True


class TruncatesArena(_Victims):
    name = "arena-truncated"

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        from conformance.session import remote

        (arena,) = [o for o in gc.get_objects() if isinstance(o, remote._Mapped)]
        os.ftruncate(arena.fd, 0)
        return True


def _fork_a_sleeper() -> None:
    pid = os.fork()
    if pid == 0:
        try:
            time.sleep(300)
        finally:
            os._exit(0)
    with open(os.environ["DMLCONF_TEST_PIDS"], "a") as f:
        f.write(f"{pid}\n")


class Forks(_Victims):
    name = "forks"

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        _fork_a_sleeper()
        return False


class ForksAndHangs(Forks):
    name = "forks-and-hangs"

    def second(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        _fork_a_sleeper()
        while True:
            pass


class ForksSlowly(_Native):
    name = "forks-slowly"
    calls = 0

    def execute(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> None:
        ForksSlowly.calls += 1
        if ForksSlowly.calls == 1:
            _fork_a_sleeper()
        time.sleep(0.2)
        super().execute(call, bindings)


class FifoLog(_Victims):
    """1st victim: puts a FIFO where its worker's log is (found through fd 1), says so, and
    aborts: a harness that opened the log by its path would block for ever."""

    name = "fifo-log"

    def first(self, call: OperatorCall, bindings: Mapping[str, np.ndarray]) -> bool:
        log = os.readlink("/proc/self/fd/1")
        print("log replaced by a FIFO", flush=True)
        os.unlink(log)
        os.mkfifo(log)
        os.abort()
