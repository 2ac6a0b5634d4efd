"""Cases run in worker processes: isolation from a backend that crashes, hangs or exhausts
memory, and parallel runs.

Each worker is a fresh Python process (the "spawn" start method: nothing inherited from the
harness, safe with threaded native libraries, the same on Linux, macOS and Windows). It builds
the backend once, then runs the cases it is sent one at a time with runner.run_case, and sends
each Result back. Its stdout and stderr (native code's output included) go to a log file, and
Python's faulthandler writes the stack of a fatal signal there.

What becomes of a case whose worker fails, after which a fresh worker replaces the lost one and
the run goes on:
- the worker dies (a segfault, an abort, an exit, the kernel's out-of-memory killer): ERROR,
  with the exit code or signal and the worker's output since the case began (Result.crash);
- the case runs past the per-case timeout: TIMEOUT; the worker is killed;
- the backend raises MemoryError: ERROR, as any exception from the backend is; the worker is
  retired. On Linux each worker's data segment is capped (RLIMIT_DATA) at its size once the
  backend is built plus the memory cap, so an allocation without bound ends in MemoryError
  rather than in the out-of-memory killer.

Results come back in the cases' order whatever the order they finish in, so a run with any
number of workers gives the results of a serial run, apart from timings.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import signal
import sys
import tempfile
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from backends import Backend, BackendLoadError, backend_class, load_backend
from conformance.casefile import Case
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.results import Result
from conformance.runner import default_memory_cap, new_result, run_case, run_cases

#: Seconds a case may run in an isolated worker before it is a TIMEOUT (--timeout).
DEFAULT_TIMEOUT_S = 120.0
#: Seconds a worker may take to start and build the backend (imports of large native
#: libraries, a GPU runtime's initialisation).
STARTUP_TIMEOUT_S = 300.0
#: The characters of a dead worker's output kept in its case's result.
OUTPUT_TAIL = 4000
#: Seconds the workers get to exit at the end of a run before they are killed.
EXIT_GRACE_S = 2.0
#: Seconds between looks at a busy worker's marker (its running case may reach the timeout).
POLL_S = 0.5
#: The most cases sent to a worker at once (fewer near the end of a run, for balance).
CHUNK = 32
#: The thread-pool sizes of the common native libraries. With several workers, each worker's
#: pools get the CPUs divided by the workers (unless set by the user): idle pool threads that
#: spin (OpenBLAS, OpenMP) otherwise take the CPUs the other workers need; measured on a
#: 2-core machine, two workers each with two spinning OpenBLAS threads ran every case 3x slower.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
#: Workers that die before they are ready, in a row, before the run is abandoned.
MAX_FAILED_STARTS = 3


def available_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def timeout_option(seconds: float | None) -> float | None:
    """The per-case timeout a --timeout option asks for: the default when not given, none
    for 0."""
    return DEFAULT_TIMEOUT_S if seconds is None else seconds or None


class WorkerError(Exception):
    """The workers cannot run the backend at all (it fails to build, or every worker dies
    while starting): the run stops with this message."""


@dataclass(frozen=True)
class Execution:
    """How a run executes its cases: in this process (isolated False, workers 1) or in
    `workers` worker processes; timeout_s (None: none) and memory_cap (bytes per process);
    cases_per_worker: a worker is replaced after that many cases (None: never; 1: every case in
    a fresh process, so that no case can see what an earlier one left in the backend's memory)."""

    workers: int = 1
    isolated: bool = False
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    memory_cap: int = 0
    cases_per_worker: int | None = None
    cpus: int = field(default_factory=available_cpus)
    #: The DML_EXECUTION_FLAGS the backend compiles with and the judge allows for
    #: (`--execution-flags`; conformance.flags).
    execution_flags: ExecutionFlags = ExecutionFlags.NONE

    @property
    def thread_environment(self) -> dict[str, str]:
        """The thread-pool variables the workers get (THREAD_VARIABLES): none for one worker
        or where the user set them."""
        if not self.isolated or self.workers < 2:
            return {}
        threads = str(max(1, self.cpus // self.workers))
        return {v: threads for v in THREAD_VARIABLES if v not in os.environ}

    def to_json(self) -> dict[str, Any]:
        return {"workers": self.workers, "isolated": self.isolated,
                "timeout_s": self.timeout_s if self.isolated else None,
                "memory_cap_bytes": self.memory_cap,
                "cases_per_worker": self.cases_per_worker if self.isolated else None,
                "thread_environment": self.thread_environment,
                "execution_flags": self.execution_flags.names}


# -- the worker process ---------------------------------------------------------------------------
class _Watched:
    """The backend, seen through a proxy that notes a MemoryError from it (the worker is then
    retired: what it holds after the error is unknown)."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self.exhausted = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def create_operator(self, *args: Any) -> Any:
        return self._watch(self._backend.create_operator, *args)

    def execute(self, *args: Any) -> Any:
        return self._watch(self._backend.execute, *args)

    def _watch(self, method: Callable[..., Any], *args: Any) -> Any:
        try:
            return method(*args)
        except MemoryError:
            self.exhausted = True
            raise


def _redirect_output(log_path: str) -> None:
    """Send this process's stdout and stderr, at the file descriptor level (native code's
    writes included), to the log."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="backslashreplace")
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")


def _die_with_parent() -> None:
    """Linux: the kernel kills this worker when the harness process dies (a worker hung in
    native code would otherwise outlive a killed run)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
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
    private writable mappings, not the address space a GPU runtime reserves). The limit set,
    or None where it cannot be set."""
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


#: The fields of a worker's shared marker (RUNNING): the index of the case it runs (-1: none),
#: when it started it (time.monotonic, the same clock in every process), and where the case's
#: output starts in the worker's log.
CASE, STARTED, LOG_OFFSET = range(3)
#: A worker sends the results it has when its chunk is done or this many seconds after its
#: last send: one message per few cases rather than per case.
SEND_EVERY_S = 0.05


def _worker(conn: Connection, running: Any, backend: str, level: str | None,
            memory_cap: int, log_path: str, cases_per_worker: int | None = None,
            execution_flags: int = 0) -> None:
    """A worker's life: build the backend, then run each chunk of (index, case) received until
    None, or until it has run cases_per_worker cases. Before each case it marks in `running`
    which case it runs, since when and where its output starts, so that the harness knows them
    if the worker dies or hangs in the case."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the harness's to handle
    _die_with_parent()
    _redirect_output(log_path)
    faulthandler.enable(all_threads=True)
    try:
        built = load_backend(backend, FeatureLevel.parse(level) if level else None,
                             ExecutionFlags(execution_flags))
    except BackendLoadError as exc:
        conn.send(("failed", str(exc)))
        return
    except BaseException as exc:
        conn.send(("failed", f"building backend {backend} failed: {exc!r}"))
        return
    cls = type(built)
    conn.send(("ready", {"class": f"{cls.__module__}.{cls.__qualname__}",
                         "class_name": cls.__name__,
                         "capabilities": built.capabilities.to_json(),
                         "claimed_level": str(built.claimed_level),
                         "data_limit": _cap_memory(memory_cap)}))
    watched = _Watched(built)
    ran = 0
    try:
        while True:
            try:
                chunk = conn.recv()
            except (EOFError, OSError):
                return
            if chunk is None:
                return
            done: list[tuple[int, Result]] = []
            last_send = time.monotonic()
            for k, (index, case) in enumerate(chunk):
                sys.stdout.flush()
                sys.stderr.flush()
                running[LOG_OFFSET] = os.fstat(1).st_size
                running[STARTED] = time.monotonic()
                running[CASE] = index
                result = run_case(case, watched, memory_cap)  # type: ignore[arg-type]
                running[CASE] = -1
                done.append((index, result))
                ran += 1
                retire = watched.exhausted or ran == cases_per_worker
                if retire or k == len(chunk) - 1 or time.monotonic() - last_send > SEND_EVERY_S:
                    conn.send(("results", done, retire))
                    done, last_send = [], time.monotonic()
                if retire:
                    return
    except Exception:  # the harness's own fault (run_case turns the backend's into results)
        conn.send(("broken", traceback.format_exc()))


# -- the harness side -----------------------------------------------------------------------------
@dataclass
class _Slot:
    """One worker process and what it is doing."""

    process: Any
    conn: Connection
    log: Path
    running: Any  # the worker's shared marker: CASE, STARTED, LOG_OFFSET
    state: str = "starting"  # starting, idle, busy
    queue: deque[int] = field(default_factory=deque)  # sent, no result received yet
    since: float = field(default_factory=time.monotonic)  # when it started (to be ready)

    def case(self) -> tuple[int, float, int] | None:
        """(index, start, log offset) of the case the worker runs now, or None."""
        index = int(self.running[CASE])  # read first: its start was written before it
        if index < 0:
            return None
        return index, self.running[STARTED], int(self.running[LOG_OFFSET])

    def output_since(self, offset: int) -> str:
        try:
            with open(self.log, "rb") as f:
                f.seek(max(offset, f.seek(0, os.SEEK_END) - OUTPUT_TAIL * 4))
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return text[-OUTPUT_TAIL:]

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


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


class Pool:
    """Worker processes running one backend; run() feeds them cases."""

    def __init__(self, backend: str, level: FeatureLevel | None, execution: Execution) -> None:
        self.backend, self.level, self.execution = backend, level, execution
        self.context = multiprocessing.get_context("spawn")
        self.folder = tempfile.TemporaryDirectory(prefix="dmlconf-workers-")
        self.started = 0
        self.failed_starts = 0  # in a row
        self.info: dict[str, Any] | None = None
        self.slots: list[_Slot] = []
        self.cases: Sequence[Case] = ()

    def _start(self) -> _Slot:
        self.started += 1
        log = Path(self.folder.name) / f"worker-{self.started}.log"
        log.touch()
        ours, theirs = self.context.Pipe(duplex=True)
        running = self.context.RawArray("d", [-1.0, 0.0, 0.0])
        process = self.context.Process(
            target=_worker, name=f"dmlconf-worker-{self.started}", daemon=True,
            args=(theirs, running, self.backend, str(self.level) if self.level else None,
                  self.execution.memory_cap, str(log), self.execution.cases_per_worker,
                  int(self.execution.execution_flags)))
        saved = dict(os.environ)
        os.environ.update(self.execution.thread_environment)  # the child's, at its start
        try:
            process.start()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        theirs.close()
        return _Slot(process, ours, log, running)

    def start(self, count: int) -> None:
        """Have count workers (started together: their starts overlap)."""
        while len(self.slots) < max(count, 1):
            self.slots.append(self._start())

    def ready(self) -> dict[str, Any]:
        """Wait until a worker has built the backend: what it reports (class, capabilities,
        claimed level). WorkerError or BackendLoadError if none can."""
        self.start(self.execution.workers)
        while self.info is None:
            self._step(lambda i, r: None, [], deque())
        return self.info

    def run(self, cases: Sequence[Case],
            on_result: Callable[[Result], None] | None = None) -> list[Result]:
        """Every case's result, in the cases' order. Each worker is sent cases in chunks (two
        chunks in flight, so that it never waits for the next) and sends its results back in
        batches; the case it runs at any moment is in its shared marker (Slot.case)."""
        results: list[Result | None] = [None] * len(cases)
        todo = deque(range(len(cases)))
        left = len(cases)

        def finish(index: int, result: Result) -> None:
            nonlocal left
            results[index] = result
            left -= 1
            if on_result:
                on_result(result)

        self.cases = cases
        self.start(min(self.execution.workers, len(cases)))
        while left:
            for slot in self.slots:
                if slot.state in ("idle", "busy") and todo:
                    self._feed(slot, todo)
            self._step(finish, cases, todo)
        return [r for r in results if r is not None]

    def _feed(self, slot: _Slot, todo: deque[int]) -> None:
        """Send the slot a chunk when it has at most one chunk left to run."""
        chunk = max(1, min(CHUNK, len(todo) // (max(len(self.slots), 1) * 8),
                           self.execution.cases_per_worker or CHUNK))
        if len(slot.queue) > chunk:
            return
        indices = [todo.popleft() for _ in range(min(chunk, len(todo)))]
        slot.state = "busy"
        slot.queue.extend(indices)
        try:
            # without the case's YAML text (`raw`): the runner does not read it; it is 60% of
            # a case's pickle
            slot.conn.send([(i, replace(self.cases[i], raw={})) for i in indices])
        except OSError:
            pass  # the worker has died: the next step sees it and reports the case

    def _deadline(self, slot: _Slot) -> float | None:
        if slot.state == "starting":
            return slot.since + STARTUP_TIMEOUT_S
        running = slot.case() if slot.state == "busy" else None
        if running and self.execution.timeout_s:
            return running[1] + self.execution.timeout_s
        return None

    def _step(self, finish: Callable[[int, Result], None], cases: Sequence[Case],
              todo: deque[int]) -> None:
        """Wait for a message, a death or a deadline, and deal with it."""
        deadlines = [d for d in map(self._deadline, self.slots) if d is not None]
        if self.execution.timeout_s and any(s.state == "busy" for s in self.slots):
            # a busy worker may start a case at any moment: look at its marker again soon
            deadlines.append(time.monotonic() + POLL_S)
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
        wait([s.conn for s in self.slots] + [s.process.sentinel for s in self.slots], timeout)
        for i, slot in enumerate(self.slots):
            alive = self._receive(slot, finish, todo)
            if alive and slot.process.is_alive():
                deadline = self._deadline(slot)
                if deadline is None or time.monotonic() < deadline:
                    continue
                if slot.state == "starting":
                    slot.stop()
                    raise WorkerError(f"a worker took more than {STARTUP_TIMEOUT_S:.0f} s to "
                                      f"build backend {self.backend}; its output:\n"
                                      f"{slot.output_since(0)}")
                running = slot.case()
                slot.stop()
                self._lose(slot, running, cases, todo, finish, timed_out=True)
            elif slot.state == "busy":
                running = slot.case()
                slot.process.join(5)
                self._lose(slot, running, cases, todo, finish, timed_out=False)
                slot.stop()
            elif slot.state == "starting":
                slot.process.join(5)
                how, _ = describe_exit(slot.process.exitcode)
                self.failed_starts += 1
                if self.info is None or self.failed_starts >= MAX_FAILED_STARTS:
                    raise WorkerError(f"the worker process {how} while building backend "
                                      f"{self.backend}; its output:\n{slot.output_since(0)}")
                slot.stop()
            else:
                slot.stop()  # idle or retired (after a MemoryError), and gone
            self.slots[i] = self._start()

    def _lose(self, slot: _Slot, running: tuple[int, float, int] | None,
              cases: Sequence[Case], todo: deque[int], finish: Callable[[int, Result], None],
              timed_out: bool) -> None:
        """The slot's worker is gone: the case it was running gets the result that says how;
        the others it was sent and did not report (not run, or run but not yet sent) go back
        to the front of the queue, to run again in another worker."""
        again = [i for i in slot.queue if not running or i != running[0]]
        slot.queue.clear()
        todo.extendleft(reversed(again))
        if running is None:  # gone between cases: nothing to blame, but not for ever
            self.failed_starts += 1
            if self.failed_starts >= MAX_FAILED_STARTS:
                how, _ = describe_exit(slot.process.exitcode)
                raise WorkerError(f"worker processes keep dying between cases (the last "
                                  f"{how}); its output:\n{slot.output_since(0)}")
            return
        index, started, offset = running
        finish(index, self._lost(cases[index], slot, started, offset, timed_out))

    def _receive(self, slot: _Slot, finish: Callable[[int, Result], None],
                 todo: deque[int]) -> bool:
        """Take the slot's messages; False when its worker has gone (or must go)."""
        try:
            while slot.conn.poll():
                message = slot.conn.recv()
                if message[0] == "ready":
                    slot.state = "idle"
                    self.failed_starts = 0
                    self.info = self.info or message[1]
                elif message[0] == "failed":
                    slot.stop()
                    raise BackendLoadError(message[1])
                elif message[0] == "broken":
                    slot.stop()
                    raise WorkerError(f"internal error in a worker process (please report):\n"
                                      f"{message[1]}")
                elif message[0] == "results":
                    _, done, retire = message
                    for index, result in done:
                        slot.queue.remove(index)
                        finish(index, result)
                    self.failed_starts = 0
                    if not slot.queue:
                        slot.state = "idle"
                    if retire:  # it exits (a MemoryError, or its cases are done): what it
                        # was sent and did not run goes to the others
                        todo.extendleft(reversed(slot.queue))
                        slot.queue.clear()
                        slot.state = "retired"
                        slot.process.join(5)
                        return False
        except (EOFError, OSError):
            return False
        return True

    def _lost(self, case: Case, slot: _Slot, started: float, offset: int,
              timed_out: bool) -> Result:
        """The result of a case whose worker died or was killed in it."""
        output = slot.output_since(offset)
        if timed_out:
            result = new_result(case, "TIMEOUT", (
                f"the case ran past the per-case timeout of {self.execution.timeout_s:g} s "
                f"(--timeout); its worker was killed and the run went on with a new one"))
            result.crash = {"exit_code": slot.process.exitcode, "signal": "SIGKILL",
                            "output": output}
        else:
            how, name = describe_exit(slot.process.exitcode)
            result = new_result(case, "ERROR", (
                f"the backend crashed: its worker process {how} while running the case; the "
                f"run went on with a new worker"))
            result.crash = {"exit_code": slot.process.exitcode, "signal": name,
                            "output": output}
        result.duration_s = round(time.monotonic() - started, 6)
        return result

    def close(self) -> None:
        """Stop every worker and remove the logs. Idle workers are asked to exit and given
        EXIT_GRACE_S together (a backend may release a device as it exits); a busy or hung one,
        or one slow to exit, is killed."""
        for slot in self.slots:
            if slot.process.is_alive() and slot.state == "idle":
                try:
                    slot.conn.send(None)
                except OSError:
                    pass
        until = time.monotonic() + EXIT_GRACE_S
        for slot in self.slots:
            if slot.state == "idle":
                slot.process.join(max(0.0, until - time.monotonic()))
            slot.stop()
        self.slots = []
        self.folder.cleanup()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CaseRunner:
    """A backend built to run cases as an Execution says: in this process, or in the worker
    processes of a Pool. dmlconf run runs all its cases through one; the pytest plugin and
    dmlconf explore, which have one case at a time, through one_at_a_time(). What the backend
    says of itself: class_path, class_name, capabilities (as JSON), claimed_level."""

    def __init__(self, backend: str, level: FeatureLevel | None, execution: Execution) -> None:
        self.execution = execution
        self.pool: Pool | None = None
        self.backend: Backend | None = None
        if execution.isolated:
            self.pool = Pool(backend, level, execution)
            try:
                info = self.pool.ready()
            except BaseException:
                self.pool.close()
                raise
            self.class_path, self.class_name = info["class"], info["class_name"]
            self.capabilities = info["capabilities"]
            self.claimed_level = FeatureLevel.parse(info["claimed_level"])
        else:
            self.backend = load_backend(backend, level, execution.execution_flags)
            cls = type(self.backend)
            self.class_path, self.class_name = f"{cls.__module__}.{cls.__qualname__}", cls.__name__
            self.capabilities = self.backend.capabilities.to_json()
            self.claimed_level = self.backend.claimed_level

    @classmethod
    def one_at_a_time(cls, backend: str, level: FeatureLevel | None = None,
                      isolate: bool | None = None, timeout_s: float | None = DEFAULT_TIMEOUT_S,
                      execution_flags: ExecutionFlags = ExecutionFlags.NONE) -> CaseRunner:
        """For one case at a time: in-process, or in one worker (isolate None: when the
        backend declares itself native, as dmlconf run decides)."""
        isolated = backend_class(backend).native if isolate is None else isolate
        return cls(backend, level, Execution(workers=1, isolated=isolated, timeout_s=timeout_s,
                                             memory_cap=default_memory_cap(),
                                             execution_flags=execution_flags))

    @property
    def isolated(self) -> bool:
        return self.pool is not None

    def run(self, case: Case) -> Result:
        if self.pool is not None:
            return self.pool.run([case])[0]
        assert self.backend is not None
        return run_case(case, self.backend, self.execution.memory_cap)

    def run_all(self, cases: Sequence[Case],
                on_result: Callable[[Result], None] | None = None) -> list[Result]:
        """Every case's result, in the cases' order."""
        if self.pool is not None:
            return self.pool.run(cases, on_result)
        assert self.backend is not None
        return run_cases(cases, self.backend, on_result, memory_cap=self.execution.memory_cap)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()

    def __enter__(self) -> CaseRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
