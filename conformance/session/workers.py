"""Isolated runs: the backend in worker processes, the judge in the harness.

A worker process holds the backend and nothing else of a run (conformance.session.remote: it answers
requests for the backend's calls over a channel of its own, on buffers the harness owns). The
harness runs every case itself, runner.run_case with the worker as the runner's executor, so no
code of the backend runs where the guards, inputs and outputs are checked and judged:

    one worker (Pool):        harness thread: run_case, the judge --requests--> worker: backend
    N workers (ParallelPool): harness --cases--> judge process 1: Pool --requests--> worker 1
                                      <-results-  judge process N: Pool --requests--> worker N

With several workers each is driven by a judge process of the harness's own (harness code
only; never the backend's), so that the judging runs in parallel too; the judges receive cases
in chunks and send back Results (pickled: harness to harness). Results come back in the cases'
order, so a run with any number of workers gives the results of a serial run, apart from
timings.

What becomes of a case whose worker fails, after which a fresh worker replaces the lost one and
the run goes on:
- the worker dies (a segfault, an abort, an exit, the kernel's out-of-memory killer): ERROR,
  with the exit code or signal and the worker's output since the case began (Result.crash);
- the case runs past the per-case timeout: TIMEOUT; the worker is killed;
- the worker closes its channel or answers what the harness cannot trust: ERROR; it is killed;
- the backend raises MemoryError: ERROR, as any exception from the backend is; the worker is
  retired. On Linux each worker's data segment is capped (RLIMIT_DATA) at its size once the
  backend is built plus the memory cap, so an allocation without bound ends in MemoryError
  rather than in the out-of-memory killer.
A worker is killed with its whole process group (whatever the backend forked) whenever it ends.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import tempfile
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from conformance.backend import Backend, BackendLoadError, environment_of, load_backend
from conformance.casefile import Case
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.results import Result
from conformance.session.remote import (
    EXIT_GRACE_S,
    Claims,
    Worker,
    WorkerError,
    WorkerLost,
    data_segment_bytes,
    describe_exit,
    die_with_parent,
)
from conformance.session.runner import new_result, run_case, run_cases

__all__ = ["DEFAULT_TIMEOUT_S", "CaseRunner", "Execution", "ParallelPool", "Pool", "WorkerError",
           "available_cpus", "data_segment_bytes", "describe_exit", "timeout_option"]

#: Seconds a case may run in an isolated worker before it is a TIMEOUT (--timeout).
DEFAULT_TIMEOUT_S = 120.0
#: The thread-pool sizes of the common native libraries. With several workers, each worker's
#: pools get the CPUs divided by the workers (unless set by the user): idle pool threads that
#: spin (OpenBLAS, OpenMP) otherwise take the CPUs the other workers need; measured on a
#: 2-core machine, two workers each with two spinning OpenBLAS threads ran every case 3x slower.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
#: Workers (or judge processes) lost in a row without a case finished in between (dying while
#: they start, or between cases) before the run is abandoned.
MAX_FAILED_STARTS = 3
#: The most cases sent to a judge process at once (fewer near the end of a run, for balance).
CHUNK = 32
#: A judge process sends the results it has when its chunk is done or this many seconds after
#: its last send: one message per few cases rather than per case.
SEND_EVERY_S = 0.05


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
    def tamper_proof(self) -> bool:
        """Whether the judge runs out of the backend's reach: only isolated, where the backend
        runs in worker processes and the judge in the harness."""
        return self.isolated

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
                "tamper_proof": self.tamper_proof,
                "timeout_s": self.timeout_s if self.isolated else None,
                "memory_cap_bytes": self.memory_cap,
                "cases_per_worker": self.cases_per_worker if self.isolated else None,
                "thread_environment": self.thread_environment,
                "execution_flags": self.execution_flags.names}


# -- one worker, driven from this thread ----------------------------------------------------------
@dataclass
class _Slot:
    """The place of the pool's worker: the worker running its cases, and the one started to
    take over from it when --cases-per-worker retires it (it builds the backend meanwhile)."""

    worker: Worker | None = None
    spare: Worker | None = None


class Pool:
    """One worker process running the backend, driven from the calling thread: each case is run
    and judged here (runner.run_case), each call of the backend a request to the worker."""

    def __init__(self, backend: str, level: FeatureLevel | None, execution: Execution) -> None:
        self.backend, self.level, self.execution = backend, level, execution
        self.context = multiprocessing.get_context("spawn")
        self.folder = tempfile.TemporaryDirectory(prefix="dmlconf-workers-")
        self.started = 0
        self.failed_starts = 0  # workers lost in a row, no case finished in between
        self.claims: Claims | None = None
        self.slot = _Slot()

    def _spawn(self) -> Worker:
        """Start a worker; the thread-pool variables are its environment at its start."""
        self.started += 1
        saved = dict(os.environ)
        os.environ.update(self.execution.thread_environment)
        try:
            return Worker(self.context, Path(self.folder.name),
                          self.started, self.backend, self.level, self.execution.memory_cap,
                          self.execution.execution_flags)
        finally:
            os.environ.clear()
            os.environ.update(saved)

    def _lost_one(self, why: str) -> None:
        self.failed_starts += 1
        if self.failed_starts >= MAX_FAILED_STARTS:
            raise WorkerError(why)

    def _ready_worker(self) -> Worker:
        """The worker, ready to run a case: a fresh one where there is none, or where the last
        died, or said something unasked, between cases (nothing to blame on a case)."""
        slot = self.slot
        while True:
            worker = slot.worker
            if worker is not None and worker.remote is not None:
                if worker.alive() and not worker.channel.pending():
                    return worker
                output = worker.output_since(0)
                worker.kill()
                slot.worker = None
                how, _ = describe_exit(worker.process.exitcode)
                self._lost_one(f"worker processes keep dying between cases (the last {how}); "
                               f"its output:\n{output}")
                continue
            if worker is None:
                worker = slot.worker = slot.spare or self._spawn()
                slot.spare = None
            try:
                claims = worker.wait_ready()
            except WorkerError as exc:
                slot.worker = None
                if self.claims is None:  # no worker has ever built it: it cannot be built
                    raise
                self._lost_one(f"worker processes keep failing to start; the last: {exc}")
                continue
            self.claims = self.claims or claims
            return worker

    def launch(self) -> None:
        """Start the worker process without waiting for it (it imports and builds the backend
        while the harness goes on: Session.select starts it before building the cases)."""
        if self.slot.worker is None:
            self.slot.worker = self._spawn()

    def ready(self) -> dict[str, Any]:
        """Start the worker (unless launched) and wait until it has built the backend: what it
        says of it (class, capabilities, claimed level). WorkerError or BackendLoadError if it
        cannot."""
        self._ready_worker()
        assert self.claims is not None
        return self.claims.to_json()

    def run(self, cases: Sequence[Case],
            on_result: Callable[[Result], None] | None = None) -> list[Result]:
        """Every case's result, in the cases' order."""
        results = []
        for i, case in enumerate(cases):
            result = self.run_one(case, more=i + 1 < len(cases))
            results.append(result)
            if on_result:
                on_result(result)
        return results

    def run_one(self, case: Case, more: bool = False) -> Result:
        """The case's result. more: whether other cases follow (a worker retired after it by
        --cases-per-worker then has its successor built while it runs)."""
        try:
            return self._run_one(case, more)
        except BaseException:  # Ctrl-C, SIGTERM: the worker may be in the middle of a request
            self._kill_workers()
            raise

    def _run_one(self, case: Case, more: bool, again: str = "") -> Result:
        """again: why the case runs a second time (a leftover of an earlier case on its first
        worker), noted in its result."""
        worker = self._ready_worker()
        remote = worker.remote
        assert remote is not None
        per_worker = self.execution.cases_per_worker
        if per_worker and worker.ran + 1 == per_worker and more and self.slot.spare is None:
            self.slot.spare = self._spawn()  # builds the backend while this case runs
        started = time.monotonic()
        offset = worker.mark()
        timeout = self.execution.timeout_s
        remote.deadline = started + timeout if timeout else None
        worker.begin_case()
        try:
            result = run_case(case, remote, self.execution.memory_cap, remote,
                              self.execution.execution_flags)
        except WorkerLost as lost:
            worker.kill()
            self.slot.worker = None
            if lost.how == "leftover" and not again:
                # An earlier case's backend wrote to the channel after its answer (a forged
                # answer's real one, say): nothing of this case has been judged yet, so it
                # runs again, whole, on a fresh worker; a second time is its own doing.
                return self._run_one(case, more, f"the worker it first ran on was replaced "
                                                 f"before answering: {lost.detail}")
            return self._lost(case, worker, started, offset, lost)
        if again:
            result.info.append(f"ran a second time: {again} (left by an earlier case)")
        worker.ran += 1
        self.failed_starts = 0
        worker.arena.shrink()
        if remote.exhausted or worker.ran == per_worker:
            worker.close()
            self.slot.worker = None
        return result

    def _lost(self, case: Case, worker: Worker, started: float, offset: int,
              lost: WorkerLost) -> Result:
        """The result of a case whose worker was lost in it."""
        exitcode = worker.process.exitcode
        crash: dict[str, Any] = {"exit_code": exitcode, "signal": None,
                                 "output": worker.output_since(offset)}
        after = "; its worker was killed and the run went on with a new one"
        if lost.how == "timeout":
            result = new_result(case, "TIMEOUT", (
                f"the case ran past the per-case timeout of {self.execution.timeout_s:g} s "
                f"(--timeout){after}"))
            crash["signal"] = "SIGKILL"
        elif lost.how == "died":
            how, crash["signal"] = describe_exit(exitcode)
            result = new_result(case, "ERROR", (
                f"the backend crashed: its worker process {how} while running the case; the "
                f"run went on with a new worker"))
        elif lost.how == "channel":
            result = new_result(case, "ERROR", (
                "the backend's worker closed its channel to the harness while running the case "
                f"(did the backend close file descriptors it does not own?){after}"))
        elif lost.how == "broken":
            result = new_result(case, "ERROR", f"{lost.detail}{after}")
        else:
            result = new_result(case, "ERROR", (
                f"the backend's worker sent an answer the harness cannot trust ({lost.detail}) "
                f"while running the case{after}"))
        result.crash = crash
        result.duration_s = round(time.monotonic() - started, 6)
        return result

    def _kill_workers(self) -> None:
        for worker in (self.slot.worker, self.slot.spare):
            if worker is not None:
                worker.kill()
        self.slot = _Slot()

    def close(self, grace: float = EXIT_GRACE_S) -> None:
        """Ask the worker to exit and give it `grace` seconds (a backend may release a device as
        it exits); then kill its group, whatever it left running, and remove its files."""
        for worker in (self.slot.worker, self.slot.spare):
            if worker is not None:
                worker.close(grace)
        self.slot = _Slot()
        self.folder.cleanup()

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- several workers, each driven by a judge process of the harness -------------------------------
def _judge(conn: Connection, running: Any, backend: str, level: str | None,
           execution: Execution) -> None:
    """A judge process's life: a Pool of one worker, then the cases of each chunk received run
    through it until None, the results sent back in batches. Before each case it marks in
    `running` which case it runs, so that the harness knows it if this process dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the harness's to handle
    terminated = []

    def on_sigterm(signum: int, frame: object) -> None:
        terminated.append(signum)
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, on_sigterm)
    die_with_parent(signal.SIGTERM)  # and then kill the worker's group on the way out
    pool = Pool(backend, FeatureLevel.parse(level) if level else None, execution)
    try:
        try:
            conn.send(("ready", pool.ready()))
        except BackendLoadError as exc:
            conn.send(("failed", str(exc)))
            return
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
                running[0] = index
                done.append((index, pool.run_one(case, more=True)))
                running[0] = -1
                if k == len(chunk) - 1 or time.monotonic() - last_send > SEND_EVERY_S:
                    conn.send(("results", done))
                    done, last_send = [], time.monotonic()
    except WorkerError as exc:
        conn.send(("stopped", str(exc)))
    except Exception:
        conn.send(("broken", traceback.format_exc()))
    finally:
        pool.close(0.0 if terminated else EXIT_GRACE_S)


#: The judge processes alive in this process. They are not daemons (a daemon may not start
#: processes of its own), so multiprocessing would wait for them at exit: they are stopped
#: first, whatever ended the harness without closing its pool (atexit runs this before
#: multiprocessing's own exit function, registered earlier).
_LIVE_JUDGES: set[Any] = set()


@atexit.register
def _stop_live_judges() -> None:
    for process in list(_LIVE_JUDGES):
        if process.is_alive():
            process.terminate()
    for process in list(_LIVE_JUDGES):
        process.join(EXIT_GRACE_S + 1)
        if process.is_alive():
            process.kill()
    _LIVE_JUDGES.clear()


@dataclass
class _Judge:
    """A judge process as the harness holds it."""

    process: Any
    conn: Connection
    running: Any  # the index of the case it runs, -1 for none
    ready: bool = False
    queue: deque[int] = field(default_factory=deque)  # sent, no result received yet

    def stop(self, grace: float) -> None:
        """SIGTERM (it kills its worker's group on the way out), then SIGKILL after grace."""
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(grace)
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()
        _LIVE_JUDGES.discard(self.process)


class ParallelPool:
    """Several workers, each driven by a judge process of the harness (a Pool of one worker):
    the cases go to the judges in chunks, two in flight each, and their Results come back."""

    def __init__(self, backend: str, level: FeatureLevel | None, execution: Execution) -> None:
        self.backend, self.level, self.execution = backend, level, execution
        self.context = multiprocessing.get_context("spawn")
        self.judges: list[_Judge] = []
        self.started = 0
        self.failed_starts = 0
        self.info: dict[str, Any] | None = None

    def _start(self) -> _Judge:
        self.started += 1
        ours, theirs = self.context.Pipe(duplex=True)
        running = self.context.RawArray("i", [-1])
        process = self.context.Process(
            target=_judge, name=f"dmlconf-judge-{self.started}", daemon=False,
            args=(theirs, running, self.backend, str(self.level) if self.level else None,
                  replace(self.execution, workers=1)))
        saved = dict(os.environ)
        os.environ.update(self.execution.thread_environment)  # the judge's, and its worker's
        try:
            process.start()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        theirs.close()
        _LIVE_JUDGES.add(process)
        return _Judge(process, ours, running)

    def launch(self) -> None:
        """Start the judges (each starts its worker) without waiting for them."""
        while len(self.judges) < self.execution.workers:
            self.judges.append(self._start())

    def ready(self) -> dict[str, Any]:
        """Start the judges (unless launched); what the first worker ready says of the
        backend."""
        self.launch()
        while self.info is None:
            self._step(lambda i, r: None, [], deque())
        return self.info

    def run(self, cases: Sequence[Case],
            on_result: Callable[[Result], None] | None = None) -> list[Result]:
        """Every case's result, in the cases' order."""
        results: list[Result | None] = [None] * len(cases)
        todo = deque(range(len(cases)))
        left = len(cases)

        def finish(index: int, result: Result) -> None:
            nonlocal left
            results[index] = result
            left -= 1
            if on_result:
                on_result(result)

        try:
            while left:
                for judge in self.judges:
                    if judge.ready and todo:
                        self._feed(judge, todo, cases)
                self._step(finish, cases, todo)
        except BaseException:  # Ctrl-C, SIGTERM: what the judges run now is abandoned
            for judge in self.judges:
                judge.stop(EXIT_GRACE_S)
            self.judges = []
            raise
        return [r for r in results if r is not None]

    def _feed(self, judge: _Judge, todo: deque[int], cases: Sequence[Case]) -> None:
        """Send the judge a chunk when it has at most one chunk left to run."""
        chunk = max(1, min(CHUNK, len(todo) // (len(self.judges) * 8)))
        if len(judge.queue) > chunk:
            return
        indices = [todo.popleft() for _ in range(min(chunk, len(todo)))]
        judge.queue.extend(indices)
        try:
            # without the case's YAML text (`raw`): the runner does not read it
            judge.conn.send([(i, replace(cases[i], raw={})) for i in indices])
        except OSError:
            pass  # it has died: the next step sees it

    def _step(self, finish: Callable[[int, Result], None], cases: Sequence[Case],
              todo: deque[int]) -> None:
        """Wait for a message or a death, and deal with it."""
        wait([j.conn for j in self.judges] + [j.process.sentinel for j in self.judges])
        for i, judge in enumerate(self.judges):
            if self._receive(judge, finish) and judge.process.is_alive():
                continue
            judge.process.join(5)
            how, name = describe_exit(judge.process.exitcode)
            index = int(judge.running[0])
            again = [k for k in judge.queue if k != index]
            todo.extendleft(reversed(again))
            if index >= 0 and index in judge.queue:
                result = new_result(cases[index], "ERROR", (
                    f"the harness's judge process running the case {how}; the run went on "
                    "with a new one (the judge holds the case's buffers: out of memory?)"))
                result.crash = {"exit_code": judge.process.exitcode, "signal": name,
                                "output": ""}
                finish(index, result)
            else:  # while starting, or between cases: nothing to blame, but not for ever
                self.failed_starts += 1
                if self.info is None or self.failed_starts >= MAX_FAILED_STARTS:
                    judge.stop(0)
                    raise WorkerError(f"a judge process of the harness {how} (please report)")
            judge.stop(0)
            self.judges[i] = self._start()

    def _receive(self, judge: _Judge, finish: Callable[[int, Result], None]) -> bool:
        """Take the judge's messages; False when it has gone."""
        try:
            while judge.conn.poll():
                message = judge.conn.recv()
                if message[0] == "ready":
                    judge.ready = True
                    self.info = self.info or message[1]
                elif message[0] == "failed":
                    judge.stop(0)
                    raise BackendLoadError(message[1])
                elif message[0] == "stopped":
                    judge.stop(0)
                    raise WorkerError(message[1])
                elif message[0] == "broken":
                    judge.stop(0)
                    raise WorkerError(f"internal error in a judge process (please report):\n"
                                      f"{message[1]}")
                else:
                    for index, result in message[1]:
                        judge.queue.remove(index)
                        finish(index, result)
                    self.failed_starts = 0
        except (EOFError, OSError):
            return False
        return True

    def close(self) -> None:
        """Ask every judge to exit (each closes its worker, EXIT_GRACE_S for it to exit) and
        wait for them; stop those that do not."""
        for judge in self.judges:
            if judge.ready and not judge.queue:
                try:
                    judge.conn.send(None)
                except OSError:
                    pass
            else:
                judge.process.terminate()
        until = time.monotonic() + EXIT_GRACE_S + 1
        for judge in self.judges:
            judge.process.join(max(0.0, until - time.monotonic()))
            judge.stop(0)
        self.judges = []

    def __enter__(self) -> ParallelPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

def new_pool(backend: str, level: FeatureLevel | None, execution: Execution
             ) -> Pool | ParallelPool:
    """The worker pool of an isolated execution (a Pool for one worker, a ParallelPool for
    several), its processes not started yet (launch(), or ready() to wait for them too)."""
    return (Pool if execution.workers <= 1 else ParallelPool)(backend, level, execution)


class CaseRunner:
    """A backend built to run cases as an Execution says: in this process, or in worker
    processes (a Pool for one, a ParallelPool for several). A Session (conformance.session)
    builds one for its run: run_all() for a whole run, run() for one case at a time (the
    pytest plugin, dmlconf explore). What the backend says of itself: class_path, class_name,
    capabilities (as JSON), claimed_level, environment (Backend.environment; from a worker,
    checked like its capabilities)."""

    def __init__(self, backend: str, level: FeatureLevel | None, execution: Execution,
                 pool: Pool | ParallelPool | None = None) -> None:
        """pool: the pool new_pool() made and launched for this execution (its processes
        started early); None: made here."""
        self.execution = execution
        self.pool: Pool | ParallelPool | None = None
        self.backend: Backend | None = None
        if execution.isolated:
            self.pool = pool or new_pool(backend, level, execution)
            try:
                info = self.pool.ready()
            except BaseException:
                self.pool.close()
                raise
            self.class_path, self.class_name = info["class"], info["class_name"]
            self.capabilities = info["capabilities"]
            self.claimed_level = FeatureLevel.parse(info["claimed_level"])
            self.environment: dict[str, str] = info["environment"]
        else:
            self.backend = load_backend(backend, level, execution.execution_flags)
            cls = type(self.backend)
            self.class_path, self.class_name = f"{cls.__module__}.{cls.__qualname__}", cls.__name__
            self.capabilities = self.backend.capabilities.to_json()
            self.claimed_level = self.backend.claimed_level
            self.environment = environment_of(self.backend)

    @property
    def isolated(self) -> bool:
        return self.pool is not None

    @property
    def tamper_proof(self) -> bool:
        """Whether the judge is out of the backend's reach (the backend in worker processes)."""
        return self.isolated

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
