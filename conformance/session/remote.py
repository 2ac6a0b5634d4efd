"""The backend in a worker process, and the harness's handle on it (conformance.session.workers runs
the cases; this module is what crosses the process boundary).

A worker holds the backend and nothing else of a run: it builds the backend once, then answers
requests for the backend's calls one at a time: unsupported_reason; create_operator; and
"dispatch", create_operator then execute on the case's buffers. The harness runs every case
itself (runner.run_case: materialising the buffers, the guard and input checks, the expected
values, the judgement, the results) with a RemoteBackend as the runner's executor, so no code
of the backend ever runs in the process that judges it:

    harness (runner.run_case, the judge)              worker (the backend only)
    ------------------------------------              -------------------------
    private bindings --write--> arena file <--mmap-- views of the arena
    ("dispatch", seq, call, layout) -------channel-->  backend.create_operator(call)
                                                      backend.execute(call, views)
                          <----------------channel--  ["ok", seq, null] (JSON)
    private bindings <--read--- arena file
    guards, inputs, outputs checked and judged on the private copies

- The channel is a socket of its own (a high fd in the worker, never 0-2), with length-prefixed
  frames: the harness sends pickled requests, the worker answers in JSON, which the harness
  reads with a size limit and a deadline and validates field by field; it unpickles nothing a
  worker sends. An answer it cannot trust (garbled, another request's, unasked for) is an ERROR
  for the case and the worker is replaced. DescRejected crosses as ["rejected", seq, text], any
  other exception as ["error", seq, type, text, where].
- The arena is a file in the pool's private folder, one per worker, that the worker maps; the
  bindings are laid out in it guards included, each buffer 16-byte aligned (its
  GuaranteedBaseOffsetAlignment too), exactly TotalTensorSizeInBytes. The harness never maps
  it (it writes and reads it): a backend that truncates the file costs its case, not the
  harness.
- The worker's stdout and stderr go to a log (native code's output and Python's faulthandler
  stack of a fatal signal included), through fds it keeps apart and puts back on 0-2 after
  every call, so a backend that closes, dup2s over or floods fds 0-2 costs at most its case.
- Every worker runs in its own session and process group; when it ends the whole group is
  killed (Worker.kill), so what a backend forked ends with it. Linux: a worker is killed when
  the harness thread that started it ends (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import atexit
import errno
import faulthandler
import json
import mmap
import os
import pickle
import select
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

import numpy as np

from conformance.backend import (
    Backend,
    BackendLoadError,
    Capabilities,
    DescRejected,
    environment_of,
    environment_problem,
    load_backend,
)
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.session.runner import (
    GUARD,
    MINIMUM_BUFFER_TENSOR_ALIGNMENT,
    BackendError,
    CaseError,
    _Binding,
)
from conformance.tensors import DataType

#: Seconds a worker may take to start and build the backend (imports of large native
#: libraries, a GPU runtime's initialisation).
STARTUP_TIMEOUT_S = 300.0
#: The characters of a dead worker's output kept in its case's result.
OUTPUT_TAIL = 4000
#: Seconds a worker gets to exit when asked before its group is killed.
EXIT_GRACE_S = 2.0
#: Seconds between looks at whether a worker the harness waits for is still alive (a process
#: the backend forked may hold the worker's end of the channel open after the worker died).
POLL_S = 0.5
#: The largest answer the harness reads from a worker, and the longest text in one.
ANSWER_LIMIT = 1 << 20
TEXT_LIMIT = 64 << 10
#: A worker's log is emptied at the start of a case once it is this large (a backend that
#: floods its output costs disk, never the harness's memory: the log is read from its end).
LOG_LIMIT = 64 << 20
#: An arena larger than this is given back to the OS after the call that needed it.
ARENA_KEEP = 64 << 20
#: The alignment the arena's mapping gives a binding at most (the mapping's own alignment).
ARENA_ALIGNMENT = mmap.ALLOCATIONGRANULARITY
#: The fds a worker keeps its channel and log on: above the ones a backend is likely to touch.
HIGH_FD = 64


class WorkerError(Exception):
    """The workers cannot run the backend at all (it fails to build, or every worker dies
    while starting): the run stops with this message."""


# -- the channel ----------------------------------------------------------------------------------
class _TimeoutError(Exception):
    """The deadline passed before a whole answer came."""


class _GoneError(Exception):
    """The other end closed the channel, or the worker died."""


class _StaleError(Exception):
    """A well-formed answer to an earlier request than the one asked: something the worker sent
    unasked (its own answer after a forged one, say). seq: the request it answers."""

    def __init__(self, message: str, seq: int) -> None:
        super().__init__(message)
        self.seq = seq


class _GarbledError(Exception):
    """What the worker sent is not an answer the harness can trust."""


_HEADER = struct.Struct(">I")


class _Channel:
    """Length-prefixed frames over a stream socket. The harness reads an answer with a size
    limit and a deadline, looking every POLL_S at whether the worker is still alive."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()  # read, not yet taken

    def send(self, payload: bytes) -> None:
        self.sock.settimeout(None)
        self.sock.sendall(_HEADER.pack(len(payload)) + payload)

    def pending(self) -> bool:
        """Whether something (data, or the end of the channel) waits to be read."""
        if self.buffer:
            return True
        try:
            return bool(select.select([self.sock], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    def receive(self, limit: int | None = None, deadline: float | None = None,
                alive: Callable[[], bool] | None = None) -> bytes:
        """The next frame's payload. limit: the largest payload accepted (_GarbledError beyond
        it, before it is read); deadline (time.monotonic) and alive: see _fill."""
        self._fill(_HEADER.size, deadline, alive)
        (size,) = _HEADER.unpack_from(self.buffer)
        if limit is not None and size > limit:
            raise _GarbledError(f"a frame of {size:,} bytes announced (at most {limit:,})")
        self._fill(_HEADER.size + size, deadline, alive)
        payload = bytes(self.buffer[_HEADER.size:_HEADER.size + size])
        del self.buffer[:_HEADER.size + size]
        return payload

    def _fill(self, n: int, deadline: float | None, alive: Callable[[], bool] | None) -> None:
        """Read until the buffer holds n bytes: _TimeoutError past the deadline, _GoneError at
        the channel's end or when alive() says the other end has died."""
        while len(self.buffer) < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _TimeoutError()
                self.sock.settimeout(min(left, POLL_S))
            else:
                self.sock.settimeout(POLL_S if alive else None)
            try:
                chunk = self.sock.recv(max(n - len(self.buffer), 1 << 16))
            except TimeoutError:
                if alive is not None and not alive():
                    raise _GoneError() from None
                continue
            except OSError as exc:
                raise _GoneError() from exc
            if not chunk:
                raise _GoneError()
            self.buffer += chunk

    def close(self) -> None:
        self.sock.close()


def _json(message: list[Any]) -> bytes:
    return json.dumps(message, ensure_ascii=True).encode("ascii")


#: The answers a worker may give, each field's type after the kind.
_ANSWERS: dict[str, tuple[type | tuple[type, ...], ...]] = {
    "ok": (int, (str, type(None))),
    "rejected": (int, str),
    "error": (int, str, str, str),
    "broken": (int, str),
}


def _parse_answer(data: bytes, seq: int) -> list[Any]:
    """The worker's answer to request seq, every field checked; _GarbledError otherwise."""
    try:
        message = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise _GarbledError(f"not a JSON answer ({type(exc).__name__})") from None
    if not (isinstance(message, list) and message and isinstance(message[0], str)
            and message[0] in _ANSWERS):
        raise _GarbledError("not one of the answers a worker gives")
    shape = _ANSWERS[message[0]]
    fields = message[1:]
    if len(fields) != len(shape) or any(isinstance(f, bool) or not isinstance(f, t)
                                        for f, t in zip(fields, shape, strict=True)):
        raise _GarbledError(f"a {message[0]!r} answer with fields of the wrong number or types")
    if any(isinstance(f, str) and len(f) > TEXT_LIMIT for f in fields):
        raise _GarbledError(f"a text longer than {TEXT_LIMIT:,} characters")
    if fields[0] < seq:
        raise _StaleError(f"an answer to request {fields[0]}, not to request {seq}", fields[0])
    if fields[0] != seq:
        raise _GarbledError(f"an answer to request {fields[0]}, not to request {seq}")
    return message


# -- the worker process ---------------------------------------------------------------------------
def _high(fd: int) -> int:
    """fd moved to a number at or above HIGH_FD (close-on-exec), the old one closed (POSIX;
    elsewhere fd itself)."""
    try:
        import fcntl
    except ImportError:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, HIGH_FD)
    os.close(fd)
    return moved


class _Stdio:
    """A worker's fds 0-2: 0 reads /dev/null, 1 and 2 append to the log. The log and /dev/null
    are kept open apart (high fds, which faulthandler also writes to) and put back on 0-2 after
    every call of the backend, reopened if the backend closed or replaced them."""

    def __init__(self, log_path: str) -> None:
        self.log_path = log_path
        self.log = self.null = -1
        self._open()
        self.restore()
        sys.stdout = open(1, "w", buffering=1, closefd=False, errors="backslashreplace")
        sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")

    def _open(self) -> None:
        self.log = _high(os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))
        self.null = _high(os.open(os.devnull, os.O_RDWR))
        self.ids = (self._id(self.log), self._id(self.null))
        faulthandler.enable(file=self.log, all_threads=True)

    @staticmethod
    def _id(fd: int) -> tuple[int, int] | None:
        try:
            st = os.fstat(fd)
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def restore(self) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        if (self._id(self.log), self._id(self.null)) != self.ids:  # closed or replaced
            self._open()
        os.dup2(self.null, 0)
        os.dup2(self.log, 1)
        os.dup2(self.log, 2)


class _Mapped:
    """The worker's side of the arena: the file mapped, views of it handed to the backend. A
    mapping is replaced, never closed, when the arena's size changes (the backend may keep
    views of the old one)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.map: mmap.mmap | None = None
        self.size = 0

    def views(self, size: int, layout: list[tuple[str, int, int, int]]
              ) -> dict[str, np.ndarray]:
        if size != self.size or self.map is None:
            fd = os.open(self.path, os.O_RDWR)
            try:
                self.map = mmap.mmap(fd, size)
            finally:
                os.close(fd)
            self.size = size
        out = {}
        for tensor, offset, total, align in layout:
            view = np.frombuffer(self.map, dtype=np.uint8, count=total, offset=offset + GUARD)
            if view.ctypes.data % align:
                raise OSError(f"{tensor} mapped at an address not {align}-byte aligned")
            out[tensor] = view
        return out


def _text(value: object) -> str:
    """str(value), at most TEXT_LIMIT characters, whatever value's __str__ does."""
    try:
        text = str(value)
    except Exception:  # an exception whose __str__ raises
        text = f"<{type(value).__name__} that cannot be shown as text>"
    return text[:TEXT_LIMIT] if isinstance(text, str) else ""


def _serve(backend: Backend, arena: _Mapped, request: tuple[Any, ...]) -> list[Any]:
    """The answer to one request for a call of the backend."""
    kind, seq, call = request[:3]
    views: Mapping[str, np.ndarray] = {}
    if kind == "dispatch":
        try:
            views = arena.views(*request[3:])
        except (OSError, ValueError) as exc:
            return ["broken", seq, f"the worker could not map the shared buffers: {exc}"]
    try:
        if kind == "unsupported":
            reason = backend.unsupported_reason(call)
            return ["ok", seq, _text(reason) if reason else None]
        backend.create_operator(call)
        if kind == "dispatch":
            backend.execute(call, views)
        return ["ok", seq, None]
    except DescRejected as exc:
        return ["rejected", seq, _text(exc)]
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""
        return ["error", seq, type(exc).__name__[:200], _text(exc), where[:TEXT_LIMIT]]


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """Linux: the kernel sends this process signum when the harness thread that started it ends
    (a worker hung in native code would otherwise outlive a killed run)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signum)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def data_segment_bytes() -> int | None:
    """This process's data segment (VmData: heap and private writable mappings), Linux."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cap_memory(cap: int) -> int | None:
    """Cap the data segment at its size now plus cap (Linux: RLIMIT_DATA counts the heap and
    private writable mappings, not the shared arena nor the address space a GPU runtime
    reserves). The limit set, or None where it cannot be set."""
    used = data_segment_bytes()
    if used is None or cap <= 0:
        return None
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        limit = used + cap
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
        return limit
    except (ImportError, AttributeError, ValueError, OSError):
        return None


def _worker(sock: socket.socket, backend: str, level: str | None, memory_cap: int,
            log_path: str, arena_path: str, execution_flags: int = 0) -> None:
    """A worker's life: a session and process group of its own, its channel and log on fds of
    their own, the backend built, then one answer per request until None or the channel's end."""
    if hasattr(os, "setsid"):
        try:
            os.setsid()
        except OSError:
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the harness's to handle
    die_with_parent()
    channel = _Channel(socket.socket(fileno=_high(sock.detach())))
    stdio = _Stdio(log_path)
    try:
        built = load_backend(backend, FeatureLevel.parse(level) if level else None,
                             ExecutionFlags(execution_flags))
        cls = type(built)
        ready = {"class": f"{cls.__module__}.{cls.__qualname__}", "class_name": cls.__name__,
                 "capabilities": built.capabilities.to_json(),
                 "claimed_level": str(built.claimed_level),
                 "environment": environment_of(built),
                 "asks_unsupported": cls.unsupported_reason is not Backend.unsupported_reason}
    except BackendLoadError as exc:
        stdio.restore()
        channel.send(_json(["failed", _text(exc)]))
        return
    except BaseException as exc:
        stdio.restore()
        channel.send(_json(["failed", f"building backend {backend} failed: {_text(repr(exc))}"]))
        return
    stdio.restore()
    _cap_memory(memory_cap)
    channel.send(_json(["ready", ready]))
    arena = _Mapped(arena_path)
    while True:
        try:
            request = pickle.loads(channel.receive())  # from the harness: trusted
        except _GoneError:
            return
        if request is None:
            return
        answer = _serve(built, arena, request)
        stdio.restore()
        channel.send(_json(answer))


# -- the harness side -----------------------------------------------------------------------------
#: The process groups of the live workers of this process, killed at its exit whatever else
#: happened (atexit: a normal exit, an uncaught exception, SIGTERM turned into one).
_GROUPS: set[int] = set()
_GROUPS_LOCK = threading.Lock()


def _kill_group(pgid: int) -> None:
    """SIGKILL the process group pgid (a worker's: never this process's own)."""
    if not hasattr(os, "killpg") or pgid <= 1 or pgid == os.getpgrp():
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@atexit.register
def _kill_all_groups() -> None:
    with _GROUPS_LOCK:
        for pgid in list(_GROUPS):
            _kill_group(pgid)
        _GROUPS.clear()


def describe_exit(exitcode: int | None) -> tuple[str, str | None]:
    """(how a process ended, in words; the signal's name or None) from its exit code."""
    if exitcode is None:
        return "did not exit", None
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        extra = (" (a SIGKILL the harness did not send: often the kernel's out-of-memory "
                 "killer)" if name == "SIGKILL" else "")
        return f"was killed by {name} (signal {-exitcode}){extra}", name
    if exitcode == 0xC0000005 or exitcode == -1073741819:  # Windows: access violation
        return "died of an access violation (0xC0000005)", None
    return f"exited with code {exitcode}", None


class _Arena:
    """The harness's side of a worker's shared buffers: a file the worker maps, which the
    harness only writes and reads back (seek, write, readinto), never maps. Each binding is laid
    out whole, guards included, its buffer aligned as the desc promises."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = open(path, "x+b", buffering=0,
                         opener=lambda p, flags: os.open(p, flags, 0o600))
        self.size = 0

    def put(self, bindings: Mapping[str, _Binding]
            ) -> tuple[int, list[tuple[str, int, int, int]]]:
        """The bindings' bytes written into the arena: (its size, the layout: tensor, offset,
        TotalTensorSizeInBytes, alignment for each)."""
        layout, end = [], 0
        for tensor, b in bindings.items():
            align = max(MINIMUM_BUFFER_TENSOR_ALIGNMENT, b.desc.guaranteed_base_offset_alignment)
            if align > ARENA_ALIGNMENT:
                raise CaseError(f"{tensor}: GuaranteedBaseOffsetAlignment {align} is above the "
                                f"{ARENA_ALIGNMENT}-byte alignment an isolated run's shared "
                                "buffers have")
            offset = -(-(end + GUARD) // align) * align - GUARD
            layout.append((tensor, offset, b.desc.total_size, align))
            end = offset + b.guarded.size
        size = max(end, 1)
        if size > self.size:
            self.file.truncate(size)
            try:
                os.posix_fallocate(self.file.fileno(), 0, size)  # ENOSPC now, not SIGBUS later
            except AttributeError:  # no posix_fallocate here
                pass
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                    raise
            self.size = size
        for (_, offset, _, _), b in zip(layout, bindings.values(), strict=True):
            view = memoryview(b.guarded)
            self.file.seek(offset)
            while view:
                view = view[self.file.write(view):]
        return self.size, layout

    def get(self, bindings: Mapping[str, _Binding],
            layout: list[tuple[str, int, int, int]]) -> None:
        """The arena's bytes copied back into the harness's private bindings."""
        for (tensor, offset, _, _), b in zip(layout, bindings.values(), strict=True):
            view = memoryview(b.guarded)
            self.file.seek(offset)
            while view:
                n = self.file.readinto(view)
                if not n:
                    raise BackendError(f"{tensor}: the shared buffer came back cut short (the "
                                       "backend's worker truncated the file it lives in)")
                view = view[n:]

    def shrink(self) -> None:
        """Give a large arena's memory back (the worker maps the new size at its next call)."""
        if self.size > ARENA_KEEP:
            self.file.truncate(0)
            self.size = 0

    def close(self) -> None:
        self.file.close()


class WorkerLost(BaseException):
    """The worker cannot finish the case: it died, ran past the timeout, closed its channel
    or sent what the harness cannot trust ("leftover": what it sent unasked after an earlier
    case, which the case is not to blame for). A BaseException, so that no handler of the runner
    takes it for the backend's own exception: conformance.session.workers makes the case's
    result."""

    def __init__(self, how: str, detail: str = "") -> None:
        super().__init__(how, detail)
        self.how, self.detail = how, detail


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise ValueError(what)


def _capabilities(obj: Any) -> Capabilities:
    """The capabilities a worker reports (Capabilities.to_json), each field checked."""
    _check(isinstance(obj, dict), "capabilities are not an object")
    operators = obj.get("operators")
    _check(isinstance(operators, dict) and all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(t, str) for t in v)
        for k, v in operators.items()), "operators are not names with lists of data types")
    flags = {k: obj.get(k) for k in ("strided", "arbitrary_offsets", "rejects_invalid")}
    _check(all(isinstance(v, bool) for v in flags.values()), "a flag is not true or false")
    pairs = obj.get("offset_pairs")
    _check(isinstance(pairs, list) and all(
        isinstance(p, list) and len(p) == 2 and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in p)
        for p in pairs), "offset_pairs are not pairs of numbers")
    _check(isinstance(obj.get("notes", ""), str), "notes are not text")
    return Capabilities(
        operators={op: frozenset(DataType[t] for t in types) for op, types in operators.items()},
        feature_level=FeatureLevel.parse(str(obj.get("feature_level"))),
        offset_pairs=frozenset((float(a), float(b)) for a, b in pairs),
        notes=obj.get("notes", ""), **flags)


@dataclass(frozen=True)
class Claims:
    """What a worker said of its backend when it was built (its ready message, checked)."""

    class_path: str
    class_name: str
    capabilities: Capabilities
    claimed_level: FeatureLevel
    asks_unsupported: bool
    #: Backend.environment, as the worker reported it (checked: environment_problem).
    environment: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"class": self.class_path, "class_name": self.class_name,
                "capabilities": self.capabilities.to_json(),
                "claimed_level": str(self.claimed_level), "environment": dict(self.environment)}

    @classmethod
    def parse(cls, info: Any) -> Claims:
        try:
            _check(isinstance(info, dict), "not an object")
            names = (info.get("class"), info.get("class_name"))
            _check(all(isinstance(n, str) and len(n) < 1000 for n in names), "no class name")
            _check(isinstance(info.get("asks_unsupported"), bool), "no asks_unsupported")
            environment = info.get("environment")
            wrong = environment_problem(environment)
            _check(wrong is None, f"its environment: {wrong}")
            return cls(names[0], names[1], _capabilities(info.get("capabilities")),
                       FeatureLevel.parse(str(info.get("claimed_level"))),
                       info["asks_unsupported"], dict(environment))
        except (ValueError, KeyError, TypeError) as exc:
            raise WorkerError(f"the worker described its backend in a form the harness cannot "
                              f"read ({exc})") from None


class RemoteBackend:
    """The backend as the harness sees it in an isolated run: the claims its worker made, and
    its calls, each one request to the worker (runner.Executor). The bindings cross in the
    worker's arena and come back into the harness's private bindings before execute returns."""

    def __init__(self, claims: Claims, worker: Worker, flags: ExecutionFlags) -> None:
        self.claims, self.worker = claims, worker
        self.capabilities = claims.capabilities
        self.claimed_level = claims.claimed_level
        self.execution_flags = flags
        self.deadline: float | None = None
        self.exhausted = False  # the backend raised MemoryError: the worker is retired

    def unsupported_reason(self, call: OperatorCall) -> str | None:
        return self._ask("unsupported", call) if self.claims.asks_unsupported else None

    def create_operator(self, call: OperatorCall) -> None:
        self._ask("create", call)

    def dispatch(self, call: OperatorCall, bindings: Mapping[str, _Binding]) -> None:
        try:
            size, layout = self.worker.arena.put(bindings)
        except OSError as exc:
            raise CaseError(f"the harness could not write the shared buffers: {exc}") from exc
        self._ask("dispatch", call, size, layout)
        self.worker.arena.get(bindings, layout)

    def _ask(self, kind: str, call: OperatorCall, *extra: Any) -> str | None:
        answer = self.worker.ask(kind, call, *extra, deadline=self.deadline)
        if answer[0] == "ok":
            return answer[2]
        if answer[0] == "rejected":
            raise DescRejected(answer[2])
        if answer[0] == "error":
            _, _, name, text, where = answer
            self.exhausted |= name == "MemoryError"
            raise BackendError(f"the backend raised {name}: {text}{where}")
        raise WorkerLost("broken", answer[2])


class Worker:
    """One worker process, as the harness holds it: its channel, log, arena and group."""

    def __init__(self, context: Any, folder: Path, number: int, backend: str,
                 level: FeatureLevel | None, memory_cap: int, flags: ExecutionFlags) -> None:
        """Start worker `number` (spawn context), its log and arena in folder; it builds the
        backend while the caller goes on (wait_ready)."""
        self.backend, self.flags = backend, flags
        self.log = folder / f"worker-{number}.log"
        self.log.touch()
        self.arena = _Arena(folder / f"worker-{number}.arena")
        ours, theirs = socket.socketpair()
        self.process = context.Process(
            target=_worker, name=f"dmlconf-worker-{number}", daemon=True,
            args=(theirs, backend, str(level) if level else None, memory_cap, str(self.log),
                  str(self.arena.path), int(flags)))
        self.process.start()
        theirs.close()
        self.pgid = self.process.pid  # the worker's own group (os.setsid)
        with _GROUPS_LOCK:
            _GROUPS.add(self.pgid)
        self.channel = _Channel(ours)
        self.since = time.monotonic()
        self.claims: Claims | None = None
        self.remote: RemoteBackend | None = None
        self.seq = 0
        #: The first request of the case running now (Worker.begin_case): anything unasked
        #: that answers an earlier one was left by an earlier case.
        self.case_start = 1
        self.ran = 0

    def alive(self) -> bool:
        return self.process.is_alive()

    def wait_ready(self) -> Claims:
        """The worker's claims once it has built the backend. BackendLoadError where the backend
        cannot be built; WorkerError where the worker dies or takes too long doing it."""
        try:
            message = json.loads(self.channel.receive(
                ANSWER_LIMIT, self.since + STARTUP_TIMEOUT_S, self.alive))
        except _TimeoutError:
            self.kill()
            raise WorkerError(f"a worker took more than {STARTUP_TIMEOUT_S:.0f} s to build "
                              f"backend {self.backend}; its output:\n{self.output_since(0)}"
                              ) from None
        except _GoneError:
            self.process.join(5)
            how, _ = describe_exit(self.process.exitcode)
            self.kill()
            raise WorkerError(f"the worker process {how} while building backend "
                              f"{self.backend}; its output:\n{self.output_since(0)}") from None
        except (_GarbledError, ValueError, RecursionError) as exc:
            self.kill()
            raise WorkerError(f"the worker answered garbage while building the backend ({exc})"
                              ) from None
        if (isinstance(message, list) and len(message) == 2 and message[0] == "failed"
                and isinstance(message[1], str)):
            self.kill()
            raise BackendLoadError(message[1])
        if not (isinstance(message, list) and len(message) == 2 and message[0] == "ready"):
            self.kill()
            raise WorkerError("the worker's first message was not that it is ready")
        try:
            self.claims = Claims.parse(message[1])
        except WorkerError:
            self.kill()
            raise
        self.remote = RemoteBackend(self.claims, self, self.flags)
        return self.claims

    def begin_case(self) -> None:
        """Mark where a case's requests start (see WorkerLost's "leftover")."""
        self.case_start = self.seq + 1

    def ask(self, kind: str, call: OperatorCall, *extra: Any,
            deadline: float | None) -> list[Any]:
        """The worker's answer to one request, checked; WorkerLost where there is none.
        Something unasked that an earlier case left (an answer to one of its requests, or data
        waiting before this case's first request) is a "leftover": the current case is not to
        blame for it, and the pool runs it again on a fresh worker."""
        self.seq += 1
        if self.channel.pending():  # something the worker was not asked for
            raise WorkerLost("leftover" if self.seq == self.case_start else "garbled",
                             "it sent something before it was asked")
        try:
            self.channel.send(pickle.dumps((kind, self.seq, call, *extra),
                                           protocol=pickle.HIGHEST_PROTOCOL))
            return _parse_answer(self.channel.receive(ANSWER_LIMIT, deadline, self.alive),
                                 self.seq)
        except _TimeoutError:
            raise WorkerLost("timeout") from None
        except (_GoneError, OSError):
            # Dead, or alive with its channel closed (a backend that closed every fd): it is
            # given a moment to die by itself, so that its own end is what is reported.
            self.process.join(1.0)
            raise WorkerLost("died" if not self.process.is_alive() else "channel") from None
        except _StaleError as exc:
            raise WorkerLost("leftover" if exc.seq < self.case_start else "garbled",
                             f"{exc}: it sent something it was not asked for") from None
        except _GarbledError as exc:
            raise WorkerLost("garbled", str(exc)) from None

    def mark(self) -> int:
        """Where the output of the case about to run starts in the log (emptied first when
        over LOG_LIMIT)."""
        try:
            size = self.log.stat().st_size
            if size > LOG_LIMIT:
                os.truncate(self.log, 0)
                size = 0
        except OSError:
            return 0
        return size

    def output_since(self, offset: int) -> str:
        try:
            with open(self.log, "rb") as f:
                f.seek(max(offset, f.seek(0, os.SEEK_END) - OUTPUT_TAIL * 4))
                text = f.read(OUTPUT_TAIL * 4).decode("utf-8", errors="replace")
        except OSError:
            return ""
        return text[-OUTPUT_TAIL:]

    def kill(self) -> None:
        """Kill the worker's whole group (before the worker is reaped, so that its pid, which
        names the group, cannot have been reused), then the worker."""
        _kill_group(self.pgid)
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self._release()

    def close(self, grace: float = EXIT_GRACE_S) -> None:
        """Ask the worker to exit, give it `grace` seconds (a backend may release a device as
        it exits), then kill whatever is left of its group."""
        if self.process.is_alive():
            try:
                self.channel.send(pickle.dumps(None))
            except OSError:
                pass
            wait([self.process.sentinel], grace)
        self.kill()

    def _release(self) -> None:
        with _GROUPS_LOCK:
            _GROUPS.discard(self.pgid)
        self.channel.close()
        self.arena.close()


