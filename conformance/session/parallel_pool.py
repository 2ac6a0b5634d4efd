"""Several worker processes, each driven by a judge process of the harness (ParallelPool): the
cases go to the judges in chunks and their Results come back in the cases' order
(conformance.session.workers: isolated runs).
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from typing import Any

from conformance.backend import BackendLoadError
from conformance.casefile import Case, cache
from conformance.levels import FeatureLevel
from conformance.results import Result, Status
from conformance.session.case_run import new_result
from conformance.session.execution import Execution
from conformance.session.pool import MAX_FAILED_STARTS, Pool
from conformance.session.remote import WorkerError
from conformance.session.worker_handle import EXIT_GRACE_S, describe_exit
from conformance.session.worker_main import die_with_parent

#: The most cases sent to a judge process at once (fewer near the end of a run, for balance).
CHUNK = 32
#: A judge process sends the results it has when its chunk is done or this many seconds after
#: its last send: one message per few cases rather than per case.
SEND_EVERY_S = 0.05


def _judge(conn: Connection, running: Any, backend: str, level: str | None,
           execution: Execution, believe_caches: bool) -> None:
    """A judge process's life: a Pool of one worker, then the cases of each chunk received run
    through it until None, the results sent back in batches. Before each case it marks in
    `running` which case it runs, so that the harness knows it if this process dies.
    believe_caches: False where the harness that started it believes no cache entry (a
    certification: casefile.cache.fresh()); a judge process is started afresh and would
    otherwise read the caches a backend's user can write."""
    with nullcontext() if believe_caches else cache.fresh():
        _judge_cases(conn, running, backend, level, execution)


def _judge_cases(conn: Connection, running: Any, backend: str, level: str | None,
                 execution: Execution) -> None:
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

    def __init__(self, backend: str, level: FeatureLevel | None, execution: Execution,
                 believe_caches: bool = True) -> None:
        """believe_caches: False for a certification, whose judge processes then read no
        cache entry (casefile.cache.fresh(), in each judge process for its whole life)."""
        self.backend, self.level, self.execution = backend, level, execution
        self.believe_caches = believe_caches
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
                  replace(self.execution, workers=1), self.believe_caches))
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
                result = new_result(cases[index], Status.ERROR, (
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

