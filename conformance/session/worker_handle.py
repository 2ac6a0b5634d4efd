"""The harness's handle on a worker process (conformance.session.remote): Worker starts it,
asks it for the backend's calls and kills its whole process group when it ends; RemoteBackend
is the backend as the runner sees it in an isolated run, its calls requests to the worker.
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.backend import BackendLoadError, DescRejected
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.ops import OperatorCall
from conformance.session.bindings import BackendError, CaseError, _Binding
from conformance.session.remote import (
    ANSWER_LIMIT,
    Claims,
    WorkerError,
    _Arena,
    _Channel,
    _GarbledError,
    _GoneError,
    _parse_answer,
    _StaleError,
    _TimeoutError,
)
from conformance.session.sandbox import MemoryCgroup, Sandbox, backend_files, exit_code
from conformance.session.worker_main import BOOTSTRAP

#: Seconds a worker may take to start and build the backend (imports of large native
#: libraries, a GPU runtime's initialisation).
STARTUP_TIMEOUT_S = 300.0
#: The characters of a dead worker's output kept in its case's result.
OUTPUT_TAIL = 4000
#: Seconds a worker gets to exit when asked before its group is killed.
EXIT_GRACE_S = 2.0
#: A worker's log is emptied at the start of a case once it is this large (a backend that
#: floods its output costs disk, never the harness's memory: the log is read from its end).
LOG_LIMIT = 64 << 20


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


class WorkerLost(BaseException):
    """The worker cannot finish the case: it died, ran past the timeout, closed its channel
    or sent what the harness cannot trust ("leftover": what it sent unasked after an earlier
    case, which the case is not to blame for). A BaseException, so that no handler of the runner
    takes it for the backend's own exception: conformance.session.pool makes the case's
    result."""

    def __init__(self, how: str, detail: str = "") -> None:
        super().__init__(how, detail)
        self.how, self.detail = how, detail


class RemoteBackend:
    """The backend as the harness sees it in an isolated run: the claims its worker made, and
    its calls, each one request to the worker (bindings.Executor). The bindings cross in the
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


class WorkerProcess:
    """A worker's process (its interpreter, or the sandbox's first process where there is one),
    as the harness waits for and kills it."""

    def __init__(self, popen: subprocess.Popen[bytes], sandboxed: bool) -> None:
        self.popen, self.sandboxed, self.pid = popen, sandboxed, popen.pid

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def join(self, timeout: float | None = None) -> None:
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass

    @property
    def exitcode(self) -> int | None:
        """None while it runs; -signal where a signal killed it (in the sandbox too)."""
        code = self.popen.poll()
        return exit_code(code) if code is not None and self.sandboxed else code

    def kill(self) -> None:
        try:
            self.popen.kill()
        except ProcessLookupError:
            pass


class Worker:
    """One worker process, as the harness holds it: its channel, log, arena and group."""

    def __init__(self, folder: Path, number: int, backend: str, level: FeatureLevel | None,
                 memory_cap: int, flags: ExecutionFlags, environment: Mapping[str, str],
                 sandbox: Sandbox | None = None) -> None:
        """Start worker `number`, its log and arena in folder (the sandbox's where given), with
        the environment's variables added to the harness's; it builds the backend while the
        caller goes on (wait_ready). The worker inherits its channel, log and arena open; the
        harness reads the log through the descriptor it made it with, never by its path."""
        self.backend, self.flags, self.memory_cap = backend, flags, memory_cap
        self.log = folder / f"worker-{number}.log"
        self.log_fd = os.open(self.log, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        self.last_output: tuple[int, bytes] = (0, b"")  # the log's size and end once released
        self.arena = _Arena(folder / f"worker-{number}.arena")
        ours, theirs = socket.socketpair()
        theirs_log = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        theirs_arena = os.dup(self.arena.file.fileno())
        given = (theirs.fileno(), theirs_log, theirs_arena)
        settings = {"sys_path": sys.path, "backend": backend,
                    "level": str(level) if level else None, "memory_cap": memory_cap,
                    "execution_flags": int(flags), "channel_fd": given[0], "log_fd": given[1],
                    "arena_fd": given[2]}
        argv = [sys.executable, "-c", BOOTSTRAP, json.dumps(settings)]
        self.cgroup: MemoryCgroup | None = None
        self.cgroup_killed = False  # the kernel killed it for passing its cgroup's limit
        if sandbox is not None:
            self.cgroup = sandbox.memory_cgroup(f"dmlconf-{os.getpid()}-{folder.name}-{number}")
            argv = sandbox.command(argv, backend_files(backend), self.cgroup)
        try:
            self.process = WorkerProcess(subprocess.Popen(
                argv, pass_fds=given, env={**os.environ, **environment},
                stdin=subprocess.DEVNULL, stdout=theirs_log, stderr=theirs_log,
                start_new_session=True), sandbox is not None)
        finally:
            theirs.close()
            os.close(theirs_log)
            os.close(theirs_arena)
        self.pgid = self.process.pid  # the worker's own group (a new session)
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
            how, _ = self.ended()
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
        if self.cgroup is not None and self.memory_cap > 0:
            # what the built backend uses, and the cap for running cases, with room to spare:
            # private allocations end first at RLIMIT_DATA (a MemoryError, the case's ERROR);
            # the cgroup catches what that does not count (shared mappings, tmpfs files)
            spare = max(self.memory_cap // 8, 64 << 20)
            try:
                self.cgroup.limit(self.cgroup.usage() + self.memory_cap + spare)
            except (OSError, ValueError):
                pass  # left without a limit (RLIMIT_DATA still caps), removed with the worker
        return self.claims

    def ended(self) -> tuple[str, str | None]:
        """How the worker's process ended, in words, and the signal's name (describe_exit),
        naming the memory cap where the kernel killed it for passing its cgroup's limit."""
        how, name = describe_exit(self.process.exitcode)
        if name == "SIGKILL" and (self.cgroup_killed
                                  or (self.cgroup is not None and self.cgroup.killed())):
            how = (f"was killed by SIGKILL (signal 9): it passed its memory cap of "
                   f"{self.memory_cap:,} bytes beyond the built backend (--memory-cap, and an "
                   "eighth or 64 MiB to spare; the sandbox's memory cgroup, which counts shared "
                   "mappings too)")
        return how, name

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
            size = os.fstat(self.log_fd).st_size
            if size > LOG_LIMIT:
                os.ftruncate(self.log_fd, 0)
                size = 0
        except OSError:
            return 0
        return size

    def output_since(self, offset: int) -> str:
        """The log's end since offset, at most OUTPUT_TAIL characters, read through the
        harness's own descriptor: the file it made, whatever is at its path now."""
        if self.log_fd < 0:  # released: what the log ended with
            end, data = self.last_output
            data = data[max(0, offset - (end - len(data))):]
        else:
            try:
                end = os.fstat(self.log_fd).st_size
                start = max(offset, end - OUTPUT_TAIL * 4)
                data = os.pread(self.log_fd, OUTPUT_TAIL * 4, start) if end > start else b""
            except OSError:
                return ""
        return data.decode("utf-8", errors="replace")[-OUTPUT_TAIL:]

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
            self.process.join(grace)
        self.kill()

    def _release(self) -> None:
        with _GROUPS_LOCK:
            _GROUPS.discard(self.pgid)
        self.channel.close()
        self.arena.close()
        if self.log_fd >= 0:
            try:
                end = os.fstat(self.log_fd).st_size
                self.last_output = (end, os.pread(self.log_fd, OUTPUT_TAIL * 4,
                                                  max(0, end - OUTPUT_TAIL * 4)))
            except OSError:
                pass
            os.close(self.log_fd)
            self.log_fd = -1
        if self.cgroup is not None:
            self.cgroup_killed = self.cgroup.killed()
            self.cgroup.remove()
            self.cgroup = None


