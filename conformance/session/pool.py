"""One worker process running the backend, driven from the calling thread (Pool): each case is
run and judged here, each call of the backend a request to the worker
(conformance.session.workers: isolated runs).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.casefile import Case
from conformance.levels import FeatureLevel
from conformance.results import Result, Status
from conformance.session.case_run import new_result, run_case
from conformance.session.execution import Execution
from conformance.session.remote import Claims, WorkerError
from conformance.session.worker_handle import EXIT_GRACE_S, Worker, WorkerLost

#: Workers (or judge processes) lost in a row without a case finished in between (dying while
#: they start, or between cases) before the run is abandoned.
MAX_FAILED_STARTS = 3


@dataclass
class _Slot:
    """The place of the pool's worker: the worker running its cases, and the one started to
    take over from it when --cases-per-worker retires it (it builds the backend meanwhile)."""

    worker: Worker | None = None
    spare: Worker | None = None


class Pool:
    """One worker process running the backend, driven from the calling thread: each case is run
    and judged here (case_run.run_case), each call of the backend a request to the worker."""

    def __init__(self, backend: str, level: FeatureLevel | None, execution: Execution) -> None:
        self.backend, self.level, self.execution = backend, level, execution
        self.folder = tempfile.TemporaryDirectory(prefix="dmlconf-workers-")
        self.started = 0
        self.failed_starts = 0  # workers lost in a row, no case finished in between
        self.claims: Claims | None = None
        self.slot = _Slot()

    def _spawn(self) -> Worker:
        """Start a worker, with the thread-pool variables in its environment, in the sandbox
        where the execution has one."""
        self.started += 1
        return Worker(Path(self.folder.name), self.started, self.backend, self.level,
                      self.execution.memory_cap, self.execution.execution_flags,
                      self.execution.thread_environment, self.execution.sandbox)

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
                how, _ = worker.ended()
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
            result = new_result(case, Status.TIMEOUT, (
                f"the case ran past the per-case timeout of {self.execution.timeout_s:g} s "
                f"(--timeout){after}"))
            crash["signal"] = "SIGKILL"
        elif lost.how == "died":
            how, crash["signal"] = worker.ended()
            result = new_result(case, Status.ERROR, (
                f"the backend crashed: its worker process {how} while running the case; the "
                f"run went on with a new worker"))
        elif lost.how == "channel":
            result = new_result(case, Status.ERROR, (
                "the backend's worker closed its channel to the harness while running the case "
                f"(did the backend close file descriptors it does not own?){after}"))
        elif lost.how == "broken":
            result = new_result(case, Status.ERROR, f"{lost.detail}{after}")
        else:
            result = new_result(case, Status.ERROR, (
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


