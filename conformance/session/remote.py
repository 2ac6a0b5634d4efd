"""The backend in a worker process, and the harness's handle on it (conformance.session.workers runs
the cases; this module is what crosses the process boundary).

A worker holds the backend and nothing else of a run: it builds the backend once, then answers
requests for the backend's calls one at a time: unsupported_reason; create_operator; and
"dispatch", create_operator then execute on the case's buffers. The harness runs every case
itself (case_run.run_case: materialising the buffers, the guard and input checks, the expected
values, the judgement, the results) with a RemoteBackend as the runner's executor, so no code
of the backend ever runs in the process that judges it:

    harness (case_run.run_case, the judge)              worker (the backend only)
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

Here: the channel and the answers a worker may give, the arena (the harness's side and the
worker's), and the claims a worker makes of its backend once built. The worker process's own
code is conformance.session.worker_main; the harness's handle on a worker (Worker,
RemoteBackend), conformance.session.worker_handle.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import select
import socket
import struct
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from conformance.backend import Capabilities, environment_problem
from conformance.levels import FeatureLevel
from conformance.results import sanitise
from conformance.session.bindings import GUARD, BackendError, CaseError, _Binding
from conformance.tensors import MINIMUM_BUFFER_TENSOR_ALIGNMENT, DataType

#: Seconds between looks at whether a worker the harness waits for is still alive (a process
#: the backend forked may hold the worker's end of the channel open after the worker died).
POLL_S = 0.5
#: The largest answer the harness reads from a worker, and the longest text in one.
ANSWER_LIMIT = 1 << 20
TEXT_LIMIT = 64 << 10
#: An arena larger than this is given back to the OS after the call that needed it.
ARENA_KEEP = 64 << 20
#: The alignment the arena's mapping gives a binding at most (the mapping's own alignment).
ARENA_ALIGNMENT = mmap.ALLOCATIONGRANULARITY


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


# -- the arena ------------------------------------------------------------------------------------
class _Mapped:
    """The worker's side of the arena: the file mapped, views of it handed to the backend. A
    mapping is replaced, never closed, when the arena's size changes (the backend may keep
    views of the old one)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd  # the arena, inherited open: the worker never needs its path
        self.map: mmap.mmap | None = None
        self.size = 0

    def views(self, size: int, layout: list[tuple[str, int, int, int]]
              ) -> dict[str, np.ndarray]:
        if size != self.size or self.map is None:
            self.map = mmap.mmap(self.fd, size)
            self.size = size
        out = {}
        for tensor, offset, total, align in layout:
            view = np.frombuffer(self.map, dtype=np.uint8, count=total, offset=offset + GUARD)
            if view.ctypes.data % align:
                raise OSError(f"{tensor} mapped at an address not {align}-byte aligned")
            out[tensor] = view
        return out



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
            view = b.guarded.data
            self.file.seek(offset)
            while view:
                view = view[self.file.write(view):]
        return self.size, layout

    def get(self, bindings: Mapping[str, _Binding],
            layout: list[tuple[str, int, int, int]]) -> None:
        """The arena's bytes copied back into the harness's private bindings."""
        for (tensor, offset, _, _), b in zip(layout, bindings.values(), strict=True):
            view = b.guarded.data
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


# -- the claims -----------------------------------------------------------------------------------
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
    #: Backend.name, the name the backend gives itself ("" where it gave none or no text).
    name: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"class": self.class_path, "class_name": self.class_name,
                "capabilities": self.capabilities.to_json(),
                "claimed_level": str(self.claimed_level), "environment": dict(self.environment),
                "name": self.name}

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
            name = info.get("name", "")
            _check(isinstance(name, str) and len(name) <= 200, "its name is no short text")
            return cls(names[0], names[1], _capabilities(info.get("capabilities")),
                       FeatureLevel.parse(str(info.get("claimed_level"))),
                       info["asks_unsupported"], dict(environment), sanitise(name))
        except (ValueError, KeyError, TypeError) as exc:
            raise WorkerError(f"the worker described its backend in a form the harness cannot "
                              f"read ({exc})") from None


