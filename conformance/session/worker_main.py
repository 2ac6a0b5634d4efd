"""A worker process's life (conformance.session.remote): a session and process group of its own,
its channel and log on fds of their own, the backend built, then one answer per request of the
harness. Worker (conformance.session.worker_handle) starts it as a fresh interpreter (in the
sandbox where there is one: conformance.session.sandbox) running BOOTSTRAP, which hands main()
its settings; the channel, the log and the arena are descriptors it inherits, never paths.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import socket
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from conformance.backend import (
    Backend,
    BackendLoadError,
    DescRejected,
    environment_of,
    load_backend,
)
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.session.remote import TEXT_LIMIT, _Channel, _GoneError, _json, _Mapped

#: The fds a worker keeps its channel and log on: above the ones a backend is likely to touch.
HIGH_FD = 64


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
    """A worker's fds 0-2: 0 reads /dev/null, 1 and 2 append to the log. The log (the descriptor
    the worker inherits, kept with a spare copy) and /dev/null are kept open apart (high fds,
    which faulthandler also writes to) and put back on 0-2 after every call of the backend,
    remade from the spare or reopened if the backend closed or replaced them."""

    def __init__(self, log_fd: int) -> None:
        self.spare = _high(log_fd)
        self.log = self.null = -1
        self.log_id = self._id(self.spare)
        self._open()
        self.restore()
        sys.stdout = open(1, "w", buffering=1, closefd=False, errors="backslashreplace")
        sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")

    def _open(self) -> None:
        if self._id(self.spare) != self.log_id:  # the backend closed both copies: output is lost
            self.spare = _high(os.open(os.devnull, os.O_WRONLY))
            self.log_id = self._id(self.spare)
        self.log = _high(os.dup(self.spare))
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


#: What a worker's interpreter runs (`python -c BOOTSTRAP SETTINGS`): the harness's import path,
#: then main() with the settings (JSON: Worker in conformance.session.worker_handle writes them).
BOOTSTRAP = ("import json, sys; settings = json.loads(sys.argv[1]); "
             "sys.path[:] = settings['sys_path']; "
             "from conformance.session.worker_main import main; main(settings)")


def main(settings: Mapping[str, Any]) -> None:
    """A worker's entry point (BOOTSTRAP): the settings the harness gave it."""
    _worker(settings["channel_fd"], settings["backend"], settings["level"],
            settings["memory_cap"], settings["log_fd"], settings["arena_fd"],
            settings["execution_flags"])


def _worker(channel_fd: int, backend: str, level: str | None, memory_cap: int,
            log_fd: int, arena_fd: int, execution_flags: int = 0) -> None:
    """A worker's life: a session and process group of its own, its channel and log on fds of
    their own, the backend built, then one answer per request until None or the channel's end."""
    if hasattr(os, "setsid"):
        try:
            os.setsid()
        except OSError:  # already a session's leader (the harness or the sandbox made it one)
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the harness's to handle
    die_with_parent()
    channel = _Channel(socket.socket(fileno=_high(channel_fd)))
    arena_fd = _high(arena_fd)
    stdio = _Stdio(log_fd)
    try:
        built = load_backend(backend, FeatureLevel.parse(level) if level else None,
                             ExecutionFlags(execution_flags))
        cls = type(built)
        name = built.name if isinstance(built.name, str) else ""
        ready = {"class": f"{cls.__module__}.{cls.__qualname__}", "class_name": cls.__name__,
                 "name": name[:200],
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
    arena = _Mapped(arena_fd)
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


